import type { XCommand } from '../command';
import { resolveJobArg } from '../array';
import { request } from '../client';
import { UsageError } from '../errors';

/** Shared by hold and release (docs/behaviour.md §23.3): every id is checked before any changes. */
export function holdCommand(op: 'hold' | 'release', describe: string, done: string): XCommand {
  return {
    command: op,
    describe,
    usage: '<JOB_ID>...',
    options: {},
    builder: (y) => y,
    async handler(args) {
      if (args._.length === 0) throw new UsageError('the following required arguments were not provided:\n  <JOB_ID>...');
      // `A_I` names an array task (docs/behaviour.md §23.2).
      const ids: number[] = [];
      for (const a of args._) ids.push((await resolveJobArg(a, '<JOB_ID>')).id);
      await request(op, { ids });
      process.stdout.write(ids.map((id) => `Job ${id} ${done}\n`).join(''));
    },
  };
}

export default holdCommand('hold', 'Hold pending jobs: they do not start until released (owner or root)', 'held');
