import type { XCommand } from '../command';
import { noExtra } from '../argv';
import { engine } from '../engine';
import { UsageError } from '../errors';
import { cancelTask, resolveJobArg } from '../array';

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
    // `A` cancels every task of array A (the daemon's rule for an array's id), `A_I` one task (docs/behaviour.md §23.2).
    const arg = await resolveJobArg(args._[0], '<JOB_ID>');
    await (arg.task ? cancelTask(args._[0], arg.id) : cancelJob(arg.id));
  },
};

export default cancel;
