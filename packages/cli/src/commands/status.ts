import type { DaemonStatus } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { JSON_OPTION } from './json-option';
import { flag, noExtra } from '../argv';
import { request } from '../client';
import { statusText } from '../format/status';
import { writeOut } from '../io';

const status: XCommand = {
  command: 'status',
  describe: "Show the daemon's version, backend, uptime, exclusions and job counts",
  usage: '[OPTIONS]',
  options: JSON_OPTION,
  builder: (y) => y.options(JSON_OPTION),
  async handler(args) {
    noExtra(args, 0);
    const st = await request('status', {}) as DaemonStatus;
    await writeOut(flag(args.json) ? JSON.stringify(st, null, 2) + '\n' : statusText(st));
  },
};

export default status;
