import type { ConfigView } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { flag } from '../argv';
import { request } from '../client';
import { checkConfigFile, configFileFor } from '../config-file';
import { UsageError } from '../errors';
import { writeOut } from '../io';
import { JSON_OPTION } from './json-option';

const USAGE = 'check [FILE] | show [--json]';

/** The file to check when none is named: the running daemon's, else the one a new daemon would read. */
async function daemonsFile(): Promise<{ file: string; named: boolean }> {
  try {
    const v = await request('config', {}, { timeoutMs: 5000, busyRetryForMs: 1000 });
    return { file: v.file, named: v.found };
  } catch {
    return configFileFor({});
  }
}

const tomlValue = (v: unknown) => JSON.stringify(v).replace(/,/g, ', ');

/** The effective settings as a TOML file would set them; keys set by options are marked. */
export function configText(v: ConfigView): string {
  const fromFlags = new Set(v.from_flags);
  const out = [`# ${v.file}${v.found ? '' : ' (no such file: every key has its default)'}`];
  for (const [table, keys] of Object.entries(v.config)) {
    out.push(`[${table}]`);
    for (const [k, value] of Object.entries(keys as Record<string, unknown>)) {
      // A sub-table (`[devices.groups]`) as dotted keys, which TOML reads the same.
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        for (const [kk, vv] of Object.entries(value as Record<string, unknown>)) out.push(`${k}.${kk} = ${tomlValue(vv)}`);
        continue;
      }
      const line = `${k} = ${tomlValue(value)}`;
      out.push(fromFlags.has(`${table}.${k}`) ? `${line.padEnd(32)} # from a command-line option` : line);
    }
  }
  return out.join('\n') + '\n';
}

const config: XCommand = {
  command: 'config',
  describe: "Check a configuration file, or show the running daemon's settings",
  usage: USAGE,
  options: JSON_OPTION,
  builder: (y) => y.options(JSON_OPTION),
  async handler(args) {
    const [sub, ...rest] = args._;
    if (sub === 'check') {
      if (rest.length > 1) throw new UsageError(`unexpected argument '${rest[1]}' found`);
      if (flag(args.json)) throw new UsageError("unexpected argument '--json' found");
      const { file, named } = rest.length ? { file: rest[0]!, named: true } : await daemonsFile();
      const found = checkConfigFile(file, named);
      if (!found) process.stderr.write(`xlurm: ${file} does not exist; the daemon uses the defaults\n`);
      process.stdout.write(`${file}: ok\n`);
      return;
    }
    if (sub === 'show') {
      if (rest.length) throw new UsageError(`unexpected argument '${rest[0]}' found`);
      const v = await request('config', {});
      await writeOut(flag(args.json) ? JSON.stringify(v, null, 2) + '\n' : configText(v));
      return;
    }
    if (sub === undefined) throw new UsageError(`a subcommand is required: ${USAGE}`);
    throw new UsageError(`unrecognized subcommand '${sub}'`);
  },
};

export default config;
