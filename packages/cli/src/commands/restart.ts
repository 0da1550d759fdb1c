import { resolveHome } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { noExtra } from '../argv';
import { checkConfigFile, configFileFor } from '../config-file';
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
    // The file's errors are shown here, before the old daemon is stopped.
    const { file, named } = configFileFor(opts);
    checkConfigFile(file, named);
    process.stdout.write(`${await restartDaemon(resolveHome(), opts)}\n`);
  },
};

export default restart;
