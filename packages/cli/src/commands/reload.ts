import type { XCommand } from '../command';
import { noExtra } from '../argv';
import { request } from '../client';
import { CliError, ExitWith } from '../errors';

const reload: XCommand = {
  command: 'reload',
  describe: "Re-read the daemon's configuration file (administrator); running jobs are not touched",
  usage: '',
  options: {},
  builder: (y) => y,
  async handler(args) {
    noExtra(args, 0);
    try {
      await request('reload', {});
    } catch (e) {
      // One problem per line, each printed as the daemon's start would.
      if (e instanceof CliError && e.code === 'INVALID_CONFIG') {
        for (const line of e.message.split('\n')) process.stderr.write(`xlurm: ${line}\n`);
        throw new ExitWith(1);
      }
      throw e;
    }
    process.stdout.write('configuration reloaded\n');
  },
};

export default reload;
