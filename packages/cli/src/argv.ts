/**
 * Argument parsing with clap's conventions: usage errors are UsageError
 * (printed as `error: …` plus the usage line, exit 2), numbers are parsed
 * strictly, positionals are never coerced, and `help` as a positional word is
 * just a word.
 *
 * Parsing uses yargs' own parser (yargs-parser, with yargs' configuration
 * keys such as `halt-at-non-option`) driven by each command's yargs option
 * definitions, plus an unknown-option check (yargs' strictOptions). The full
 * yargs, whose loading costs more than everything else a client does, is
 * loaded only to render `--help` from the same definitions.
 */
import type { Options } from 'yargs';
import type { Args, XCommand } from './command';
import { CliError, UsageError } from './errors';

export type Parsed = { kind: 'args'; args: Args } | { kind: 'help'; text: string } | { kind: 'version' };

/** Options every command has. */
export const COMMON_OPTIONS: Readonly<Record<string, Options>> = {
  help: { alias: 'h', type: 'boolean', describe: 'Print help' },
  version: { alias: 'V', type: 'boolean', describe: 'Print version' },
};

interface DetailedResult { argv: Record<string, unknown> & { _: unknown[] }; error: Error | null }
type DetailedParser = (args: string[], opts: object) => DetailedResult;

let parser: DetailedParser | undefined;

/**
 * yargs-parser, the version yargs 17 itself uses (a direct dependency so the
 * bundle, scripts/bundle-cli.js, carries it: no package lookup at start-up).
 */
function yargsParser(): DetailedParser {
  parser ??= (require('yargs-parser') as { detailed: DetailedParser }).detailed;
  return parser;
}

export function parserConfiguration(haltAtNonOption: boolean): Record<string, boolean> {
  return {
    'halt-at-non-option': haltAtNonOption,
    'unknown-options-as-args': false,
    'parse-positional-numbers': false,
    'parse-numbers': false,
    'boolean-negation': false,
    'camel-case-expansion': false,
    'dot-notation': false,
    'short-option-groups': true,
    'populate--': false,
    'duplicate-arguments-array': true,
    'greedy-arrays': false,
    'strip-aliased': false,
  };
}

const aliasesOf = (o: Options): string[] => (o.alias === undefined ? [] : typeof o.alias === 'string' ? [o.alias] : [...o.alias]);

/** `foo` → `--foo`, `x` → `-x`. */
const optionName = (key: string) => (key.length === 1 ? `-${key}` : `--${key}`);

/** Parse with the command's options; unknown options are usage errors. */
export function parseArgv(cmd: Pick<XCommand, 'options' | 'haltAtNonOption'>, argv: readonly string[]): Args {
  const all = { ...cmd.options, ...COMMON_OPTIONS };
  const alias: Record<string, string[]> = {};
  const string: string[] = [];
  const boolean: string[] = [];
  const known = new Set<string>(['_', '--']);
  for (const [key, o] of Object.entries(all)) {
    alias[key] = aliasesOf(o);
    (o.type === 'boolean' ? boolean : string).push(key);
    known.add(key);
    for (const a of alias[key]!) known.add(a);
  }
  const result = yargsParser()([...argv], { alias, string, boolean, configuration: parserConfiguration(!!cmd.haltAtNonOption) });
  if (result.error) throw new UsageError(result.error.message);
  const parsed = result.argv;
  for (const key of Object.keys(parsed)) {
    if (!known.has(key)) throw new UsageError(`unexpected argument '${optionName(key)}' found`);
  }
  return { ...parsed, _: parsed._.map(String), $0: '' } as Args;
}

/** Help text rendered by yargs from the command's definitions. */
export async function helpText(cmd: XCommand, scriptName: string): Promise<string> {
  const yargs = require('yargs/yargs') as typeof import('yargs/yargs');
  const y = yargs([])
    .scriptName(scriptName)
    .locale('en')
    .help(false)
    .version(false)
    .wrap(Math.min(100, process.stdout.columns || 100))
    .usage(`${cmd.describe}\n\nUsage: $0 ${cmd.usage}`.trimEnd());
  return cmd.builder(y).options(COMMON_OPTIONS).getHelp();
}

/** Parse `argv` for one command; `--help`/`--version` short-circuit. */
export async function parseCommand(cmd: XCommand, scriptName: string, argv: readonly string[]): Promise<Parsed> {
  const args = parseArgv(cmd, argv);
  if (flag(args.help)) return { kind: 'help', text: await helpText(cmd, scriptName) };
  if (flag(args.version)) return { kind: 'version' };
  args.$0 = scriptName;
  return { kind: 'args', args };
}

/** A boolean flag's value (a repeated flag gives an array). */
export function flag(v: unknown): boolean {
  return Array.isArray(v) ? flag(v[v.length - 1]) : v === true;
}

/** The single value of an option; repeating it is a usage error (clap). */
export function single(v: unknown, display: string): string | undefined {
  if (v === undefined) return undefined;
  if (Array.isArray(v)) {
    if (v.length > 1) throw new UsageError(`the argument '${display}' cannot be used multiple times`);
    return single(v[0], display);
  }
  return String(v);
}

/** Every value of a repeatable option. */
export function many(v: unknown): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v.map(String) : [String(v)];
}

export const U32_MAX = 0xffffffff;

/** Rust's `u64::from_str` rules and messages, bounded by `max` (≤ 2^53 − 1). */
export function parseUnsigned(text: string, display: string, max: number = Number.MAX_SAFE_INTEGER): number {
  const digits = text.startsWith('+') ? text.slice(1) : text;
  let reason: string | undefined;
  if (text === '') reason = 'cannot parse integer from empty string';
  else if (!/^[0-9]+$/.test(digits)) reason = 'invalid digit found in string';
  else if (digits.replace(/^0+/, '').length > 16 || Number(digits) > max) reason = 'number too large to fit in target type';
  if (reason) throw new UsageError(`invalid value '${text}' for '${display}': ${reason}`);
  return Number(digits);
}

/** An option's value that must be present (the parser gives '' for `-g` with nothing after it). */
export function present(text: string, display: string): string {
  if (text === '') throw new UsageError(`a value is required for '${display}' but none was supplied`);
  return text;
}

/** Comma-separated unsigned ids, from every repetition of the option, in order. */
export function parseIdList(values: readonly string[], display: string): number[] {
  const ids: number[] = [];
  for (const v of values) {
    for (const part of present(v, display).split(',')) ids.push(parseUnsigned(part, display, U32_MAX));
  }
  return ids;
}

/** Positionals beyond `max` are a usage error. */
export function noExtra(args: Args, max: number): void {
  if (args._.length > max) throw new UsageError(`unexpected argument '${args._[max]}' found`);
}

/** A job id argument. Ids start at 1, so 0 names no job (the daemon's schema would refuse it). */
export function jobId(text: string, display: string): number {
  const id = parseUnsigned(present(text, display), display);
  if (id === 0) throw new CliError('job not found');
  return id;
}
