/**
 * The admit step: may a job start at all now, wherever it would go? Today
 * only the host's `max_running`; per-user and per-size limits, begin times,
 * holds and dependencies go here. A step returns a code, never a message:
 * messages are built only for reasons someone reads (explainAdmit).
 */
import type { Reason } from '@xlurm/protocol';
import type { PendingJob } from './pending-job';

/** What admit looks at: counts of the host now (later: usage per user, the clock, dependencies). */
export interface AdmitState {
  /** RUNNING jobs, CPU-only included, with those started earlier in this pass. */
  running: number;
  maxRunning: number;
}

/** Codes of admit. */
export type AdmitCode = 'MaxRunning';

/** Why no job at all may start now (the pass then considers no further job), or null. */
export function admitNone(s: AdmitState): AdmitCode | null {
  return s.running >= s.maxRunning ? 'MaxRunning' : null;
}

/** Why this job may not start now although others may (none today), or null. */
export function admit(_job: PendingJob, _s: AdmitState): AdmitCode | null {
  return null;
}

/** The reason for a code of admit: `32 jobs running (limit 32)`. */
export function explainAdmit(code: AdmitCode, s: AdmitState): Reason {
  switch (code) {
    case 'MaxRunning': return { code, message: `${s.running} job${s.running === 1 ? '' : 's'} running (limit ${s.maxRunning})` };
  }
}
