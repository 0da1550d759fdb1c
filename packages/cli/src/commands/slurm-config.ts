import type { XCommand } from '../command';
import { flag, noExtra } from '../argv';
import { ExitWith } from '../errors';
import { runDaemonMain } from '../lifecycle';
import { DAEMON_OPTIONS, daemonArgv, parseDaemonOptions } from '../daemon-options';
import { JSON_OPTION } from './json-option';

// What decides discovery: the file, the backend and the excluded devices.
const OPTIONS = {
  config: DAEMON_OPTIONS.config!, backend: DAEMON_OPTIONS.backend!, 'exclude-device-ids': DAEMON_OPTIONS['exclude-device-ids']!, ...JSON_OPTION,
} as const;

/**
 * `xlurm slurm-config` (docs/behaviour.md §27.2): this host's devices as a Slurm node's
 * configuration. Discovery is daemon code, so it runs as an entry of the daemon's main
 * (as `clean` does), in this process; no daemon need be running.
 */
const slurmConfig: XCommand = {
  command: 'slurm-config',
  describe: "Print this host's Slurm node configuration from its device discovery: the slurm.conf node line, gres.conf, a TaskProlog",
  usage: '[OPTIONS]',
  options: OPTIONS,
  builder: (y) => y.options(OPTIONS),
  async handler(args) {
    noExtra(args, 0);
    throw new ExitWith(await runDaemonMain(['slurm-config', ...daemonArgv(parseDaemonOptions(args)), ...(flag(args.json) ? ['--json'] : [])]));
  },
};

export default slurmConfig;
