import type { XCommand } from '../command';
import { noExtra } from '../argv';
import { ExitWith } from '../errors';
import { runDaemonMain } from '../lifecycle';

const clean: XCommand = {
  command: 'clean',
  describe: 'Remove job logs and daemon.log while the scheduler is stopped',
  usage: '',
  options: {},
  builder: (y) => y,
  async handler(args) {
    noExtra(args, 0);
    throw new ExitWith(await runDaemonMain(['clean']));
  },
};

export default clean;
