import type { DaemonStatus } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { JSON_OPTION } from './json-option';
import { flag, noExtra } from '../argv';
import { request } from '../client';
import { poolsText } from '../format/info';
import { engine } from '../engine';
import { UsageError } from '../errors';
import { watchScreen } from '../watch';
import { errLine, writeOut } from '../io';

const INFO_OPTIONS = {
  pools: { type: 'boolean', describe: 'Show each vendor pool: free devices, groups, the largest request that fits now and ever, the reservation' },
  ...JSON_OPTION,
  watch: { type: 'boolean', describe: 'Redraw in place every 2 s, like watch(1); Ctrl-C stops' },
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
    if (flag(args.watch)) {
      if (flag(args.json)) throw new UsageError("the argument '--watch' cannot be used with '--json'");
      const pools = flag(args.pools);
      return watchScreen(pools ? 'xinfo --pools' : 'xinfo',
        async () => (pools ? poolsText(await engine().pools()) : (await engine().info()).text));
    }
    if (flag(args.pools)) {
      const pools = await engine().pools();
      await writeOut(flag(args.json) ? JSON.stringify(pools, null, 2) + '\n' : poolsText(pools));
      return;
    }
    const report = await engine().info();
    await writeOut(flag(args.json) ? JSON.stringify(report.json, null, 2) + '\n' : report.text);
    // docs/behaviour.md §24.8: where jobs cannot be kept from other devices' nodes, say so (on
    // stderr, so the table stays what scripts parse); nothing to say on a host without devices.
    if (!flag(args.json) && engine().name === 'local' && Array.isArray(report.json) && report.json.length > 0) {
      const st = await request('status', {}) as DaemonStatus;
      if (st.device_isolation?.startsWith('off') || st.device_isolation?.startsWith('failing')) errLine(`device isolation: ${st.device_isolation}`);
    }
  },
};

export default info;
