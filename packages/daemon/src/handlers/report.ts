import { statePaths } from '@xlurm/protocol';
import { reportDataOffLoop } from '../report/off-loop';
import type { Handler } from './types';

const DAY = 86400;

/**
 * `xlurm report`'s data (docs/behaviour.md §26.4): your own jobs; root (the daemon's
 * administrator) every user's and the samples. Read on a worker thread (report/off-loop.ts).
 */
export const report = (({ core, caller }, args) => {
  const until = core.now();
  return reportDataOffLoop({
    db: statePaths(core.home).db,
    since: until - (args.days ?? 7) * DAY,
    until,
    uid: core.isAdmin(caller) ? undefined : caller.uid,
    devices: core.deviceViews().map((v) => v.device),
  });
}) satisfies Handler<'report'>;
