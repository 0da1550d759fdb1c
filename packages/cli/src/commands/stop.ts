import type { XCommand } from '../command';
import { noExtra } from '../argv';
import { request } from '../client';

const stop: XCommand = {
  command: 'stop',
  describe: 'Stop the scheduler; running jobs continue',
  usage: '',
  options: {},
  builder: (y) => y,
  async handler(args) {
    noExtra(args, 0);
    await request('stop', {});
    process.stdout.write('Scheduler stopped; running jobs continue.\n');
  },
};

export default stop;
