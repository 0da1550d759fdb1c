import { requireAdmin } from './admin';
import type { Handler } from './types';

/**
 * `xlurm priority ID N`: the administrator only (docs/behaviour.md §22.1),
 * so no user can raise their own job's place. (A non-root daemon's own
 * account is its administrator, but every job there is that user's.)
 */
export const priority = (({ core, caller }, { id, priority: p }) => {
  requireAdmin(core, caller, "change a job's priority");
  core.jobFor(caller, id);
  return core.setPriority(id, p);
}) satisfies Handler<'priority'>;
