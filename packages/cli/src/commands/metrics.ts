import type { OpResult } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { noExtra } from '../argv';
import { request } from '../client';
import { writeOut } from '../io';

const metrics: XCommand = {
  command: 'metrics',
  describe: 'Print the Prometheus metrics (the text that [accounting] metrics_file holds)',
  usage: '[OPTIONS]',
  options: {},
  builder: (y) => y,
  async handler(args) {
    noExtra(args, 0);
    const m = await request('metrics', {}) as OpResult<'metrics'>;
    await writeOut(m.text);
  },
};

export default metrics;
