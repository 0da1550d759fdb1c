import { requireAdmin } from './admin';
import type { Handler } from './types';

/** Reply first, then exit: running jobs continue under their supervisors. */
export const stop = ((ctx) => {
  requireAdmin(ctx.core, ctx.caller, 'stop or restart the scheduler');
  ctx.shutdownAfterReply();
  return {};
}) satisfies Handler<'stop'>;
