/**
 * Environment capture (docs/behaviour.md §2.3, §P.8): the job receives the
 * submitter's environment byte for byte. The wire carries UTF-8 strings, so a
 * variable whose name or value is not valid UTF-8 is refused by name rather
 * than silently altered (Node would have replaced the bad bytes with U+FFFD).
 *
 * The raw bytes come from /proc/self/environ (what this process was exec'd
 * with). The set of variables is the process's own view, process.env: a
 * variable that start-up code removed (e.g. a test harness's NODE_OPTIONS
 * injection) is not sent, and one it added is. Valid UTF-8 round-trips through
 * process.env exactly, so every value sent equals its raw bytes.
 */
import * as fs from 'node:fs';
import { CliError } from './errors';

const strict = new TextDecoder('utf-8', { fatal: true });

function isUtf8(bytes: Uint8Array): boolean {
  try { strict.decode(bytes); return true; } catch { return false; }
}

/** Sort by name in byte order (the reference's BTreeMap<String, String>). */
export function sortEnv(entries: Iterable<[string, string]>): Record<string, string> {
  const list = [...entries].map((e) => [Buffer.from(e[0]), e] as const).sort((x, y) => Buffer.compare(x[0], y[0]));
  const env: Record<string, string> = {};
  for (const [, [k, v]] of list) env[k] = v;
  return env;
}

export interface RawEntry { name: Buffer; value: Buffer }

/**
 * The NUL-separated `NAME=VALUE` entries of an environ block, each split at
 * the first `=` after its first byte (as getenv(3) reads it); entries without
 * one are skipped.
 */
export function splitEnviron(block: Buffer): RawEntry[] {
  const out: RawEntry[] = [];
  let start = 0;
  while (start < block.length) {
    let end = block.indexOf(0, start);
    if (end < 0) end = block.length;
    const entry = block.subarray(start, end);
    start = end + 1;
    const eq = entry.indexOf(0x3d, 1);
    if (eq > 0) out.push({ name: entry.subarray(0, eq), value: entry.subarray(eq + 1) });
  }
  return out;
}

function refuse(name: string): never {
  throw new CliError(`environment variable ${name} is not valid UTF-8; unset or fix it before submitting`);
}

/**
 * The environment to submit: `view` (the process's variables) checked against
 * the raw `block`. A raw name that is not valid UTF-8, or a variable of the
 * view whose raw value is not, is refused; valid raw entries the view no
 * longer has are ignored.
 * Without a view, the block alone is the environment (first duplicate wins).
 */
export function envFromEnviron(block: Buffer, view?: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const raw = splitEnviron(block);
  if (!view) {
    const env = new Map<string, string>();
    for (const { name, value } of raw) {
      const n = name.toString('utf8');
      if (!isUtf8(name) || !isUtf8(value)) refuse(n);
      if (!env.has(n)) env.set(n, value.toString('utf8'));
    }
    return sortEnv(env);
  }
  for (const { name, value } of raw) {
    const n = name.toString('utf8');
    // Node leaves a variable with an invalid name out of process.env: refuse it
    // rather than drop it silently.
    if (!isUtf8(name)) refuse(n);
    if (!isUtf8(value) && Object.prototype.hasOwnProperty.call(view, n)) refuse(n);
  }
  return sortEnv(Object.entries(view).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** The whole environment of this process, sorted by name. */
export function captureEnv(): Record<string, string> {
  let block: Buffer | undefined;
  if (process.platform === 'linux') {
    try { block = fs.readFileSync('/proc/self/environ'); } catch { block = undefined; }
  }
  const view = process.env as Record<string, string | undefined>;
  if (block) return envFromEnviron(block, view);
  return sortEnv(Object.entries(view).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
