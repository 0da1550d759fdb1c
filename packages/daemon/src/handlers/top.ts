import type { Handler } from './types';

/** `xlurm top ID` (owner or root): first among the owner's pending jobs (docs/behaviour.md §23.3). */
export const top = (({ core, caller }, { id }) => {
  core.jobFor(caller, id);
  return core.top(id);
}) satisfies Handler<'top'>;
