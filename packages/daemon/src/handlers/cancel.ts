import type { Handler } from './types';

/**
 * Pending: cancelled now, answered once that is on disk. Running: the
 * supervisor is told. Finished: no-op.
 */
export const cancel: Handler<'cancel'> = ({ core, caller }, { id }) => {
  core.cancel(core.jobFor(caller, id));
  return core.store.durable().then(() => ({}));
};
