import { resolveHome } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { noExtra } from '../argv';
import { DAEMON_OPTIONS, parseDaemonOptions } from '../daemon-options';
import { restartDaemon } from '../lifecycle';

const restart: XCommand = {
  command: 'restart',
  describe: "Stop the scheduler (refused while jobs run) and start it with these options",
  usage: '[OPTIONS]',
  options: DAEMON_OPTIONS,
  builder: (y) => y.options(DAEMON_OPTIONS),
  async handler(args) {
    noExtra(args, 0);
    const opts = parseDaemonOptions(args);
    process.stdout.write(`${await restartDaemon(resolveHome(), opts)}\n`);
  },
};

export default restart;
