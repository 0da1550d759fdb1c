import type { XCommand } from '../command';
import { noExtra } from '../argv';
import { resolveJobArg } from '../array';
import { request } from '../client';
import { UsageError } from '../errors';

/** `xlurm top ID`: ahead of your other pending jobs, never of other users' (docs/behaviour.md §23.3). */
const top: XCommand = {
  command: 'top',
  describe: "Move one of your pending jobs ahead of your other pending jobs (never ahead of other users')",
  usage: '<JOB_ID>',
  options: {},
  builder: (y) => y,
  async handler(args) {
    noExtra(args, 1);
    if (args._[0] === undefined) throw new UsageError('the following required arguments were not provided:\n  <JOB_ID>');
    const { id } = await resolveJobArg(args._[0], '<JOB_ID>');
    const job = await request('top', { id });
    process.stdout.write(`Job ${args._[0]} is now first among ${job.owner.name}'s pending jobs\n`);
  },
};

export default top;
