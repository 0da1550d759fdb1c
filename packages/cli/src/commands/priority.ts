import type { XCommand } from '../command';
import { noExtra, present } from '../argv';
import { resolveJobArg } from '../array';
import { request } from '../client';
import { UsageError } from '../errors';

/** `xlurm priority ID N` (root): a pending job's admin priority, −1000..1000, high first (docs/behaviour.md §22.1). */
export function parsePriority(text: string): number {
  const display = '<PRIORITY>';
  if (!/^[+-]?[0-9]+$/.test(present(text, display))) throw new UsageError(`invalid value '${text}' for '${display}': must be a whole number from -1000 to 1000`);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < -1000 || n > 1000) throw new UsageError(`invalid value '${text}' for '${display}': use -1000 to 1000`);
  return n;
}

const priority: XCommand = {
  command: 'priority',
  describe: "Set a pending job's priority, -1000 to 1000: higher starts first (root)",
  usage: '<JOB_ID> <PRIORITY>',
  options: {},
  builder: (y) => y,
  async handler(args) {
    noExtra(args, 2);
    if (args._.length < 2) throw new UsageError('the following required arguments were not provided:\n  <JOB_ID> <PRIORITY>');
    const { id } = await resolveJobArg(args._[0]!, '<JOB_ID>');
    const p = parsePriority(args._[1]!);
    const job = await request('priority', { id, priority: p });
    process.stdout.write(`Job ${args._[0]}: priority ${job.priority ?? p}\n`);
  },
};

export default priority;
