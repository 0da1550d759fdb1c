import type { JobSummary } from '@xlurm/protocol';
import { toSummary } from '../store/store';
import type { Handler } from './types';
import type { Core } from '../core';

/**
 * Host-wide summaries (no command, environment, script or directory). With
 * `all: false` only active jobs, straight from memory; with a `limit` only
 * the newest rows, so the cost does not grow with history.
 */
/** The rows with the pending ones last, in the scheduler's order (docs/behaviour.md §22.1: xqueue -l). */
function inScheduleOrder(core: Core, rows: JobSummary[]): JobSummary[] {
  const place = new Map(core.pendingOrder().map((id, i) => [id, i]));
  const pending = rows.filter((r) => r.state === 'PENDING');
  if (pending.length === 0) return rows;
  pending.sort((a, b) => (place.get(a.id) ?? Infinity) - (place.get(b.id) ?? Infinity) || a.id - b.id);
  return [...rows.filter((r) => r.state !== 'PENDING'), ...pending];
}

export const queue = (({ core }, args) => {
  // `xqueue A`, and the lookup of `A_I` (docs/behaviour.md §23.2).
  if (args.array !== undefined) return core.arraySummaries(args.array, args.index);
  const limit = args.limit ?? Number.MAX_SAFE_INTEGER;
  if (args.all === false) {
    const active = core.activeJobs();
    const rows = active.slice(Math.max(0, active.length - limit)).map(toSummary);
    return args.order === 'schedule' ? inScheduleOrder(core, rows) : rows;
  }
  const rows: JobSummary[] = core.summaries(args.limit);
  return args.order === 'schedule' ? inScheduleOrder(core, rows) : rows;
}) satisfies Handler<'queue'>;
