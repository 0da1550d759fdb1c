import type { Handler } from './types';

/**
 * Pending: cancelled now, answered once that is on disk. Running: the
 * supervisor is told. Finished: no-op.
 */
export const cancel = (({ core, caller }, { id, array }) => {
  core.jobFor(caller, id); // authorise: owner or root (an array's tasks are all its owner's)
  return (array === false ? core.cancel(id) : core.cancelArray(id)).then(() => ({}));
}) satisfies Handler<'cancel'>;
