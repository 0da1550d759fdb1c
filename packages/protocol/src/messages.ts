/**
 * Envelopes. Request: `{v, op, args}`. Reply: `{v, ok: true, result}` or
 * `{v, ok: false, error: {code, message}}`. Streams (`log`, `follow`) reply
 * with `{v, ok: true, event, …}` frames; a `log` event carries its bytes as a
 * raw attachment (see framing.ts) and the stream ends with an `end` event.
 */
import type { WireError } from './errors';
import type { Job } from './schemas';

export interface Request { v: number; op: string; args?: unknown }

export type Reply =
  | { v: number; ok: true; result: unknown }
  | { v: number; ok: false; error: WireError };

export type StreamEvent =
  | { v: number; ok: true; event: 'job'; job: Job }
  | { v: number; ok: true; event: 'log'; offset: number; raw: number }
  | { v: number; ok: true; event: 'end'; job: Job | null; offset: number };
