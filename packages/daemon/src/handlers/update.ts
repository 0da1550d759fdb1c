import type { Handler } from './types';

/** `xlurm update ID …` (docs/behaviour.md §23.3): owner or root; the job as changed, once durable. */
export const update = (({ core, caller }, { id, ...changes }) => {
  core.jobFor(caller, id);
  return core.update(id, changes, caller.uid === 0);
}) satisfies Handler<'update'>;
