import type { ShareRow } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { flag, noExtra } from '../argv';
import { request } from '../client';
import { renderTable } from '../format/table';
import { writeOut } from '../io';
import { JSON_OPTION } from './json-option';

/** Device-seconds as the table shows them: one decimal. */
const num = (x: number) => x.toFixed(1);

/** The fair-share table (docs/behaviour.md §22.2): rank, user, uid, raw and decayed device-seconds. */
export function shareTable(rows: readonly ShareRow[]): string {
  if (rows.length === 0) return 'No usage recorded yet.\n';
  return renderTable(['RANK', 'USER', 'UID', 'USAGE', 'DECAYED'], rows.map((r) => [String(r.rank), r.user, String(r.uid), num(r.usage), num(r.decayed)]));
}

const share: XCommand = {
  command: 'share',
  describe: "Fair share: each user's device-seconds, raw and decayed, and their rank (lowest usage first)",
  usage: '[OPTIONS]',
  options: JSON_OPTION,
  builder: (y) => y.options(JSON_OPTION),
  async handler(args) {
    noExtra(args, 0);
    const rows = await request('share', {});
    await writeOut(flag(args.json) ? JSON.stringify(rows, null, 2) + '\n' : shareTable(rows));
  },
};

export default share;
