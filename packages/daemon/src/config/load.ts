/**
 * Reading and checking the configuration file: TOML parsed by smol-toml,
 * then checked against the schema (schema.ts) with ajv. Every problem is
 * reported as `<file>:<line>: <dotted.key>: <problem>` (the line when known),
 * all of them at once, in line order. `xlurm config check`, the daemon's
 * start and every reload use this one function, so they never disagree
 * (extensions 28.1's directory rule included: dirs.ts).
 */
import * as fs from 'node:fs';
import Ajv, { type ErrorObject } from 'ajv';
import type * as SmolToml from 'smol-toml' with { 'resolution-mode': 'import' };
import { U32_MAX, durationSeconds } from '@xlurm/protocol';
import { ConfigSchema, type ConfigFile } from './schema';
import { keyLines, lineOf } from './lines';
import { groupProblems } from './groups';
import { daemonDirProblems } from './dirs';
import { requestLimitsProblems } from './request-limits';

/** Where the daemon looks when neither --config nor XLURM_CONFIG names a file. */
export const DEFAULT_CONFIG_PATH = '/etc/xlurm/xlurm.toml';

export interface ConfigProblem { file: string; line?: number; key?: string; problem: string }

/** `<file>:<line>: <key>: <problem>`, without the parts that are not known. */
export function formatProblem(p: ConfigProblem): string {
  return [p.line === undefined ? p.file : `${p.file}:${p.line}`, ...(p.key ? [p.key] : []), p.problem].join(': ');
}

/** A file that cannot be used; `message` has one problem per line. */
export class ConfigFileError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'ConfigFileError';
  }
}

export interface LoadedConfig {
  file: string;
  /** False when the default file does not exist: every key has its default. */
  found: boolean;
  settings: ConfigFile;
  /** Line of each key the file sets, for problems found later (e.g. an unknown device). */
  lines: ReadonlyMap<string, number>;
}

// smol-toml is an ES module that also ships a CommonJS build; its types
// describe the ES module, which a CommonJS file may not import statically.
const { parse, TomlError } = require('smol-toml') as typeof SmolToml;

const ajv = new Ajv({ strict: true, allErrors: true, verbose: true, coerceTypes: false, useDefaults: false });
ajv.addKeyword('problem');
// A duration's length, which a pattern cannot bound (schema.ts: Duration).
ajv.addKeyword({
  keyword: 'maxSeconds', type: 'string', schemaType: 'number', errors: false,
  validate: (max: number, data: string) => { const secs = durationSeconds(data); return secs !== null && secs <= max; },
});
const validate = ajv.compile(ConfigSchema);

/**
 * The configuration is shown to every user (`xlurm config show`), so a key
 * that looks like it holds a credential is refused wherever it appears.
 */
const CREDENTIAL = /token|password|secret/i;

function kindOf(v: unknown): string {
  if (typeof v === 'string') return `the string ${JSON.stringify(v)}`;
  if (typeof v === 'number') return Number.isInteger(v) ? `the integer ${v}` : `the number ${v}`;
  if (typeof v === 'boolean') return `the boolean ${v}`;
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Date) return 'a date';
  if (v !== null && typeof v === 'object') return 'a table';
  return String(v);
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'an integer', number: 'a number', string: 'a string', boolean: 'a boolean', array: 'an array', object: 'a table',
};

const show = (v: unknown) => (typeof v === 'string' ? v : v instanceof Date ? v.toISOString() : JSON.stringify(v));

/** Known keys of the table that `schema` describes, for an unknown key's message. */
function knownKeys(schema: unknown): string[] {
  const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return props ? Object.keys(props) : [];
}

function describe(e: ErrorObject): { key: string; problem: string } | undefined {
  const path = e.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const key = path.join('.');
  switch (e.keyword) {
    case 'additionalProperties': {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      if (CREDENTIAL.test(extra)) return undefined; // reported as a credential instead
      const known = knownKeys(e.parentSchema);
      const hint = !known.length ? '' : key ? ` (known keys of [${key}]: ${known.join(', ')})` : ` (known tables: ${known.map((k) => `[${k}]`).join(', ')})`;
      // `[federation]` is a table this version lacks, not a key (`verbose = true` is a key).
      const value = (e.data as Record<string, unknown> | undefined)?.[extra];
      const what = value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date) ? 'table' : 'key';
      return { key: key ? `${key}.${extra}` : extra, problem: `unknown ${what}${hint}` };
    }
    case 'type': {
      const want = String((e.params as { type: string }).type);
      return { key, problem: `must be ${TYPE_NAMES[want] ?? want}, not ${kindOf(e.data)}` };
    }
    case 'anyOf': {
      // A well-formed duration that is only too long gets its own words.
      const secs = typeof e.data === 'number' ? e.data : typeof e.data === 'string' ? durationSeconds(e.data) : null;
      if (secs !== null && secs > U32_MAX && Number.isInteger(secs)) {
        return { key, problem: `duration '${String(e.data)}' is too long: at most ${U32_MAX} seconds` };
      }
      const tmpl = (e.parentSchema as { problem?: string } | undefined)?.problem;
      return { key, problem: tmpl ? tmpl.replace('%s', show(e.data)) : `invalid value ${show(e.data)}` };
    }
    case 'minimum': return { key, problem: `must be at least ${(e.params as { limit: number }).limit}, not ${show(e.data)}` };
    case 'maximum': return { key, problem: `must be at most ${(e.params as { limit: number }).limit}, not ${show(e.data)}` };
    case 'maxItems': return { key, problem: `must have at most ${(e.params as { limit: number }).limit} entries` };
    case 'uniqueItems': {
      const { i } = e.params as { i: number; j: number };
      return { key, problem: `lists ${show((e.data as unknown[])[i])} more than once` };
    }
    default: return { key, problem: e.message ?? 'invalid value' };
  }
}

/** Every key path of a parsed document whose last part looks like a credential. */
function credentialKeys(doc: unknown, prefix: string[] = []): string[] {
  if (doc === null || typeof doc !== 'object' || doc instanceof Date) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(doc)) {
    const p = [...prefix, k];
    if (CREDENTIAL.test(k)) out.push(p.join('.'));
    else out.push(...credentialKeys(v, p));
  }
  return out;
}

/** Check TOML text; `file` is only the name used in the problems. */
export function checkConfigText(file: string, text: string): { settings: ConfigFile; lines: Map<string, number> } {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    if (e instanceof TomlError) {
      const first = e.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
      throw new ConfigFileError([{ file, line: e.line, problem: `invalid TOML: ${first}` }]);
    }
    throw e;
  }
  const lines = keyLines(text);
  const problems: ConfigProblem[] = credentialKeys(doc).map((key) => ({
    file, line: lineOf(lines, key), key,
    problem: 'looks like a credential; the configuration is shown to every user (xlurm config show), so keep secrets out of it',
  }));
  if (!validate(doc)) {
    // A value that matches none of a union's forms is one problem (the
    // union's own), not one per form.
    for (const e of validate.errors ?? []) {
      if (/\/anyOf\/\d+\//.test(e.schemaPath)) continue;
      const d = describe(e);
      if (d) problems.push({ file, line: lineOf(lines, d.key), key: d.key, problem: d.problem });
    }
  }
  // What the schema cannot say: the syntax of [devices.groups] (docs/behaviour.md §21.5).
  else {
    for (const g of groupProblems(doc as ConfigFile)) problems.push({ file, line: lineOf(lines, g.key), ...g });
    for (const g of requestLimitsProblems(doc as ConfigFile)) problems.push({ file, line: lineOf(lines, g.key), ...g }); // §28.2
  }
  if (problems.length) {
    problems.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
    throw new ConfigFileError(problems);
  }
  return { settings: doc as ConfigFile, lines };
}

/**
 * Read and check `file`. A missing file is an error when it was named
 * (--config, XLURM_CONFIG, `config check FILE`); the missing default file
 * means every key has its default.
 */
export function readConfigFile(file: string, named: boolean): LoadedConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT' && !named) return { file, found: false, settings: {}, lines: new Map() };
    const why = err.code === 'ENOENT' ? 'no such file' : err.code === 'EACCES' ? 'permission denied' : err.code === 'EISDIR' ? 'is a directory' : err.message;
    throw new ConfigFileError([{ file, problem: `cannot read the configuration file: ${why}` }]);
  }
  const checked = checkConfigText(file, text);
  // Extensions 28.1: the directories the daemon writes into on its own behalf (config/dirs.ts).
  const dirs = daemonDirProblems(file, checked.settings, checked.lines);
  if (dirs.length) throw new ConfigFileError(dirs);
  return { file, found: true, ...checked };
}
