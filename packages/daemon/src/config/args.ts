/**
 * Options of `xlurm daemon` (the CLI validated them already; we check again
 * because the daemon can be started directly). Only the options given are
 * returned: each one wins over the configuration file, and a setting no
 * option names comes from the file, else from its default.
 */
import * as path from 'node:path';
import { U32_MAX, durationSeconds, parseBackend } from '@xlurm/protocol';

/** The settings an option can give (see daemon.ts for their meaning). */
export interface DaemonFlags {
  backend?: string;
  maxRunning?: number;
  retention?: string;
  retentionSecs?: number;
  excludeIds?: number[];
}

export interface DaemonArgs {
  flags: DaemonFlags;
  /** --config FILE, absolute. */
  config?: string;
}

export class ConfigError extends Error {}

/** `7d`, `90m`, `30s`, `12h` → seconds (the option's form: a unit is required). */
export function parseDuration(text: string): number {
  const secs = durationSeconds(text, { unitRequired: true });
  if (secs === null) throw new ConfigError(`invalid retention ${JSON.stringify(text)}: use a number with s, m, h or d (e.g. 7d)`);
  return secs;
}

/** A duration the schema accepted: seconds, or a number with s, m, h or d. */
export function durationSecs(value: number | string): number {
  return typeof value === 'number' ? value : durationSeconds(value)!;
}

export function parseIdList(text: string): number[] {
  const ids = text.split(',').map((s) => s.trim());
  if (ids.some((s) => !/^\d+$/.test(s) || Number(s) > U32_MAX)) throw new ConfigError(`invalid device ID list: ${text}`);
  return ids.map(Number);
}

export function parseDaemonArgs(args: string[]): DaemonArgs {
  const flags: DaemonFlags = {};
  let config: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.indexOf('=');
    const [flag, inline] = a.startsWith('--') && eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined];
    const value = (): string => {
      const v = inline ?? args[++i];
      if (v === undefined) throw new ConfigError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--backend': {
        const b = parseBackend(value());
        if (!b) throw new ConfigError(`invalid backend: ${args[i]}`);
        flags.backend = b;
        break;
      }
      case '--max-running': {
        const v = value();
        if (!/^\d+$/.test(v)) throw new ConfigError(`invalid max-running: ${v}`);
        flags.maxRunning = Number(v);
        break;
      }
      case '--retention': {
        const v = value();
        flags.retentionSecs = parseDuration(v);
        flags.retention = v;
        break;
      }
      case '--exclude-device-ids': (flags.excludeIds ??= []).push(...parseIdList(value())); break;
      case '--config': {
        const v = value();
        if (v === '') throw new ConfigError('--config needs a file name');
        config = path.resolve(v);
        break;
      }
      default: throw new ConfigError(`unknown daemon option: ${a}`);
    }
  }
  if (flags.maxRunning === 0) throw new ConfigError('max-running must be positive');
  if (flags.excludeIds && new Set(flags.excludeIds).size !== flags.excludeIds.length) {
    throw new ConfigError('excluded device IDs must not contain duplicates');
  }
  return config === undefined ? { flags } : { flags, config };
}
