/** Options of `xlurm start`, `daemon` and `restart` (docs/behaviour.md §2.2, §P.7, §9.5). */
import type { Options } from 'yargs';
import { BACKEND_NAMES, parseBackend } from '@xlurm/protocol';
import { many, parseIdList, parseUnsigned, present, single, U32_MAX } from './argv';
import { UsageError } from './errors';

export interface DaemonOptions {
  backend: string;
  maxRunning: number;
  retention: string;
  exclude: number[];
}

export const DEFAULTS: Readonly<DaemonOptions> = { backend: 'auto', maxRunning: 32, retention: '7d', exclude: [] };

export const DAEMON_OPTIONS: Readonly<Record<string, Options>> = {
  backend: { type: 'string', describe: `Device backend [default: auto] [possible values: ${BACKEND_NAMES.join(', ')}]` },
  'max-running': { type: 'string', describe: 'Most jobs running at once [default: 32]' },
  retention: { type: 'string', describe: 'How long finished jobs are kept: a number with s, m, h or d [default: 7d]' },
  'exclude-device-ids': { type: 'string', describe: 'Device IDs never to allocate, comma-separated (repeatable)' },
};

export function parseDaemonOptions(args: Record<string, unknown>): DaemonOptions {
  const backendText = single(args.backend, '--backend <BACKEND>');
  const maxText = single(args['max-running'], '--max-running <N>');
  const retention = single(args.retention, '--retention <DURATION>');
  let backend = DEFAULTS.backend;
  if (backendText !== undefined) {
    const b = parseBackend(present(backendText, '--backend <BACKEND>'));
    if (!b) throw new UsageError(`invalid value '${backendText}' for '--backend <BACKEND>' [possible values: ${BACKEND_NAMES.join(', ')}]`);
    backend = b;
  }
  if (retention !== undefined && !/^\d+[smhd]$/.test(retention)) {
    throw new UsageError(`invalid retention '${retention}': use a whole number followed by s, m, h or d (e.g. 7d)`);
  }
  const excludes = many(args['exclude-device-ids']);
  return {
    backend,
    maxRunning: maxText === undefined ? DEFAULTS.maxRunning : parseUnsigned(present(maxText, '--max-running <N>'), '--max-running <N>', U32_MAX),
    retention: retention ?? DEFAULTS.retention,
    exclude: excludes.length ? parseIdList(excludes, '--exclude-device-ids <LIST>') : [],
  };
}

/** The daemon's own argv for these options (after the `daemon` word). */
export function daemonArgv(o: DaemonOptions): string[] {
  const argv = ['--backend', o.backend, '--max-running', String(o.maxRunning), '--retention', o.retention];
  if (o.exclude.length) argv.push('--exclude-device-ids', o.exclude.join(','));
  return argv;
}
