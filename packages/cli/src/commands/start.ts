import { resolveHome } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { noExtra } from '../argv';
import { checkConfigFile, configFileFor } from '../config-file';
import { DAEMON_OPTIONS, parseDaemonOptions } from '../daemon-options';
import { startDaemon } from '../lifecycle';

const start: XCommand = {
  command: 'start',
  describe: 'Start the scheduler daemon in the background',
  usage: '[OPTIONS]',
  options: DAEMON_OPTIONS,
  builder: (y) => y.options(DAEMON_OPTIONS),
  async handler(args) {
    noExtra(args, 0);
    const opts = parseDaemonOptions(args);
    // The file's errors are shown here rather than only in the daemon's log.
    const { file, named } = configFileFor(opts);
    checkConfigFile(file, named);
    process.stdout.write(`${await startDaemon(resolveHome(), opts)}\n`);
  },
};

export default start;
