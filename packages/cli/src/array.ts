/**
 * xbatch's arrays and sweeps (docs/behaviour.md §23.2) and the `A_I` job
 * arguments of every command. The expansion itself is protocol's
 * (expandArray): `--dry-run` prints exactly what the daemon would submit.
 */
import * as fs from 'node:fs';
import type { Options } from 'yargs';
import type { JobSummary, Submission } from '@xlurm/protocol';
import { arraySubmissions, expandArray, isArraySubmission, parseArraySpec, parseParam, parseParamCsv } from '@xlurm/protocol';
import { jobId, many, present, single } from './argv';
import { engine } from './engine';
import { CliError, UsageError, osErrorText } from './errors';
import { escapeDebug } from './format/escape';

export const ARRAY_OPTIONS: Readonly<Record<string, Options>> = {
  array: { type: 'string', describe: 'A job array: indices like 0-99, 1,3,5 or 0-99:10, with %N for at most N running at once (%N alone with --param)' },
  param: { type: 'string', describe: 'NAME=V1,V2,...: one task per value, the cartesian product of every --param (repeatable; the last varies fastest)' },
  'param-file': { type: 'string', describe: 'A CSV file: a header of parameter names, one task per row' },
  'dry-run': { type: 'boolean', describe: 'Print the tasks that would be submitted; submit nothing' },
};

/** The array fields of xbatch's submission (none: not an array); the CSV file is read here. */
export function arrayFields(args: Record<string, unknown>, read: (file: string) => string = readCsv): Pick<Submission, 'array' | 'params' | 'param_rows'> {
  const out: Pick<Submission, 'array' | 'params' | 'param_rows'> = {};
  const spec = single(args.array, '--array <SPEC>');
  if (spec !== undefined) out.array = checkArraySpec(present(spec, '--array <SPEC>'));
  const params = many(args.param);
  if (params.length) {
    out.params = params.map((p) => {
      const r = parseParam(present(p, '--param <NAME=V1,V2,...>'));
      if ('code' in r) throw new UsageError(r.message);
      return r;
    });
  }
  const file = single(args['param-file'], '--param-file <FILE>');
  if (file !== undefined) {
    const r = parseParamCsv(read(present(file, '--param-file <FILE>')), file);
    if ('code' in r) throw new CliError(r.message);
    out.param_rows = r;
  }
  checkCombination(out);
  return out;
}

/**
 * How `--array`, `--param` and `--param-file` go together (a throttle only
 * beside a sweep, a parameter once, ...), with protocol's words, as a usage
 * error: checked on a stand-in of one value per parameter and one row, so
 * nothing large is built twice. Past the task limit is the daemon's refusal.
 */
function checkCombination(out: Pick<Submission, 'array' | 'params' | 'param_rows'>): void {
  if (!isArraySubmission(out)) return;
  if (out.array !== undefined && 'code' in parseArraySpec(out.array)) return; // over the limit (extensions 28.2)
  const probe: Pick<Submission, 'array' | 'params' | 'param_rows'> = {};
  if (out.array !== undefined) probe.array = out.array;
  if (out.params) probe.params = out.params.map((p) => ({ name: p.name, values: p.values.slice(0, 1) }));
  if (out.param_rows) probe.param_rows = { names: ['x'], rows: [['x']] }; // the file's own content is checked as it is read
  const r = expandArray(probe);
  if (r && 'code' in r) throw new UsageError(r.message);
}

/**
 * `--array`'s form is checked here, as every option's is: a spec that is no
 * spec is a usage error (exit 2) with protocol's words. How many tasks it
 * makes is the daemon's limit (extensions 28.2), refused as a submission is.
 */
function checkArraySpec(text: string): string {
  const r = parseArraySpec(text);
  if ('code' in r && r.message.startsWith('invalid array ')) throw new UsageError(r.message);
  return text;
}

function readCsv(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${osErrorText(e)}`);
  }
}

/** A word as a shell would need it quoted, for showing a command. */
function shellWord(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/**
 * `--dry-run`: one line per task, `<index>  <name>  <NAME=value …>  <command>`,
 * then how many there are; the same expansion the daemon makes, checked the
 * same way. A submission that is no array prints as one task.
 */
export function dryRunText(s: Submission): string {
  const plan = expandArray(s);
  if (plan && 'code' in plan) throw new CliError(plan.message);
  const base: Submission = { ...s };
  delete base.array; delete base.params; delete base.param_rows;
  const tasks = plan ? arraySubmissions(base, plan) : { specs: [base], members: [] };
  const lines: string[] = [];
  tasks.specs.forEach((t, i) => {
    const m = tasks.members[i];
    const cols = [m ? String(m.index) : '-', escapeDebug(t.name)];
    if (m?.params) cols.push(Object.entries(m.params).map(([k, v]) => `${k}=${shellWord(v)}`).join(' '));
    const words = t.command.map(shellWord).join(' ');
    // A script is shown by its place, `<script>`, then its arguments.
    cols.push(t.script !== null && t.script !== undefined ? (words ? `<script> ${words}` : '<script>') : words);
    lines.push(cols.join('  '));
  });
  const n = tasks.specs.length;
  const throttle = plan && plan.throttle !== null ? `, at most ${plan.throttle} running at once` : '';
  lines.push(`would submit ${n} task${n === 1 ? '' : 's'}${throttle}; nothing submitted`);
  return lines.map((l) => l + '\n').join('');
}

/** A job argument: a job id, or `A_I` (task I of array A). */
export interface JobArg { id: number; task: boolean }

const TASK = /^([0-9]+)_([0-9]+)$/;

/**
 * Resolve a job argument: a plain id as it is, `A_I` through the daemon
 * (the task of index I of array A; an unknown one is `job not found`).
 */
export async function resolveJobArg(text: string, display: string): Promise<JobArg> {
  const m = TASK.exec(text);
  if (!m) return { id: jobId(text, display), task: false };
  const array = jobId(m[1]!, display);
  const index = Number(m[2]!);
  if (!Number.isSafeInteger(index) || index > 0xffffffff) throw new CliError('job not found');
  return { id: await engine().task(array, index), task: true };
}

/** The tasks of array `id` (empty when it is no array's id). */
export async function arrayTasks(id: number): Promise<JobSummary[]> {
  return engine().tasks(id);
}

/** `xcancel A_I`: that task only (`array: false`, so the array's first task is not taken for the array). */
export async function cancelTask(label: string, id: number): Promise<void> {
  await engine().cancelTask(id, label);
  process.stdout.write(`Cancellation requested for job ${label}\n`);
}
