import type { XCommand } from '../command';
import { jobId, noExtra } from '../argv';
import { engine } from '../engine';
import { UsageError } from '../errors';

export async function cancelJob(id: number): Promise<void> {
  await engine().cancel(id);
  process.stdout.write(`Cancellation requested for job ${id}\n`);
}

const cancel: XCommand = {
  command: 'cancel',
  aliases: ['xcancel'],
  describe: 'Cancel a pending or running job',
  usage: '[OPTIONS] <JOB_ID>',
  options: {},
  builder: (y) => y,
  async handler(args) {
    noExtra(args, 1);
    if (args._[0] === undefined) throw new UsageError('the following required arguments were not provided:\n  <JOB_ID>');
    await cancelJob(jobId(args._[0], '<JOB_ID>'));
  },
};

export default cancel;
