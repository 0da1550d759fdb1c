/**
 * The admit step: may a job start at all now, wherever it would go? The
 * host's `max_running` (with the slot a reservation keeps, docs/behaviour.md
 * §21.3) and the size caps (`max_running_by_size`, §21.4); per-user limits,
 * begin times, holds and dependencies go here. A step returns a code, never
 * a message: messages are built only for reasons someone reads (explainAdmit).
 */
import type { Reason } from '@xlurm/protocol';
import type { PendingJob } from './pending-job';
import { explainHost, fitsHost, takeHost, type HostRoom } from './host-fit';
import { explainUserLimit, limitsOf, userLimitHit, userStarted, type UserHolding, type UserLimitTable } from './user-limits';

/** What admit looks at: counts of the host now (later: usage per user, the clock, dependencies). */
export interface AdmitState {
  /** Host CPUs and memory (docs/behaviour.md §24.2, host-fit.ts), with this pass's starts taken. */
  host?: HostRoom;
  /** RUNNING jobs, CPU-only included, with those started earlier in this pass. */
  running: number;
  maxRunning: number;
  /**
   * `max_running` slots kept for reserving jobs (one per reservation, reserve
   * mode): other jobs may start only while fewer than maxRunning - kept run.
   */
  kept?: number;
  /** `max_running_by_size`: device count → most running jobs holding exactly that many. */
  sizeLimits?: ReadonlyMap<number, number>;
  /** RUNNING jobs per device count (only counts that have a limit need be here), with this pass's starts. */
  runningBySize?: Map<number, number>;
  /**
   * Jobs that may not start whatever the host has free: held, before their
   * begin time, or waiting for a dependency (docs/behaviour.md §23.1-§23.4),
   * with that reason. Kept by the daemon's workflow gates (workflow.ts).
   */
  waits?: ReadonlyMap<number, Reason>;
  /** RUNNING tasks per throttled array (docs/behaviour.md §23.2, `--array …%N`), with this pass's starts. */
  arrayRunning?: Map<number, number>;
  /** Per-user limits (docs/behaviour.md §22.4, user-limits.ts) and what each user's running jobs hold, with this pass's starts. */
  userLimits?: UserLimitTable;
  byUser?: Map<string, UserHolding>;
}

/** Codes of admit. */
export type AdmitCode = 'MaxRunning' | 'SizeLimit' | 'UserLimit' | 'Held' | 'Dependency' | 'BeginTime' | 'ArrayLimit' | 'HostResources';

/** Why no job at all may start now (the pass then considers no further job), or null. */
export function admitNone(s: AdmitState): AdmitCode | null {
  return s.running >= s.maxRunning - (s.kept ?? 0) ? 'MaxRunning' : null;
}

/** Why this job may not start now although others may, or null. */
export function admit(job: PendingJob, s: AdmitState): AdmitCode | null {
  const wait = s.waits?.get(job.id);
  if (wait) return wait.code as AdmitCode;
  const limit = s.sizeLimits?.get(job.count);
  if (limit !== undefined && (s.runningBySize?.get(job.count) ?? 0) >= limit) return 'SizeLimit';
  if (s.userLimits && userLimitHit(job, limitsOf(s.userLimits, job.owner ?? '', job.uid ?? -1), s.byUser?.get(job.owner ?? ''))) return 'UserLimit';
  if (job.throttle !== undefined && (s.arrayRunning?.get(job.arrayId!) ?? 0) >= job.throttle) return 'ArrayLimit';
  if (s.host && !fitsHost(job, s.host)) return 'HostResources';
  return null;
}

/** Is the job's owner at their running-jobs limit (then none of their jobs may start in this pass)? */
export function ownerAtJobLimit(job: PendingJob, s: AdmitState): boolean {
  const l = s.userLimits && limitsOf(s.userLimits, job.owner ?? '', job.uid ?? -1);
  return !!l && l.runningJobs > 0 && (s.byUser?.get(job.owner ?? '')?.jobs ?? 0) >= l.runningJobs;
}

/**
 * How many more devices the job's owner may hold under their device limit
 * (docs/behaviour.md §22.4), with this pass's starts; null: no such limit.
 */
export function ownerDeviceRoom(job: PendingJob, s: AdmitState): number | null {
  const l = s.userLimits && limitsOf(s.userLimits, job.owner ?? '', job.uid ?? -1);
  if (!l || l.devices <= 0) return null;
  return l.devices - (s.byUser?.get(job.owner ?? '')?.devices ?? 0);
}

/** The pass started `job`: count it. */
export function admitted(job: PendingJob, s: AdmitState): void {
  s.running++;
  if (s.host) takeHost(job, s.host);
  if (s.userLimits) userStarted(job, s.byUser ??= new Map());
  if (s.sizeLimits?.has(job.count)) {
    const m = s.runningBySize ??= new Map();
    m.set(job.count, (m.get(job.count) ?? 0) + 1);
  }
  if (job.throttle !== undefined) {
    const m = s.arrayRunning ??= new Map();
    m.set(job.arrayId!, (m.get(job.arrayId!) ?? 0) + 1);
  }
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/**
 * The reason for a code of admit: `32 jobs running (limit 32)`,
 * `1 job of 8 devices running (limit 1)`. `job` is needed for SizeLimit.
 */
export function explainAdmit(code: AdmitCode, s: AdmitState, job?: PendingJob): Reason {
  switch (code) {
    case 'HostResources':
      return (s.host && job && explainHost(job, s.host)) || { code: 'Resources', message: '' };
    case 'Held': case 'Dependency': case 'BeginTime':
      return s.waits?.get(job?.id ?? 0) ?? { code, message: '' };
    case 'UserLimit': {
      const owner = job?.owner ?? '';
      const l = limitsOf(s.userLimits, owner, job?.uid ?? -1);
      const h = s.byUser?.get(owner);
      const kind = job && l ? userLimitHit(job, l, h) : null;
      return kind && l ? explainUserLimit(owner, kind, l, h) : { code, message: `${owner} is at a per-user limit` };
    }
    case 'MaxRunning': {
      const kept = s.kept ?? 0;
      const why = kept ? `limit ${s.maxRunning}, ${plural(kept, 'slot')} kept for reserving jobs` : `limit ${s.maxRunning}`;
      return { code, message: `${plural(s.running, 'job')} running (${why})` };
    }
    case 'ArrayLimit': {
      // An array's `%N` is its own max_running: the stable code of that (docs/behaviour.md §23.2).
      const id = job?.arrayId ?? 0;
      return { code: 'MaxRunning', message: `array ${id} runs ${plural(s.arrayRunning?.get(id) ?? 0, 'task')} (limit ${job?.throttle ?? 0})` };
    }
    case 'SizeLimit': {
      const n = job?.count ?? 0;
      const running = s.runningBySize?.get(n) ?? 0;
      return { code, message: `${plural(running, 'job')} of ${plural(n, 'device')} running (limit ${s.sizeLimits?.get(n) ?? 0})` };
    }
  }
}
