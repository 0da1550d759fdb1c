import { XlurmError, checkTimes } from '@xlurm/protocol';
import type { Handler } from './types';

/**
 * `xlurm update ID …` (docs/behaviour.md §23.3): owner or root; the job as
 * changed, once durable. Every key gets the submission's checks (§28.4)
 * before anything changes.
 */
export const update = (({ core, caller }, { id, ...changes }) => {
  core.jobFor(caller, id);
  const bad = checkTimes(changes);
  if (bad) throw new XlurmError(bad.code, bad.message);
  return core.update(id, changes, caller.uid === 0);
}) satisfies Handler<'update'>;
