/**
 * The administrator's time policy applied to a submission (docs/behaviour.md
 * §21.6): the limit a job runs under and how long it may wait. Applied once,
 * at submission, so the job's spec shows the effective values and a reload
 * changes only later submissions.
 */
import { XlurmError, formatDurationSecs } from '@xlurm/protocol';
import type { DaemonSettings } from './config/daemon';

type Limits = Pick<DaemonSettings, 'defaultTimeLimit' | 'maxTimeLimit' | 'defaultQueueTimeout'>;

/**
 * The time limit a job gets: its own `-t` (refused above the cap), else the
 * default, lowered to the cap when the default is larger; null: none.
 */
export function effectiveTimeLimit(requested: number | null, l: Limits): number | null {
  const cap = l.maxTimeLimit;
  if (requested !== null) {
    if (cap !== null && requested > cap) {
      throw new XlurmError('INVALID_ARGUMENT',
        `time limit ${formatDurationSecs(requested)} exceeds the maximum of ${formatDurationSecs(cap)} set by the administrator`);
    }
    return requested;
  }
  const d = l.defaultTimeLimit;
  if (d === null) return cap;
  return cap === null ? d : Math.min(d, cap);
}

/** The queue-wait timeout a job gets: its own `--timeout`, else the default; null: unlimited. */
export function effectiveQueueTimeout(requested: number | null, l: Limits): number | null {
  return requested ?? l.defaultQueueTimeout;
}
