/**
 * Argument parsing with clap's conventions: usage errors are UsageError
 * (printed as `error: …` plus the usage line, exit 2), numbers are parsed
 * strictly, positionals are never coerced, and `help` as a positional word is
 * just a word.
 *
 * This is the ONE place where words become options and values
 * (docs/behaviour.md §2.1, extensions 28.9), driven by each command's yargs
 * option definitions:
 * - a switch (a boolean option) never takes the next word: `--hold false.sh`
 *   is the switch and the script. It takes a value only as `--switch=VALUE`
 *   (true, false, yes, no, 1 or 0);
 * - an option that takes a value takes the next word unless that word is an
 *   option (`--wrap --nice 5`, `-g` last: `option --wrap needs a value`);
 *   a value that begins with `-` is given as `--option=-value` (a negative
 *   number such as `-1` is a value, so that its range can be reported);
 * - `--` ends the options; for xrun and xbatch (haltAtNonOption) so does the
 *   first word that is not an option: it and every later word are the job's.
 * The full yargs, whose loading costs more than everything else a client
 * does, is loaded only to render `--help` from the same definitions.
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

const aliasesOf = (o: Options): string[] => (o.alias === undefined ? [] : typeof o.alias === 'string' ? [o.alias] : [...o.alias]);

/** `foo` → `--foo`, `x` → `-x`. */
const optionName = (key: string) => (key.length === 1 ? `-${key}` : `--${key}`);

/** One option: the keys it sets in Args (its name and aliases) and whether it is a switch. */
interface OptionSpec { keys: string[]; isSwitch: boolean }

/** The words a switch's `=VALUE` may be (extensions 28.9). */
const SWITCH_VALUES: Readonly<Record<string, boolean>> = { true: true, yes: true, 1: true, false: false, no: false, 0: false };

/** A negative number is a word, not an option (`xlurm priority 3 -5`, `-g -1`). */
const NEGATIVE_NUMBER = /^-[0-9]/;

/** Does the word look like an option (so it is never taken as another option's value)? */
function isOptionWord(word: string): boolean {
  return word.startsWith('-') && word !== '-' && !NEGATIVE_NUMBER.test(word);
}

function switchValue(text: string, shown: string): boolean {
  const v = SWITCH_VALUES[text];
  if (v === undefined) throw new UsageError(`invalid value '${text}' for '${shown}': use true, false, yes, no, 1 or 0`);
  return v;
}

/** Parse with the command's options; unknown options are usage errors. */
export function parseArgv(cmd: Pick<XCommand, 'options' | 'haltAtNonOption'>, argv: readonly string[]): Args {
  const all = { ...cmd.options, ...COMMON_OPTIONS };
  const byName = new Map<string, OptionSpec>();
  for (const [key, o] of Object.entries(all)) {
    const spec: OptionSpec = { keys: [key, ...aliasesOf(o)], isSwitch: o.type === 'boolean' };
    for (const k of spec.keys) byName.set(optionName(k), spec);
  }
  const out: Record<string, unknown> = {};
  const positionals: string[] = [];
  // A repeated option gives an array of its values, in order (single() refuses it where once is the rule).
  const set = (spec: OptionSpec, v: string | boolean) => {
    for (const k of spec.keys) {
      const prev = out[k];
      out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
  };
  let i = 0;
  /** The value of a value-taking option typed as `shown`: inline, else the next word if it is no option. */
  const valueOf = (shown: string, inline: string | undefined): string => {
    if (inline !== undefined) return inline;
    const next = argv[i + 1];
    if (next === undefined || isOptionWord(next)) throw new UsageError(`option ${shown} needs a value`);
    i++;
    return next;
  };
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') { positionals.push(...argv.slice(i + 1)); break; }
    if (!isOptionWord(word)) {
      if (cmd.haltAtNonOption) { positionals.push(...argv.slice(i)); break; }
      positionals.push(word);
      continue;
    }
    if (word.startsWith('--')) {
      const eq = word.indexOf('=');
      const shown = eq < 0 ? word : word.slice(0, eq);
      const inline = eq < 0 ? undefined : word.slice(eq + 1);
      const spec = shown.length > 3 ? byName.get(shown) : undefined;
      if (!spec) throw new UsageError(`unexpected argument '${shown}' found`);
      set(spec, spec.isSwitch ? (inline === undefined ? true : switchValue(inline, shown)) : valueOf(shown, inline));
      continue;
    }
    // A group of short options (`-hV`); the first that takes a value takes the rest of the
    // word (`-g0`, `-g=0`) or else the next word.
    for (let j = 1; j < word.length; j++) {
      const shown = `-${word[j]}`;
      const spec = byName.get(shown);
      if (!spec) throw new UsageError(`unexpected argument '${shown}' found`);
      if (spec.isSwitch) { set(spec, true); continue; }
      const rest = word.slice(j + 1);
      set(spec, valueOf(shown, rest === '' ? undefined : rest.startsWith('=') ? rest.slice(1) : rest));
      break;
    }
  }
  return { ...out, _: positionals, $0: '' } as Args;
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

/**
 * A whole number of 0 or more, at most `max` (≤ 2^53 − 1), in Rust's
 * `u64::from_str` forms (digits, an optional `+`). The refusal says what is
 * allowed (docs/errors.md "Usage errors"):
 * `invalid value '-1' for '--gpus <N>': must be a whole number of 0 or more`,
 * `invalid value '11' for '--retry <N>': at most 10`.
 */
export function parseUnsigned(text: string, display: string, max: number = Number.MAX_SAFE_INTEGER): number {
  const digits = text.startsWith('+') ? text.slice(1) : text;
  let reason: string | undefined;
  if (!/^[0-9]+$/.test(digits)) reason = 'must be a whole number of 0 or more';
  else if (digits.replace(/^0+/, '').length > 16 || Number(digits) > max) reason = `at most ${max}`;
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
