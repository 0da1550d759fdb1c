import type { XCommand } from '../command';
import { parseIdList } from '../argv';
import { request } from '../client';
import { UsageError } from '../errors';

/** The text after an exclude/include: the whole exclusion set now in force. */
export function excludedText(excluded: readonly number[]): string {
  return excluded.length ? `Excluded device IDs: ${excluded.join(',')}\n` : 'No device IDs are excluded.\n';
}

/** Shared by exclude and include: ids from every positional, comma-separated. */
export function exclusionCommand(op: 'exclude' | 'include', describe: string): XCommand {
  return {
    command: op,
    describe,
    usage: '<ID[,ID...]>...',
    options: {},
    builder: (y) => y,
    async handler(args) {
      if (args._.length === 0) throw new UsageError('the following required arguments were not provided:\n  <ID[,ID...]>...');
      const ids = parseIdList(args._, '<ID[,ID...]>');
      const reply = await request(op, { ids });
      process.stdout.write(excludedText(reply.excluded ?? []));
    },
  };
}

export default exclusionCommand('exclude', 'Exclude device IDs from allocation (administrator); running jobs continue');
