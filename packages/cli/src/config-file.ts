/**
 * Checking a configuration file from a client (`xlurm config check`, and
 * `xlurm start|restart` before they start a daemon): the daemon package's
 * own reader, so a client and the daemon never judge a file differently.
 * Loaded only here: TOML and schema code cost nothing to other commands.
 */
import * as path from 'node:path';
import type { DaemonOptions } from './daemon-options';
import { CliError, ExitWith } from './errors';
import { daemonEntry } from './lifecycle';

interface ConfigLoad {
  DEFAULT_CONFIG_PATH: string;
  readConfigFile(file: string, named: boolean): { found: boolean };
  ConfigFileError: new (...a: never[]) => Error;
}

function loader(): ConfigLoad {
  return require(path.join(path.dirname(daemonEntry()), 'config', 'load.js')) as ConfigLoad;
}

export function defaultConfigPath(): string { return loader().DEFAULT_CONFIG_PATH; }

/** The file a daemon started from this shell reads, as the daemon decides it (config/daemon.ts). */
export function configFileFor(opts: DaemonOptions, env: NodeJS.ProcessEnv = process.env): { file: string; named: boolean } {
  if (opts.config !== undefined) return { file: opts.config, named: true };
  if (env.XLURM_CONFIG) return { file: path.resolve(env.XLURM_CONFIG), named: true };
  return { file: defaultConfigPath(), named: false };
}

/**
 * Check `file`: resolves to whether it exists (a missing default file is
 * fine); else prints each problem as `xlurm: <file>:<line>: <key>: <problem>`
 * and exits 1.
 */
export function checkConfigFile(file: string, named: boolean): boolean {
  const m = loader();
  try {
    return m.readConfigFile(file, named).found;
  } catch (e) {
    if (!(e instanceof m.ConfigFileError)) throw e instanceof Error ? new CliError(e.message) : e;
    for (const line of e.message.split('\n')) process.stderr.write(`xlurm: ${line}\n`);
    throw new ExitWith(1);
  }
}
