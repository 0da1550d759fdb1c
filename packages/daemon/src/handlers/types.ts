import type { OpArgs, OpName, OpResult } from '@xlurm/protocol';
import type { Caller, Core } from '../core';

/** Where a streaming handler writes its frames; resolves once the socket drained. */
export interface StreamOut {
  send(msg: object, raw?: Buffer): Promise<void>;
  /** True once the client went away. */
  readonly closed: boolean;
  /** Resolves when the client goes away. */
  readonly gone: Promise<void>;
}

export interface Ctx {
  core: Core;
  caller: Caller;
  /** Ask the daemon to exit after the reply was written. */
  shutdownAfterReply(): void;
  /** Connection slots held per user, largest first (docs/behaviour.md §28.3); absent outside a server. */
  connections?(): Array<{ user: string; count: number }>;
}

/** A handler's reply: a result, a result once it is durable, or a stream that the server drives. */
export type Reply<K extends OpName> = OpResult<K> | Promise<OpResult<K>> | { stream: (out: StreamOut) => Promise<void> };

export type Handler<K extends OpName> = (ctx: Ctx, args: OpArgs<K>) => Reply<K>;
export type Handlers = { [K in OpName]: Handler<K> };
