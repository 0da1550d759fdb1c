import type { DeviceView } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { JSON_OPTION } from './json-option';
import { flag, noExtra } from '../argv';
import { request } from '../client';
import { infoTable } from '../format/info';
import { writeOut } from '../io';

const info: XCommand = {
  command: 'info',
  aliases: ['xinfo'],
  describe: 'Show devices, their status and the jobs holding them',
  usage: '[OPTIONS]',
  options: JSON_OPTION,
  builder: (y) => y.options(JSON_OPTION),
  async handler(args) {
    noExtra(args, 0);
    const views = await request('info', {}) as DeviceView[];
    await writeOut(flag(args.json) ? JSON.stringify(views, null, 2) + '\n' : infoTable(views));
  },
};

export default info;
