/**
 * What a job asks for, defined once: the client checks it before sending,
 * the daemon checks it again on receipt (a client may be old or hand-made),
 * and the scheduler places it. Later requests (CPUs, memory, a share of a
 * card, time policy) are added here, with their checks beside these.
 *
 * Types only from the schemas: the CLI loads this module on every start.
 */
import type { DeviceKind, Submission } from './schemas';
import { sizeBytes, sizeError } from './size';
import { MAX_DURATION_SECS, durationRangeError } from './duration';
import { latestTimeSeconds, timeRangeError } from './begin-time';

export interface JobRequest {
  /** Devices; 0 = a CPU-only job. */
  count: number;
  /** One vendor; null: the first vendor pool (in priority order) that fits. */
  kind: DeviceKind | null;
  /** `-i`: exactly these ids, in this order, within one vendor pool. */
  deviceIds?: readonly number[];
  /** `-x`: ids this job must not get, in every vendor. */
  excludeIds?: readonly number[];
  /** `-t`: seconds from launch; null: no limit. */
  timeLimit: number | null;
  /**
   * `--group-affinity` (require) / `--ignore-group-affinity` (off): overrides
   * the host's group_affinity for this job; absent: the host's.
   */
  groupAffinity?: 'require' | 'off';
  /** `-c/--cpus`: host CPUs; absent or 0: none asked (docs/behaviour.md §24.1). */
  cpus?: number;
  /** `--mem`: host memory in bytes; absent or 0: none asked. */
  mem?: number;
  /** `--share`: a slice of each device, memory in bytes and compute in percent; absent: whole devices (docs/behaviour.md §25.1). */
  share?: { mem: number; compute: number };
}

/** The request of a submission as sent (`device_ids`/`exclude_ids` only when present). */
export function requestOf(s: Submission): JobRequest {
  const r: JobRequest = { count: s.count, kind: s.kind ?? null, timeLimit: s.time_limit ?? null };
  if (s.device_ids !== undefined) r.deviceIds = s.device_ids;
  if (s.exclude_ids !== undefined) r.excludeIds = s.exclude_ids;
  if (s.group_affinity) r.groupAffinity = s.group_affinity;
  if (s.cpus) r.cpus = s.cpus;
  if (s.mem) r.mem = s.mem;
  if (s.share) r.share = s.share;
  return r;
}

/**
 * `--share MEM[,COMPUTE[%]]` (docs/behaviour.md §25.1): memory a size (a bare
 * number is MiB), compute 1–100 with or without `%` (default 100). The share,
 * or the message that refuses it.
 */
export function parseShare(text: string): { mem: number; compute: number } | { error: string } {
  const comma = text.indexOf(',');
  const memText = comma < 0 ? text : text.slice(0, comma);
  const mem = sizeBytes(memText.trim());
  if (mem === null || mem === 0) return { error: sizeError(memText) };
  if (comma < 0) return { mem, compute: 100 };
  const c = text.slice(comma + 1).trim().replace(/%$/, '');
  if (!/^[0-9]+$/.test(c) || Number(c) < 1 || Number(c) > 100) return { error: 'share compute must be between 1 and 100' };
  return { mem, compute: Number(c) };
}

/** A request refused before it reaches the queue: the daemon's error code and the message both sides print. */
export interface RequestError { code: 'INVALID_ARGUMENT' | 'INVALID_REQUEST'; message: string }

/** The times a submission or an update carries (`xlurm update`'s keys are the submission's). */
export interface JobTimes { time_limit?: number | null; queue_timeout?: number | null; begin_at?: number | null }

/**
 * Whether the daemon can represent the times (docs/behaviour.md §28.4):
 * `-t` and `--timeout` up to MAX_DURATION_SECS, `--begin` up to
 * 9999-12-31 local time. The CLI passes what the user typed, so the message
 * quotes it; the daemon (a hand-made request) quotes the number. The same
 * check for a submission and for every form of `xlurm update`.
 */
export function checkTimes(t: JobTimes, typed: { [K in keyof JobTimes]?: string } = {}): RequestError | null {
  const bad = (message: string): RequestError => ({ code: 'INVALID_REQUEST', message });
  for (const key of ['time_limit', 'queue_timeout'] as const) {
    const v = t[key];
    if (typeof v === 'number' && v > MAX_DURATION_SECS) return bad(durationRangeError(typed[key] ?? String(v)));
  }
  if (typeof t.begin_at === 'number' && t.begin_at > latestTimeSeconds()) return bad(timeRangeError(typed.begin_at ?? String(t.begin_at)));
  return null;
}

const invalid = (message: string): RequestError => ({ code: 'INVALID_ARGUMENT', message });

/**
 * The checks of a request that need no knowledge of the host, in the order of
 * docs/behaviour.md §2.3: the first that fails, or null.
 * Whether the host can ever hold it is the daemon's check (scheduler/place.ts).
 */
export function checkRequest(r: JobRequest): RequestError | null {
  if (r.timeLimit === 0) return invalid('time-limit must be positive');
  if (r.excludeIds && r.deviceIds) return invalid('-x cannot be combined with -i');
  if (r.deviceIds) {
    if (new Set(r.deviceIds).size !== r.deviceIds.length) return invalid('device IDs must not contain duplicates');
    if (r.count !== r.deviceIds.length) return invalid('-g count must match the number of -i device IDs');
  }
  if (r.share) {
    // A slice is of a device: a CPU-only job has nothing to share (docs/behaviour.md §25.1).
    if (r.count === 0) return invalid('--share needs at least one device (-g N or -i)');
    if (!Number.isInteger(r.share.compute) || r.share.compute < 1 || r.share.compute > 100) return invalid('share compute must be between 1 and 100');
  }
  return null;
}
