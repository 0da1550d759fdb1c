/**
 * Bounded requests (docs/behaviour.md §28.2): `[limits] max_array_tasks`
 * and `max_request_bytes`, their defaults, and what the schema cannot say
 * about them (a size at or above the protocol's frame limit could never
 * arrive, so `config check` refuses it).
 */
import { MAX_ARRAY_TASKS, MAX_REQUEST_BYTES, formatSize, sizeBytes } from '@xlurm/protocol';

/** Built-in defaults; 0 in the file means the protocol's own cap (MAX_ARRAY_TASKS, the frame limit). */
export const DEFAULT_MAX_ARRAY_TASKS = 10000;
export const DEFAULT_MAX_REQUEST_BYTES = 3 * 1024 * 1024;

/** The file's `[limits]` keys of this module, as the schema allows them. */
export interface RequestLimitsFile { max_array_tasks?: number; max_request_bytes?: number | string }

/** `max_request_bytes` as bytes: an integer is bytes, a string a size (`3M`). */
export function requestBytesOf(v: number | string | undefined): number {
  if (v === undefined) return DEFAULT_MAX_REQUEST_BYTES;
  return typeof v === 'number' ? v : sizeBytes(v) ?? DEFAULT_MAX_REQUEST_BYTES;
}

/** The effective settings: 0 stands for the protocol's own cap. */
export function requestLimitsOf(l: RequestLimitsFile | undefined): { maxArrayTasks: number; maxRequestBytes: number } {
  return { maxArrayTasks: l?.max_array_tasks ?? DEFAULT_MAX_ARRAY_TASKS, maxRequestBytes: requestBytesOf(l?.max_request_bytes) };
}

/** Problems the schema cannot express: a `max_request_bytes` no request could ever reach the daemon with. */
export function requestLimitsProblems(doc: { limits?: RequestLimitsFile }): Array<{ key: string; problem: string }> {
  const v = doc.limits?.max_request_bytes;
  if (v === undefined) return [];
  const bytes = requestBytesOf(v);
  if (bytes < MAX_REQUEST_BYTES) return [];
  return [{
    key: 'limits.max_request_bytes',
    problem: `must be below the protocol's frame limit ${formatSize(MAX_REQUEST_BYTES)}, not ${String(v)} (0: the frame limit alone)`,
  }];
}

/** The bytes of a request's environment (`NAME=value` each), script and arguments together, in UTF-8. */
export function requestBytes(s: { env: Readonly<Record<string, string>>; script?: string | null; command: readonly string[] }): number {
  let n = 0;
  for (const [k, v] of Object.entries(s.env)) n += Buffer.byteLength(k) + 1 + Buffer.byteLength(v);
  if (typeof s.script === 'string') n += Buffer.byteLength(s.script);
  for (const w of s.command) n += Buffer.byteLength(w);
  return n;
}

/** The refusal, or null: `request too large: 3.2M (limit max_request_bytes 3M)`. */
export function requestTooLarge(bytes: number, limit: number): string | null {
  if (limit <= 0 || bytes <= limit) return null;
  return `request too large: ${formatSize(bytes)} (limit max_request_bytes ${formatSize(limit)})`;
}

/** The refusal, or null: `an array may have at most 10000 tasks (limit max_array_tasks)`; 0: only the protocol's cap. */
export function arrayTooLarge(tasks: number, limit: number): string | null {
  const max = limit > 0 ? Math.min(limit, MAX_ARRAY_TASKS) : MAX_ARRAY_TASKS;
  if (tasks <= max) return null;
  return `an array may have at most ${max} tasks (limit max_array_tasks)`;
}
