/**
 * Talking to the daemon: one Unix-socket connection per request. A request is
 * one frame `{v, op, args}`; a reply is one frame `{v, ok, result|error}`,
 * except for the streaming ops (`log`, `follow`), which reply with event
 * frames until `end`. Before anything is sent the peer's SO_PEERCRED uid must
 * be the owner of $XLURM_HOME, so a socket planted by someone else is never
 * trusted with a job's environment.
 *
 * One-shot requests go through the native addon (unixConnect/unixExchange, on the event loop,
 * so a fake daemon in the same process still answers): node:net and its streams are then never
 * loaded by the request. Streams, and clients without a built addon, use node:net.
 */
import * as fs from 'node:fs';
import type * as net from 'node:net';
import type { Frame, Job, OpArgs, OpName, OpResult } from '@xlurm/protocol';
import {
  FrameDecoder, FrameSyntax, FrameTooLarge, MAX_RESPONSE_BYTES, PROTOCOL_VERSION, VERSION, resolveHome, statePaths,
} from '@xlurm/protocol';
import { CliError, osErrorText } from './errors';
import { sleep } from './sleep';

/**
 * No daemon answers: what to do depends on who asks. Root can start it
 * itself; anyone else needs the administrator (a new root user was told to
 * ask the administrator, i.e. themselves).
 */
export function notRunningMessage(reason: string, euid: number = process.geteuid?.() ?? -1): string {
  return euid === 0
    ? `xlurm is not running; start it with \`xlurm start\`: ${reason}`
    : `xlurm is not running; ask the administrator to run \`sudo xlurm start\`: ${reason}`;
}

/** The socket could not be connected (daemon not running, or going away). */
export class ConnectError extends CliError {}
/** The connection ended before a complete reply or the end of a stream. */
export class ConnectionClosed extends CliError {
  constructor() { super('connection closed before complete message'); }
}

export interface ClientOptions {
  /** State directory; default resolveHome(). */
  home?: string;
  /** Reply deadline for one-shot requests (ms); default 60 s. Streams have none. */
  timeoutMs?: number;
  /** How long `BUSY` answers are retried before one is reported (ms); default 10 s. */
  busyRetryForMs?: number;
}

const REQUEST_TIMEOUT_MS = 60_000;
const BUSY_RETRY_FOR_MS = 10_000;
const BUSY_FIRST_DELAY_MS = 20;
const BUSY_MAX_DELAY_MS = 200;

/** Delay before retry number `attempt` (0-based) after BUSY: 20, 40, 80, 160, 200, 200… ms, each 50–100 % of that. */
export function busyDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(BUSY_MAX_DELAY_MS, BUSY_FIRST_DELAY_MS * 2 ** Math.min(attempt, 8));
  return Math.round(base * (0.5 + random() / 2));
}

/**
 * Run `attempt` again while the daemon answers BUSY (its connection limit:
 * it refused the connection before reading the request, so nothing was done
 * and any request, a submit too, is safe to send again), with a short,
 * growing, jittered backoff, for at most `busyRetryForMs`; then the last
 * BUSY is reported.
 */
async function retryBusy<T>(opts: ClientOptions, attempt: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  const limit = opts.busyRetryForMs ?? BUSY_RETRY_FOR_MS;
  const since = Date.now();
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof CliError && e.code === 'BUSY')) throw e;
      const delay = busyDelay(n);
      if (Date.now() - since + delay > limit) throw e;
      await sleep(delay, signal);
    }
  }
}

/** Checks the peer of a connected socket, given its descriptor; throws CliError to refuse it. */
type PeerCheck = (fd: number, home: string) => void;

type Native = typeof import('@xlurm/native');

/** Refuse a socket whose peer is not the owner of the state directory (docs/behaviour.md §2.9). */
function checkPeer(fd: number, home: string): void {
  let uid: number;
  try {
    const native = require('@xlurm/native') as Native;
    uid = native.peerCred(fd).uid;
  } catch (e) {
    throw new CliError(`cannot read the daemon's socket credentials: ${(e as Error).message}`);
  }
  let owner: number;
  try {
    owner = fs.statSync(home).uid;
  } catch (e) {
    throw new CliError(`cannot inspect ${home}: ${osErrorText(e)}`);
  }
  if (uid !== owner) throw new CliError('socket peer does not own the state directory');
}

let peerCheck: PeerCheck = checkPeer;

/** Tests replace the SO_PEERCRED check (the native addon may not be built). */
export function setPeerCheck(check: PeerCheck | undefined): void {
  peerCheck = check ?? checkPeer;
}

/** Connect to `$XLURM_HOME/xlurm.sock` and verify its peer; `onread`: read into that buffer (net.connect). */
export function connect(home: string = resolveHome(), onread?: net.OnReadOpts): Promise<net.Socket> {
  const path = statePaths(home).socket;
  const { createConnection } = require('node:net') as typeof net;
  return new Promise((resolve, reject) => {
    const socket = onread ? createConnection({ path, onread }) : createConnection(path);
    const onError = (err: Error) => {
      socket.destroy();
      reject(new ConnectError(notRunningMessage(osErrorText(err))));
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.removeListener('error', onError);
      try {
        peerCheck((socket as unknown as { _handle?: { fd?: number } })._handle?.fd as number, home);
      } catch (e) {
        socket.destroy();
        reject(e);
        return;
      }
      resolve(socket);
    });
  });
}

function encodeRequest(op: string, args: unknown): string {
  return JSON.stringify({ v: PROTOCOL_VERSION, op, args }) + '\n';
}

function decodeError(e: unknown): CliError {
  if (e instanceof FrameTooLarge) return new CliError('message exceeds size limit');
  if (e instanceof FrameSyntax) return new CliError('unexpected response');
  return e instanceof CliError ? e : new CliError((e as Error).message);
}

interface ReplyShape { v?: unknown; ok?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown }; event?: unknown }

/**
 * A daemon `{ok:false}` frame as an error (its message names both versions
 * when the versions differ); undefined if the frame is not one. A successful
 * frame of another protocol version is refused too: its result may not mean
 * what this client expects.
 */
function refusal(msg: ReplyShape): CliError | undefined {
  if (msg.ok !== false) {
    if (typeof msg.v !== 'number' || msg.v === PROTOCOL_VERSION) return undefined;
    return new CliError(`protocol version mismatch: the daemon speaks protocol ${msg.v}, this client (xlurm ${VERSION}) speaks protocol ${PROTOCOL_VERSION}; ` +
      'use the xlurm commands installed with the running daemon, or ask the administrator to restart it after the upgrade', 'VERSION_MISMATCH');
  }
  const err = msg.error;
  if (!err || typeof err.message !== 'string') return new CliError('unexpected response');
  return new CliError(err.message, typeof err.code === 'string' ? err.code : undefined);
}

function asObject(msg: unknown): ReplyShape {
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) throw new CliError('unexpected response');
  return msg as ReplyShape;
}

/** Send one request and return its result; a refusal becomes CliError(message). BUSY is retried for a while. */
export function request<K extends OpName>(op: K, args: OpArgs<K>, opts: ClientOptions = {}): Promise<OpResult<K>> {
  return retryBusy(opts, () => requestOnce(op, args, opts));
}

/**
 * The addon, when it can be loaded (built, and its one-shot requests present); undefined: the
 * one-shot requests go through node:net like the streams.
 */
let nativeSockets: Native | null | undefined;
function oneShotNative(): Native | undefined {
  if (nativeSockets === undefined) {
    try {
      const n = require('@xlurm/native') as Native;
      nativeSockets = typeof n.native().unixExchange === 'function' ? n : null;
    } catch {
      nativeSockets = null;
    }
  }
  return nativeSockets ?? undefined;
}

/**
 * The reply handling shared by both ways of sending a one-shot request: the first frame read is
 * the reply (or a refusal); the end of the connection before it, ConnectionClosed.
 */
function replyReader<K extends OpName>(finish: (err: CliError | undefined, value?: OpResult<K>) => void) {
  const decoder = new FrameDecoder(MAX_RESPONSE_BYTES);
  return (chunk: Buffer) => {
    try {
      const frames = decoder.push(chunk);
      if (frames.length === 0) return;
      const msg = asObject(frames[0]!.msg);
      const refused = refusal(msg);
      if (refused) return finish(refused);
      if (msg.ok !== true || !('result' in msg)) return finish(new CliError('unexpected response'));
      finish(undefined, msg.result as OpResult<K>);
    } catch (e) {
      finish(decodeError(e));
    }
  };
}

function requestOnce<K extends OpName>(op: K, args: OpArgs<K>, opts: ClientOptions): Promise<OpResult<K>> {
  const home = opts.home ?? resolveHome();
  const n = oneShotNative();
  return n ? requestNative(n, home, op, args, opts) : requestNet(home, op, args, opts);
}

/**
 * A one-shot request through the addon (src/addon/request.cc): the same connect, peer check,
 * idle deadline and replies as through node:net, without loading net and its streams (1.5-2 ms
 * of every command's start-up, docs/performance.md, Client start-up).
 */
function requestNative<K extends OpName>(n: Native, home: string, op: K, args: OpArgs<K>, opts: ClientOptions): Promise<OpResult<K>> {
  let fd: number;
  try {
    fd = n.unixConnect(statePaths(home).socket);
  } catch (e) {
    return Promise.reject(new ConnectError(notRunningMessage(osErrorText(e))));
  }
  try {
    peerCheck(fd, home);
  } catch (e) {
    fs.closeSync(fd);
    return Promise.reject(e);
  }
  return new Promise<OpResult<K>>((resolve, reject) => {
    let settled = false;
    let handle: ReturnType<Native['unixExchange']> | undefined;
    const finish = (err: CliError | undefined, value?: OpResult<K>) => {
      if (settled) return;
      settled = true;
      if (handle) n.unixClose(handle);
      if (err) reject(err);
      else resolve(value as OpResult<K>);
    };
    const onData = replyReader<K>(finish);
    try {
      handle = n.unixExchange(fd, Buffer.from(encodeRequest(op, args)), opts.timeoutMs ?? REQUEST_TIMEOUT_MS, (kind, value) => {
        if (kind === n.EXCHANGE.DATA) onData(value as Buffer);
        else if (kind === n.EXCHANGE.IDLE) finish(new CliError('timed out waiting for the daemon'));
        else finish(new ConnectionClosed());
      });
    } catch (e) {
      fs.closeSync(fd); // a refused exchange leaves the descriptor to its caller
      finish(decodeError(e));
    }
  });
}

async function requestNet<K extends OpName>(home: string, op: K, args: OpArgs<K>, opts: ClientOptions): Promise<OpResult<K>> {
  const socket = await connect(home);
  return new Promise<OpResult<K>>((resolve, reject) => {
    let settled = false;
    const finish = (err: CliError | undefined, value?: unknown) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (err) reject(err);
      else resolve(value as OpResult<K>);
    };
    socket.setTimeout(opts.timeoutMs ?? REQUEST_TIMEOUT_MS, () => finish(new CliError('timed out waiting for the daemon')));
    socket.on('data', replyReader<K>(finish));
    socket.on('end', () => finish(new ConnectionClosed()));
    socket.on('close', () => finish(new ConnectionClosed()));
    socket.on('error', () => finish(new ConnectionClosed()));
    socket.write(encodeRequest(op, args));
  });
}

export interface StreamHandlers {
  /** A `job` event (follow only): the job now, sent first and on every change. */
  onJob?(job: Job): void | Promise<void>;
  /** Log bytes starting at byte `offset` of the job log. */
  onLog(offset: number, bytes: Buffer): void | Promise<void>;
  /** Called once the first frame arrived (the daemon is answering). */
  onFirstFrame?(): void;
}

/** Wraps an error thrown by a handler so it is not mistaken for a dropped connection. */
class HandlerFailure {
  constructor(readonly cause: unknown) {}
}

function isThenable(v: unknown): v is PromiseLike<void> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
}

export interface StreamEnd { job: Job | null; offset: number }

export interface StreamOptions extends ClientOptions {
  /** Aborting destroys the connection; the stream then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Run a streaming op (`log` or `follow`) until its `end` event. A handler
 * that returns a promise pauses the socket until it settles, so a slow stdout
 * slows the daemon down instead of filling memory; handlers that return
 * nothing cost no promise. Log bytes are handed on as they arrive (pieces of
 * a frame, with their own offsets), never reassembled. EOF before `end`
 * rejects with ConnectionClosed. BUSY (always the first and only frame) is
 * retried for a while.
 */
export function stream<K extends 'log' | 'follow'>(
  op: K, args: OpArgs<K>, handlers: StreamHandlers, opts: StreamOptions = {},
): Promise<StreamEnd> {
  return retryBusy(opts, () => streamOnce(op, args, handlers, opts), opts.signal);
}

/**
 * One read buffer per stream, reused for every read. Reading into buffers
 * that Node allocates (64 KiB each, fresh memory every time) cost more than
 * the bytes themselves: a 256 MiB stream from a Node server took ~0.6 s
 * that way and ~0.1 s into one reused 1 MiB buffer (on the development VM).
 */
const READ_BUFFER = 1 << 20;

async function streamOnce(
  op: 'log' | 'follow', args: OpArgs<'log' | 'follow'>, handlers: StreamHandlers, opts: StreamOptions,
): Promise<StreamEnd> {
  const signal = opts.signal;
  if (signal?.aborted) throw signal.reason;
  // Replies that arrive before the handling below is in place (none should) are kept, copied.
  const early: Buffer[] = [];
  let onChunk = (chunk: Buffer): boolean => { early.push(Buffer.from(chunk)); return true; };
  const socket = await connect(opts.home ?? resolveHome(), {
    buffer: Buffer.allocUnsafeSlow(READ_BUFFER),
    callback: (n, buf) => onChunk((buf as Buffer).subarray(0, n)),
  });
  if (signal?.aborted) { socket.destroy(); throw signal.reason; }
  return new Promise<StreamEnd>((resolve, reject) => {
    // Chunks are views of the reused read buffer: log pieces are handed on as
    // views too, and reading stays paused while a handler still holds one.
    const decoder = new FrameDecoder(MAX_RESPONSE_BYTES, { splitRaw: true, borrowed: true });
    let first = true;
    let settled = false;
    /** Frames decoded but not yet handled (a handler is pending). */
    let queue: Frame[] = [];
    let next = 0;
    let waiting = false;
    const onAbort = () => socket.destroy();
    signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (err: unknown, end?: StreamEnd) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      if (err !== undefined) reject(err instanceof HandlerFailure ? err.cause : err);
      else resolve(end!);
    };
    /** Handle one frame: the end, a pending handler, or nothing. */
    const handle = (frame: Frame): StreamEnd | PromiseLike<void> | undefined => {
      if (first) {
        first = false;
        try { handlers.onFirstFrame?.(); } catch (e) { throw new HandlerFailure(e); }
      }
      const msg = asObject(frame.msg) as ReplyShape & { job?: Job | null; offset?: unknown };
      const refused = refusal(msg);
      if (refused) throw refused;
      if (msg.ok !== true) throw new CliError('unexpected response');
      let r: void | PromiseLike<void>;
      switch (msg.event) {
        case 'job':
          if (!msg.job || typeof msg.job !== 'object') throw new CliError('unexpected response');
          try { r = handlers.onJob?.(msg.job as Job); } catch (e) { throw new HandlerFailure(e); }
          return isThenable(r) ? r : undefined;
        case 'log':
          if (typeof msg.offset !== 'number' || !frame.raw) throw new CliError('unexpected log response');
          try { r = handlers.onLog(msg.offset + (frame.rawAt ?? 0), frame.raw); } catch (e) { throw new HandlerFailure(e); }
          return isThenable(r) ? r : undefined;
        case 'end':
          if (typeof msg.offset !== 'number') throw new CliError('unexpected response');
          return { job: msg.job ?? null, offset: msg.offset };
        default:
          throw new CliError('unexpected response');
      }
    };
    /** The connection ended; reported once the frames that came before it were handled. */
    let eof = false;
    const dropped = () => finish(signal?.aborted ? signal.reason : new ConnectionClosed());
    /** Handle queued frames until one is pending; false: pending (reading must pause). */
    const pump = (): boolean => {
      while (!settled && next < queue.length) {
        let r: StreamEnd | PromiseLike<void> | undefined;
        try { r = handle(queue[next++]!); } catch (e) { finish(e); return true; }
        if (isThenable(r)) {
          waiting = true;
          socket.pause();
          r.then(() => {
            waiting = false;
            if (pump() && !settled) socket.resume();
          }, (e) => finish(new HandlerFailure(e)));
          return false;
        }
        if (r) { finish(undefined, r); return true; }
      }
      queue = [];
      next = 0;
      if (eof) dropped();
      return true;
    };
    onChunk = (chunk: Buffer): boolean => {
      if (settled) return true;
      let frames: Frame[];
      try { frames = decoder.push(chunk); } catch (e) { finish(decodeError(e)); return true; }
      if (frames.length === 0) return true;
      if (next === queue.length) { queue = frames; next = 0; } else queue.push(...frames);
      return waiting ? false : pump();
    };
    // EOF, ECONNRESET and friends: the daemon went away (an abort destroys the socket too).
    const closed = () => {
      eof = true;
      if (!waiting || signal?.aborted) dropped();
    };
    socket.on('end', closed);
    socket.on('close', closed);
    socket.on('error', closed);
    for (const chunk of early.splice(0)) onChunk(chunk);
    socket.write(encodeRequest(op, args));
  });
}
