import type { Handler } from './types';

/**
 * Pending: cancelled now, answered once that is on disk. Running: the
 * supervisor is told. Finished: no-op.
 */
export const cancel = (({ core, caller }, { id }) => {
  core.jobFor(caller, id); // authorise: owner or root
  return core.cancel(id).then(() => ({}));
}) satisfies Handler<'cancel'>;
