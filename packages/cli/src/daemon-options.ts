/**
 * Options of `xlurm start`, `daemon` and `restart` (docs/behaviour.md §2.2, §P.7, §9.5).
 * Only the options given are passed on: each wins over the daemon's
 * configuration file, and what no option sets comes from the file, else
 * from the default shown in the help (docs/admin-guide.md, Configuration file).
 */
import * as path from 'node:path';
import type { Options } from 'yargs';
import { BACKEND_NAMES, durationSeconds, parseBackend } from '@xlurm/protocol';
import { many, parseIdList, parseUnsigned, present, single, U32_MAX } from './argv';
import { UsageError } from './errors';

export interface DaemonOptions {
  backend?: string;
  maxRunning?: number;
  retention?: string;
  exclude?: number[];
  /** --config FILE, absolute. */
  config?: string;
}

/** No option given: every setting comes from the configuration file or its default. */
export const DEFAULTS: Readonly<DaemonOptions> = {};

export const DAEMON_OPTIONS: Readonly<Record<string, Options>> = {
  backend: { type: 'string', describe: `Device backend [default: auto] [possible values: ${BACKEND_NAMES.join(', ')}]` },
  'max-running': { type: 'string', describe: 'Most jobs running at once [default: 32]' },
  retention: { type: 'string', describe: 'How long finished jobs are kept: a number with s, m, h or d [default: 7d]' },
  'exclude-device-ids': { type: 'string', describe: 'Device IDs never to allocate, comma-separated (repeatable)' },
  config: { type: 'string', describe: 'Configuration file; options win over it [default: $XLURM_CONFIG, else /etc/xlurm/xlurm.toml]' },
};

export function parseDaemonOptions(args: Record<string, unknown>): DaemonOptions {
  const backendText = single(args.backend, '--backend <BACKEND>');
  const maxText = single(args['max-running'], '--max-running <N>');
  const retention = single(args.retention, '--retention <DURATION>');
  const config = single(args.config, '--config <CONFIG>');
  let backend: string | undefined;
  if (backendText !== undefined) {
    const b = parseBackend(present(backendText, '--backend <BACKEND>'));
    if (!b) throw new UsageError(`invalid value '${backendText}' for '--backend <BACKEND>' [possible values: ${BACKEND_NAMES.join(', ')}]`);
    backend = b;
  }
  if (retention !== undefined && durationSeconds(retention, { unitRequired: true }) === null) {
    throw new UsageError(`invalid retention '${retention}': use a whole number followed by s, m, h or d (e.g. 7d)`);
  }
  const excludes = many(args['exclude-device-ids']);
  const o: DaemonOptions = {};
  if (backend !== undefined) o.backend = backend;
  if (maxText !== undefined) o.maxRunning = parseUnsigned(present(maxText, '--max-running <N>'), '--max-running <N>', U32_MAX);
  if (retention !== undefined) o.retention = retention;
  if (excludes.length) o.exclude = parseIdList(excludes, '--exclude-device-ids <LIST>');
  // Absolute: a reload reads it again, whatever the daemon's directory.
  if (config !== undefined) o.config = path.resolve(present(config, '--config <CONFIG>'));
  return o;
}

/** The daemon's own argv for these options (after the `daemon` word). */
export function daemonArgv(o: DaemonOptions): string[] {
  const argv: string[] = [];
  if (o.config !== undefined) argv.push('--config', o.config);
  if (o.backend !== undefined) argv.push('--backend', o.backend);
  if (o.maxRunning !== undefined) argv.push('--max-running', String(o.maxRunning));
  if (o.retention !== undefined) argv.push('--retention', o.retention);
  if (o.exclude?.length) argv.push('--exclude-device-ids', o.exclude.join(','));
  return argv;
}
