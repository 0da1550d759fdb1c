/**
 * The clients' own read of the configuration file's `[cluster]` table
 * (docs/behaviour.md §27.1): every xrun/xbatch/xqueue/xcancel/xinfo must know
 * which engine drives it before it does anything, so this runs on each of
 * their starts. A full TOML parser and the schema checker (the daemon's
 * config/load.ts) cost several milliseconds to load; this reads the file as
 * text, returns at once when it has no `[cluster]` header, and otherwise
 * parses just that table's few key forms (strings and an inline table of
 * strings). `xlurm config check` still judges the whole file with the
 * daemon's reader, which knows the same keys (config/schema.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DeviceKind } from '@xlurm/protocol';
import { KIND_LABEL, parseKind } from '@xlurm/protocol';
import { CliError } from '../errors';

export const DEFAULT_CLIENT_CONFIG = '/etc/xlurm/xlurm.toml';

export interface ClusterConfig {
  /** '' (this host's daemon) or 'slurm'. */
  engine: '' | 'slurm';
  /** Slurm partition for every job; '' = the cluster's default. */
  partition: string;
  /** The GRES name per vendor (docs/behaviour.md §27.1). */
  gres: Partial<Record<DeviceKind, string>>;
  /** The file read ('' when none was there). */
  file: string;
}

/** What [cluster] gres is when the file does not set it. */
export const DEFAULT_GRES: Readonly<Partial<Record<DeviceKind, string>>> = { nvidia: 'gpu' };

const LOCAL: ClusterConfig = { engine: '', partition: '', gres: { ...DEFAULT_GRES }, file: '' };

/** The file the clients read: $XLURM_CONFIG, else /etc/xlurm/xlurm.toml (a missing default is no error). */
export function clientConfigFile(env: NodeJS.ProcessEnv = process.env): { file: string; named: boolean } {
  if (env.XLURM_CONFIG) return { file: path.resolve(env.XLURM_CONFIG), named: true };
  return { file: DEFAULT_CLIENT_CONFIG, named: false };
}

/** Read `[cluster]` from the clients' configuration file. */
export function readCluster(env: NodeJS.ProcessEnv = process.env): ClusterConfig {
  const { file } = clientConfigFile(env);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    // A file the caller cannot read (missing, or kept root-only for the daemon) has no
    // [cluster] for them: this host's daemon, as before the table existed. Judging the
    // file as a whole is `xlurm config check`'s and the daemon's job.
    return LOCAL;
  }
  if (!text.includes('[cluster')) return { ...LOCAL, file };
  return parseCluster(text, file);
}

class Bad extends CliError {}

/** The `[cluster]` table (and a `[cluster.gres]` sub-table) of a TOML text. */
export function parseCluster(text: string, file: string): ClusterConfig {
  const out: ClusterConfig = { engine: '', partition: '', gres: { ...DEFAULT_GRES }, file };
  let table = '';
  let gresSet = false;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = stripComment(lines[i]!).trim();
    if (line === '') continue;
    const header = /^\[\s*([A-Za-z0-9_.\s"-]+?)\s*\]$/.exec(line);
    if (header) { table = header[1]!.replace(/\s+/g, ''); continue; }
    if (line.startsWith('[')) { table = line; continue; } // [[arrays]] and the like: not ours
    if (table !== 'cluster' && table !== 'cluster.gres') continue;
    const eq = line.indexOf('=');
    const where = (key: string) => `${file}:${i + 1}: ${key}`;
    if (eq < 0) throw new Bad(`${where(table)}: expected key = value`);
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    if (table === 'cluster.gres') {
      if (!gresSet) { out.gres = {}; gresSet = true; }
      setGres(out, key, parseString(value, where(`cluster.gres.${key}`)), where(`cluster.gres.${key}`));
      continue;
    }
    const full = `cluster.${key}`;
    if (key === 'engine') {
      const v = parseString(value, where(full));
      if (v !== '' && v !== 'slurm') throw new Bad(`${where(full)}: invalid engine '${v}': use "" or "slurm"`);
      out.engine = v;
    } else if (key === 'partition') {
      out.partition = parseString(value, where(full));
    } else if (key === 'gres') {
      out.gres = {};
      gresSet = true;
      for (const [k, v] of parseInlineTable(value, where(full))) setGres(out, k, v, where(`${full}.${k}`));
    } else {
      throw new Bad(`${where(full)}: unknown key`);
    }
  }
  return out;
}

function setGres(out: ClusterConfig, key: string, value: string, where: string): void {
  // The vendor labels only, as the daemon's schema (config/schema.ts) has them.
  const kind = (Object.values(KIND_LABEL) as string[]).includes(key) ? parseKind(key) : undefined;
  if (!kind) throw new Bad(`${where}: unknown vendor '${key}': use ${Object.values(KIND_LABEL).join(', ')}`);
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(value)) throw new Bad(`${where}: invalid GRES name '${value}'`);
  out.gres[kind] = value;
}

/** The line without a `#` comment (a `#` inside a quoted string stays). */
function stripComment(line: string): string {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') return line.slice(0, i);
  }
  return line;
}

function parseString(value: string, where: string): string {
  const m = /^"((?:[^"\\]|\\.)*)"$/.exec(value) ?? /^'([^']*)'$/.exec(value);
  if (!m) throw new Bad(`${where}: expected a string`);
  return value.startsWith('"') ? JSON.parse(`"${m[1]!}"`) as string : m[1]!;
}

function parseInlineTable(value: string, where: string): Array<[string, string]> {
  const m = /^\{(.*)\}$/.exec(value);
  if (!m) throw new Bad(`${where}: expected an inline table, e.g. { nv = "gpu" }`);
  const body = m[1]!.trim();
  if (body === '') return [];
  const pairs: Array<[string, string]> = [];
  const re = /\s*([A-Za-z0-9_-]+|"[^"]*")\s*=\s*("(?:[^"\\]|\\.)*"|'[^']*')\s*(,|$)/y;
  let at = 0;
  while (at < body.length) {
    re.lastIndex = at;
    const p = re.exec(body);
    if (!p) throw new Bad(`${where}: expected key = "string" pairs`);
    pairs.push([p[1]!.replace(/^"|"$/g, ''), parseString(p[2]!, where)]);
    at = re.lastIndex;
    if (p[3] === '') break;
  }
  return pairs;
}
