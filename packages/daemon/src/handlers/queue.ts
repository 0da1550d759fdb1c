import type { JobSummary } from '@xlurm/protocol';
import { toSummary } from '../store/store';
import type { Handler } from './types';

/**
 * Host-wide summaries (no command, environment, script or directory). With
 * `all: false` only active jobs, straight from memory; with a `limit` only
 * the newest rows, so the cost does not grow with history.
 */
export const queue = (({ core }, args) => {
  const limit = args.limit ?? Number.MAX_SAFE_INTEGER;
  if (args.all === false) {
    const active = core.activeJobs();
    return active.slice(Math.max(0, active.length - limit)).map(toSummary);
  }
  const rows: JobSummary[] = core.summaries(args.limit);
  return rows;
}) satisfies Handler<'queue'>;
