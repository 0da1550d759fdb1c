import type { XCommand } from '../command';
import { noExtra } from '../argv';
import { DAEMON_OPTIONS, daemonArgv, parseDaemonOptions } from '../daemon-options';
import { ExitWith } from '../errors';
import { runDaemonMain } from '../lifecycle';

const daemon: XCommand = {
  command: 'daemon',
  describe: 'Run the scheduler daemon in the foreground',
  usage: '[OPTIONS]',
  options: DAEMON_OPTIONS,
  builder: (y) => y.options(DAEMON_OPTIONS),
  async handler(args) {
    noExtra(args, 0);
    const opts = parseDaemonOptions(args);
    throw new ExitWith(await runDaemonMain(['daemon', ...daemonArgv(opts)]));
  },
};

export default daemon;
