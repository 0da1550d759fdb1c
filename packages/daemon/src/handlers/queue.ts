import type { JobSummary } from '@xlurm/protocol';
import { toSummary } from '../store/store';
import type { Handler } from './types';

/**
 * Host-wide summaries (no command, environment, script or directory). With
 * `all: false` only active jobs, straight from memory; with a `limit` only
 * the newest rows, so the cost does not grow with history.
 */
export const queue: Handler<'queue'> = ({ core }, args) => {
  const limit = args.limit ?? Number.MAX_SAFE_INTEGER;
  if (args.all === false) {
    const active = [...core.running.values(), ...core.pending.values()].sort((a, b) => a.id - b.id);
    return active.slice(Math.max(0, active.length - limit)).map(toSummary);
  }
  const rows: JobSummary[] = args.limit === undefined ? core.store.allSummaries() : core.store.recentSummaries(limit);
  return rows;
};
