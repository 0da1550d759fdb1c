/**
 * Options of `xlurm daemon` (the CLI validated them already; we check again
 * because the daemon can be started directly).
 */
import { parseBackend } from '@xlurm/protocol';

export interface DaemonConfig {
  backend: string;
  maxRunning: number;
  retentionSecs: number;
  excludeIds: number[];
}

export class ConfigError extends Error {}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `7d`, `90m`, `30s`, `12h` → seconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)([smhd])$/.exec(text);
  if (!m) throw new ConfigError(`invalid retention ${JSON.stringify(text)}: use a number with s, m, h or d (e.g. 7d)`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

export function parseIdList(text: string): number[] {
  const ids = text.split(',').map((s) => s.trim());
  if (ids.some((s) => !/^\d+$/.test(s) || Number(s) > 0xffffffff)) throw new ConfigError(`invalid device ID list: ${text}`);
  return ids.map(Number);
}

export function parseDaemonArgs(args: string[]): DaemonConfig {
  const cfg: DaemonConfig = { backend: 'auto', maxRunning: 32, retentionSecs: 7 * 86400, excludeIds: [] };
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
        cfg.backend = b;
        break;
      }
      case '--max-running': {
        const v = value();
        if (!/^\d+$/.test(v)) throw new ConfigError(`invalid max-running: ${v}`);
        cfg.maxRunning = Number(v);
        break;
      }
      case '--retention': cfg.retentionSecs = parseDuration(value()); break;
      case '--exclude-device-ids': cfg.excludeIds.push(...parseIdList(value())); break;
      default: throw new ConfigError(`unknown daemon option: ${a}`);
    }
  }
  if (cfg.maxRunning === 0) throw new ConfigError('max-running must be positive');
  if (new Set(cfg.excludeIds).size !== cfg.excludeIds.length) throw new ConfigError('excluded device IDs must not contain duplicates');
  return cfg;
}
