import type { PoolView } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { JSON_OPTION } from './json-option';
import { flag, noExtra } from '../argv';
import { request } from '../client';
import { poolsText } from '../format/info';
import { engine } from '../engine';
import { writeOut } from '../io';

const INFO_OPTIONS = {
  pools: { type: 'boolean', describe: 'Show each vendor pool: free devices, groups, the largest request that fits now and ever, the reservation' },
  ...JSON_OPTION,
} as const;

const info: XCommand = {
  command: 'info',
  aliases: ['xinfo'],
  describe: 'Show devices, their status and the jobs holding them',
  usage: '[OPTIONS]',
  options: INFO_OPTIONS,
  builder: (y) => y.options(INFO_OPTIONS),
  async handler(args) {
    noExtra(args, 0);
    if (flag(args.pools)) {
      const pools = await request('pools', {}) as PoolView[];
      await writeOut(flag(args.json) ? JSON.stringify(pools, null, 2) + '\n' : poolsText(pools));
      return;
    }
    const report = await engine().info();
    await writeOut(flag(args.json) ? JSON.stringify(report.json, null, 2) + '\n' : report.text);
  },
};

export default info;
