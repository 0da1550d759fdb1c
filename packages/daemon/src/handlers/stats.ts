import { XlurmError } from '@xlurm/protocol';
import { accountFor } from '../accounts';
import { usageStats } from '../accounting/stats';
import type { Handler } from './types';

const DAY = 86400;

/**
 * `xlurm stats` (docs/behaviour.md §26.1): a user sees their own rows only;
 * root (and a non-root daemon's own account) every user and the host.
 */
export const stats = (({ core, caller }, args) => {
  const until = core.now();
  const since = args.since ?? until - (args.days ?? 7) * DAY;
  const admin = core.isAdmin(caller);
  let name: string | undefined;
  if (args.user !== undefined) {
    if (!admin && accountFor(caller.uid)?.name !== args.user) {
      throw new XlurmError('PERMISSION_DENIED', "permission denied: only root may see another user's statistics");
    }
    name = args.user;
  }
  return usageStats(core.historyDb, {
    since, until, host: admin, devices: core.devices.inventory.length,
    ...(admin ? {} : { uid: caller.uid }), ...(name !== undefined ? { name } : {}),
  });
}) satisfies Handler<'stats'>;
