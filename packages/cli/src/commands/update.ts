import type { XCommand } from '../command';
import type { OpArgs } from '@xlurm/protocol';
import { jobId, noExtra, present, single } from '../argv';
import { parseNice, parseQueueTimeout, parseTimeLimit } from '../submit';
import { request } from '../client';
import { UsageError } from '../errors';
import { resolveJobArg } from '../array';
import { parseBegin } from '../workflow-flags';

const UPDATE_OPTIONS = {
  'time-limit': { alias: 't', type: 'string', describe: 'New wall-clock limit (as for xbatch -t); not above the host maximum' },
  timeout: { type: 'string', describe: 'New queue-wait timeout, counted from submission (seconds, or a number with s, m, h or d)' },
  name: { alias: 'n', type: 'string', describe: 'New job name' },
  begin: { type: 'string', describe: 'New begin time: now, now+DURATION, HH:MM or YYYY-MM-DDTHH:MM[:SS] (local time)' },
  nice: { type: 'string', describe: 'New nice, 0 to 10000 (only root may lower it)' },
} as const;

/** The changes the options ask for (usage errors, exit 2, as xbatch's). */
export function updateArgs(args: Record<string, unknown> & { _: string[] }): OpArgs<'update'> {
  noExtra(args as never, 1);
  if (args._[0] === undefined) throw new UsageError('the following required arguments were not provided:\n  <JOB_ID>');
  const u: OpArgs<'update'> = { id: jobId(args._[0], '<JOB_ID>') };
  const limit = single(args['time-limit'], '--time-limit <TIME>');
  if (limit !== undefined) {
    // As xbatch's -t and --timeout, range included (docs/behaviour.md §28.4).
    const secs = parseTimeLimit(present(limit, '--time-limit <TIME>'));
    if (secs === 0) throw new UsageError('time-limit must be positive');
    u.time_limit = secs;
  }
  const timeout = single(args.timeout, '--timeout <DURATION>');
  if (timeout !== undefined) u.queue_timeout = parseQueueTimeout(present(timeout, '--timeout <DURATION>'));
  const name = single(args.name, '--name <NAME>');
  if (name !== undefined) u.name = name;
  const begin = single(args.begin, '--begin <TIME>');
  if (begin !== undefined) u.begin_at = parseBegin(present(begin, '--begin <TIME>'));
  const nice = single(args.nice, '--nice <NICE>');
  if (nice !== undefined) u.nice = parseNice(present(nice, '--nice <NICE>'));
  if (Object.keys(u).length === 1) throw new UsageError('nothing to update: give -t, --timeout, -n, --begin or --nice');
  return u;
}

const update: XCommand = {
  command: 'update',
  describe: "Change a pending job's time limit, queue-wait timeout, name, begin time or nice (owner or root)",
  usage: '<JOB_ID> [OPTIONS]',
  options: UPDATE_OPTIONS,
  builder: (y) => y.options(UPDATE_OPTIONS),
  async handler(args) {
    // `A_I` names an array task (docs/behaviour.md §23.2): resolved to its job id first.
    const first = args._[0];
    if (first !== undefined && /^[0-9]+_[0-9]+$/.test(first)) args._[0] = String((await resolveJobArg(first, '<JOB_ID>')).id);
    const u = updateArgs(args);
    await request('update', u);
    process.stdout.write(`Job ${u.id} updated\n`);
  },
};

export default update;
