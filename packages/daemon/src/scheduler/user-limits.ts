/**
 * Per-user limits (docs/behaviour.md §22.4): what one user's running jobs may
 * hold at once (jobs, devices, CPUs, memory) and how many jobs they may have
 * pending. `[limits.users.<name>]` replaces `[limits.users.default]` for that
 * user key by key, and a key in neither has its built-in default (all 0 but
 * pending_jobs, 10000: docs/behaviour.md §28.2); 0 means unlimited. Root's
 * jobs are exempt.
 *
 * The running limits are part of the admit step (admit.ts asks `userLimitHit`
 * and counts starts with `userStarted`); `pending_jobs` is Core's check at
 * submission. Pure: the holdings are an input built by Core from its running
 * jobs, and this pass's starts are added as it goes.
 */
import type { Reason } from '@xlurm/protocol';
import { formatSize } from '@xlurm/protocol';
import type { PendingJob } from './pending-job';

/** One user's limits; 0 = unlimited. memory in bytes. */
export interface UserLimitValues { runningJobs: number; devices: number; cpus: number; memory: number; pendingJobs: number }

/** The tables in force: `default` for users without a table of their own. */
export interface UserLimitTable { default?: UserLimitValues; users: ReadonlyMap<string, UserLimitValues> }

/** What one user's running jobs hold (with this pass's starts). */
export interface UserHolding { jobs: number; devices: number; cpus: number; memory: number }

export const NO_USER_LIMITS: UserLimitTable = { users: new Map() };

/** Each key's built-in value, for a key neither the user's table nor `default` sets (docs/behaviour.md §28.2). */
export const DEFAULT_USER_LIMITS: Readonly<UserLimitValues> = { runningJobs: 0, devices: 0, cpus: 0, memory: 0, pendingJobs: 10000 };

/** Does any table set a running limit at all? (Then the pass needs the holdings; pending_jobs is checked at submission.) */
export function hasUserLimits(t: UserLimitTable | undefined): boolean {
  if (!t) return false;
  const any = (v: UserLimitValues | undefined) => !!v && (v.runningJobs > 0 || v.devices > 0 || v.cpus > 0 || v.memory > 0);
  if (any(t.default)) return true;
  for (const v of t.users.values()) if (any(v)) return true;
  return false;
}

/** The limits of user `name` (uid 0: none). */
export function limitsOf(t: UserLimitTable | undefined, name: string, uid: number): UserLimitValues | undefined {
  if (!t || uid === 0) return undefined;
  return t.users.get(name) ?? t.default;
}

/** Which running limit starting `job` would exceed, or null. */
export type UserLimitKind = 'jobs' | 'devices' | 'cpus' | 'memory';

const EMPTY: UserHolding = { jobs: 0, devices: 0, cpus: 0, memory: 0 };

export function userLimitHit(job: PendingJob, l: UserLimitValues | undefined, h: UserHolding | undefined): UserLimitKind | null {
  if (!l) return null;
  const held = h ?? EMPTY;
  if (l.runningJobs > 0 && held.jobs + 1 > l.runningJobs) return 'jobs';
  if (l.devices > 0 && job.count > 0 && held.devices + job.count > l.devices) return 'devices';
  if (l.cpus > 0 && (job.cpus ?? 0) > 0 && held.cpus + (job.cpus ?? 0) > l.cpus) return 'cpus';
  if (l.memory > 0 && (job.mem ?? 0) > 0 && held.memory + (job.mem ?? 0) > l.memory) return 'memory';
  return null;
}

/** The pass started `job`: add it to its owner's holding. */
export function userStarted(job: PendingJob, byUser: Map<string, UserHolding>): void {
  const k = job.owner ?? '';
  let h = byUser.get(k);
  if (!h) byUser.set(k, h = { jobs: 0, devices: 0, cpus: 0, memory: 0 });
  h.jobs++;
  h.devices += job.count;
  h.cpus += job.cpus ?? 0;
  h.memory += job.mem ?? 0;
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** `alice runs 8 jobs (limit 8)`, `alice runs 4 devices (limit 4)`, `alice holds 32 CPUs (limit 32)`, `alice holds 64G memory (limit 64G)`. */
export function explainUserLimit(owner: string, kind: UserLimitKind, l: UserLimitValues, h: UserHolding | undefined): Reason {
  const held = h ?? EMPTY;
  let message: string;
  switch (kind) {
    case 'jobs': message = `${owner} runs ${plural(held.jobs, 'job')} (limit ${l.runningJobs})`; break;
    case 'devices': message = `${owner} runs ${plural(held.devices, 'device')} (limit ${l.devices})`; break;
    case 'cpus': message = `${owner} holds ${held.cpus} CPU${held.cpus === 1 ? '' : 's'} (limit ${l.cpus})`; break;
    case 'memory': message = `${owner} holds ${formatSize(held.memory)} memory (limit ${formatSize(l.memory)})`; break;
  }
  return { code: 'UserLimit', message };
}

/** The refusal at submission: `alice already has 1000 pending jobs (limit 1000)`. */
export function pendingLimitMessage(owner: string, pending: number, limit: number): string {
  return `${owner} already has ${plural(pending, 'pending job')} (limit ${limit})`;
}

/**
 * The limits as `xlurm status` lists them: dotted key → value; `default`'s
 * that are set (non-zero), and a user's where they differ from `default`'s
 * (0 shown: unlimited for that user alone).
 */
export function describeUserLimits(t: UserLimitTable | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!t) return out;
  const base: UserLimitValues = t.default ?? { runningJobs: 0, devices: 0, cpus: 0, memory: 0, pendingJobs: 0 };
  const add = (name: string, v: UserLimitValues, b: UserLimitValues | null) => {
    const p = `limits.users.${name}.`;
    const show = (key: keyof UserLimitValues) => (b ? v[key] !== b[key] : v[key] !== 0);
    if (show('runningJobs')) out[`${p}running_jobs`] = String(v.runningJobs);
    if (show('devices')) out[`${p}devices`] = String(v.devices);
    if (show('cpus')) out[`${p}cpus`] = String(v.cpus);
    if (show('memory')) out[`${p}memory`] = v.memory ? formatSize(v.memory) : '0';
    if (show('pendingJobs')) out[`${p}pending_jobs`] = String(v.pendingJobs);
  };
  if (t.default) add('default', t.default, null);
  for (const [name, v] of [...t.users].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) add(name, v, base);
  return out;
}

/** One table of the file, as the schema allows it (memory: bytes, or a size such as `64G`). */
export interface UserLimitsFileTable {
  running_jobs?: number; devices?: number; cpus?: number; memory?: number | string; pending_jobs?: number;
}

/**
 * The file's `[limits.users]` tables as settings; `sizeBytes` reads a size
 * (protocol's, passed in to keep this pure). Each key of a user's table
 * comes from that table, else from `default`, else from `builtIn`
 * (docs/behaviour.md §28.2), so `default` is always there.
 */
export function userLimitsFromFile(
  users: Readonly<Record<string, UserLimitsFileTable>> | undefined, sizeBytes: (s: string) => number | null,
  builtIn: Readonly<UserLimitValues> = DEFAULT_USER_LIMITS,
): UserLimitTable {
  const over = (f: UserLimitsFileTable, base: Readonly<UserLimitValues>): UserLimitValues => ({
    runningJobs: f.running_jobs ?? base.runningJobs, devices: f.devices ?? base.devices, cpus: f.cpus ?? base.cpus,
    memory: f.memory === undefined ? base.memory : typeof f.memory === 'string' ? sizeBytes(f.memory) ?? 0 : f.memory,
    pendingJobs: f.pending_jobs ?? base.pendingJobs,
  });
  const def = over(users?.default ?? {}, builtIn);
  const t: { default: UserLimitValues; users: Map<string, UserLimitValues> } = { default: def, users: new Map() };
  for (const [name, f] of Object.entries(users ?? {})) if (name !== 'default') t.users.set(name, over(f, def));
  return t;
}
