import { XlurmError } from '@xlurm/protocol';
import { requireAdmin } from './admin';
import type { Handler } from './types';

export const restart = ((ctx) => {
  requireAdmin(ctx.core, ctx.caller, 'stop or restart the scheduler');
  const ids = ctx.core.runningIds();
  if (ids.length) throw new XlurmError('JOBS_RUNNING', `cannot restart while jobs are running: ${ids.join(', ')}`);
  ctx.shutdownAfterReply();
  return {};
}) satisfies Handler<'restart'>;
