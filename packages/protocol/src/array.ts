/**
 * Job arrays and parameter sweeps (docs/behaviour.md §23.2), defined once:
 * `xbatch --dry-run` prints what `expandArray` makes, and the daemon submits
 * exactly that, so the two can never disagree.
 *
 * A submission is an array when it carries `array` (the `--array` SPEC as
 * written: `0-99`, `1,3,5`, `0-99:10`, each with an optional `%N`, or `%N`
 * alone beside parameters), `params` (`--param NAME=V1,V2`, repeatable: the
 * cartesian product, the last varying fastest) or `param_rows` (a CSV file:
 * a header of names and one task per row). Each task is a plain submission
 * of its own: name `<name>[<index>]`, every `{NAME}` of its command replaced
 * by the value verbatim, and the array fields gone.
 *
 * Types only from the schemas: the CLI loads this module for xbatch.
 */
import type { Submission } from './schemas';
import type { RequestError } from './request';

/** The most tasks one array may have. */
export const MAX_ARRAY_TASKS = 100000;

/** The largest task index (Slurm's own limit is far lower; this keeps every index a safe integer in JSON and SQL). */
const MAX_INDEX = 0x7fffffff;

/** What one task of an array is: its index and, for sweeps, its parameter values by name. */
export interface ArrayTask { index: number; params: Record<string, string> | null }

/** An array as it is submitted: its tasks in id order, and the throttle. */
export interface ArrayPlan {
  tasks: ArrayTask[];
  /** `%N`: at most this many tasks running at once; null: no limit. */
  throttle: number | null;
  min: number;
  max: number;
}

/** What the daemon keeps of one task (besides its own submission). */
export interface ArrayMembership {
  /** The array's id: its first task's job id. */
  id: number;
  index: number;
  count: number;
  min: number;
  max: number;
  throttle: number | null;
  params: Record<string, string> | null;
}

const invalid = (message: string): RequestError => ({ code: 'INVALID_ARGUMENT', message });
const isError = (v: unknown): v is RequestError => typeof v === 'object' && v !== null && 'code' in v && 'message' in v;

/** A parameter's name: it becomes `XLURM_PARAM_<NAME>` and `{NAME}`, so an environment variable's characters. */
export const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const tooMany = (n: number) => invalid(`array of ${n} tasks: at most ${MAX_ARRAY_TASKS} tasks per array`);

const badSpec = (text: string) =>
  invalid(`invalid array '${text}': use indices like 0-99, 1,3,5 or 0-99:10, optionally followed by %N (at most N running at once)`);

const num = (s: string): number | null => (/^[0-9]{1,10}$/.test(s) && Number(s) <= MAX_INDEX ? Number(s) : null);

/**
 * `--array SPEC`: the indices (ascending, each once) and the throttle.
 * Counted before anything is built, so `0-4000000000` costs nothing.
 * `%N` alone gives no indices (for use beside `--param`).
 */
export function parseArraySpec(text: string): { indices: number[] | null; throttle: number | null } | RequestError {
  let body = text;
  let throttle: number | null = null;
  const pct = text.indexOf('%');
  if (pct >= 0) {
    const n = num(text.slice(pct + 1));
    if (n === null || n === 0) return badSpec(text);
    throttle = n;
    body = text.slice(0, pct);
  }
  if (body === '') return pct >= 0 ? { indices: null, throttle } : badSpec(text);
  const ranges: Array<[number, number, number]> = [];
  let total = 0;
  for (const part of body.split(',')) {
    const m = /^([0-9]+)(?:-([0-9]+)(?::([0-9]+))?)?$/.exec(part);
    if (!m) return badSpec(text);
    const lo = num(m[1]!);
    const hi = m[2] === undefined ? lo : num(m[2]);
    const step = m[3] === undefined ? 1 : num(m[3]);
    if (lo === null || hi === null || step === null || step === 0 || hi < lo) return badSpec(text);
    total += Math.floor((hi - lo) / step) + 1;
    if (total > MAX_ARRAY_TASKS) return tooMany(total);
    ranges.push([lo, hi, step]);
  }
  const seen = new Set<number>();
  for (const [lo, hi, step] of ranges) for (let i = lo; i <= hi; i += step) seen.add(i);
  return { indices: [...seen].sort((a, b) => a - b), throttle };
}

/** `--param NAME=V1,V2,…`: one parameter and its values, or an error. */
export function parseParam(text: string): { name: string; values: string[] } | RequestError {
  const eq = text.indexOf('=');
  const name = eq < 0 ? text : text.slice(0, eq);
  if (eq < 0 || !PARAM_NAME.test(name)) return invalid(`invalid --param '${text}': use NAME=V1,V2,... (NAME: letters, digits and _)`);
  return { name, values: text.slice(eq + 1).split(',') };
}

/**
 * A CSV file's text (RFC 4180: `,` between fields, `"` quotes a field, `""`
 * inside quotes is one `"`, CRLF or LF ends a record; an empty last line is
 * no row): the header's names and the rows, or an error naming the line.
 */
export function parseParamCsv(text: string, file: string): { names: string[]; rows: string[][] } | RequestError {
  const records: Array<{ line: number; fields: string[] }> = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  let i = 0;
  const t = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const endRecord = () => { fields.push(field); records.push({ line: recordLine, fields }); fields = []; field = ''; };
  while (i < t.length) {
    const c = t[i]!;
    if (quoted) {
      if (c === '"') {
        if (t[i + 1] === '"') { field += '"'; i += 2; continue; }
        quoted = false; i++; continue;
      }
      if (c === '\n') line++;
      field += c; i++; continue;
    }
    if (c === '"' && field === '') { quoted = true; i++; continue; }
    if (c === ',') { fields.push(field); field = ''; i++; continue; }
    if (c === '\r' && t[i + 1] === '\n') { i++; continue; }
    if (c === '\n') { endRecord(); line++; recordLine = line; i++; continue; }
    field += c; i++;
  }
  if (quoted) return invalid(`${file}:${recordLine}: unterminated quoted field`);
  if (field !== '' || fields.length) endRecord();
  const header = records.shift();
  if (!header || (header.fields.length === 1 && header.fields[0] === '')) return invalid(`${file}: no header line`);
  const names = header.fields;
  for (const n of names) {
    if (!PARAM_NAME.test(n)) return invalid(`${file}:1: invalid parameter name '${n}' (letters, digits and _)`);
  }
  if (new Set(names).size !== names.length) return invalid(`${file}:1: a parameter name appears twice`);
  const rows: string[][] = [];
  for (const r of records) {
    if (r.fields.length !== names.length) {
      return invalid(`${file}:${r.line}: ${r.fields.length} field${r.fields.length === 1 ? '' : 's'}, the header has ${names.length}`);
    }
    rows.push(r.fields);
  }
  if (rows.length === 0) return invalid(`${file}: no rows after the header`);
  if (rows.length > MAX_ARRAY_TASKS) return tooMany(rows.length);
  return { names, rows };
}

/** The array fields of a submission. */
type ArrayFields = Pick<Submission, 'array' | 'params' | 'param_rows'>;

/** Is this submission an array (or a sweep)? */
export function isArraySubmission(s: ArrayFields): boolean {
  return s.array !== undefined || (s.params !== undefined && s.params.length > 0) || s.param_rows !== undefined;
}

/**
 * The tasks of an array submission, in id order, or the first problem (the
 * same words in xbatch and the daemon). Null when it is no array.
 */
export function expandArray(s: ArrayFields): ArrayPlan | RequestError | null {
  if (!isArraySubmission(s)) return null;
  let indices: number[] | null = null;
  let throttle: number | null = null;
  if (s.array !== undefined) {
    const spec = parseArraySpec(s.array);
    if (isError(spec)) return spec;
    ({ indices, throttle } = spec);
  }
  const params = s.params ?? [];
  if (params.length && s.param_rows) return invalid('--param cannot be combined with --param-file');
  const sweep = params.length > 0 || s.param_rows !== undefined;
  if (sweep && indices !== null) return invalid('with --param or --param-file, --array takes only a throttle: --array %N');
  if (!sweep && indices === null) return invalid('--array %N needs --param or --param-file (or give indices: --array 0-9%N)');
  let tasks: ArrayTask[];
  if (indices !== null) {
    tasks = indices.map((index) => ({ index, params: null }));
  } else if (s.param_rows) {
    const { names, rows } = s.param_rows;
    for (const n of names) if (!PARAM_NAME.test(n)) return invalid(`invalid parameter name '${n}' (letters, digits and _)`);
    if (new Set(names).size !== names.length) return invalid('a parameter name appears twice');
    if (rows.length === 0) return invalid('--param-file has no rows');
    if (rows.length > MAX_ARRAY_TASKS) return tooMany(rows.length);
    tasks = [];
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]!;
      if (row.length !== names.length) return invalid(`--param-file row ${r + 1} has ${row.length} fields, the header has ${names.length}`);
      const p: Record<string, string> = {};
      names.forEach((n, k) => { p[n] = row[k]!; });
      tasks.push({ index: r, params: p });
    }
  } else {
    const names = new Set<string>();
    let total = 1;
    for (const p of params) {
      if (!PARAM_NAME.test(p.name)) return invalid(`invalid --param name '${p.name}' (letters, digits and _)`);
      if (names.has(p.name)) return invalid(`--param ${p.name} is given twice`);
      if (p.values.length === 0) return invalid(`--param ${p.name} has no values`);
      names.add(p.name);
      total *= p.values.length;
      if (total > MAX_ARRAY_TASKS) return tooMany(total);
    }
    tasks = new Array<ArrayTask>(total);
    // Mixed radix, the last parameter the fastest digit.
    for (let t = 0; t < total; t++) {
      const p: Record<string, string> = {};
      let rest = t;
      for (let k = params.length - 1; k >= 0; k--) {
        const vs = params[k]!.values;
        p[params[k]!.name] = vs[rest % vs.length]!;
        rest = Math.floor(rest / vs.length);
      }
      // Key order as given, not reversed.
      const ordered: Record<string, string> = {};
      for (const q of params) ordered[q.name] = p[q.name]!;
      tasks[t] = { index: t, params: ordered };
    }
  }
  if (tasks.length === 0) return invalid('the array has no tasks');
  for (const p of params) for (const v of p.values) if (v.includes('\0')) return invalid('parameter values must not contain NUL bytes');
  if (s.param_rows) for (const r of s.param_rows.rows) for (const v of r) if (v.includes('\0')) return invalid('parameter values must not contain NUL bytes');
  return { tasks, throttle, min: tasks[0]!.index, max: tasks[tasks.length - 1]!.index };
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Every `{NAME}` of a parameter replaced by its value, verbatim; other braces stay as they are. */
export function substituteParams(text: string, params: Record<string, string> | null): string {
  if (!params || !text.includes('{')) return text;
  return text.replace(PLACEHOLDER, (whole, name: string) => (Object.prototype.hasOwnProperty.call(params, name) ? params[name]! : whole));
}

/**
 * One task's own submission: the array fields gone, the name `<name>[<index>]`,
 * `{NAME}` replaced in every command word (the `--wrap` command, or a
 * script's ARGS; never the script itself). Everything else is shared with
 * `base` (the environment object too: one copy for the whole array).
 */
export function taskSubmission(base: Submission, task: ArrayTask): Submission {
  const s: Submission = { ...base, name: `${base.name}[${task.index}]` };
  delete s.array;
  delete s.params;
  delete s.param_rows;
  if (task.params) s.command = base.command.map((w) => substituteParams(w, task.params));
  return s;
}

/** Every task's submission and membership (less the array id, known once the first is inserted), in id order. */
export function arraySubmissions(base: Submission, plan: ArrayPlan): { specs: Submission[]; members: Array<Omit<ArrayMembership, 'id'>> } {
  const specs: Submission[] = [];
  const members: Array<Omit<ArrayMembership, 'id'>> = [];
  const count = plan.tasks.length;
  for (const t of plan.tasks) {
    specs.push(taskSubmission(base, t));
    members.push({ index: t.index, count, min: plan.min, max: plan.max, throttle: plan.throttle, params: t.params });
  }
  return { specs, members };
}

/** The variables of an array task (docs/behaviour.md §23.2): the XLURM_ARRAY_* ones, their SLURM_ARRAY_* twins and XLURM_PARAM_*. */
export function arrayEnv(a: ArrayMembership): Array<[string, string]> {
  const vars: Array<[string, string]> = [
    ['ARRAY_JOB_ID', String(a.id)], ['ARRAY_TASK_ID', String(a.index)], ['ARRAY_TASK_COUNT', String(a.count)],
    ['ARRAY_TASK_MIN', String(a.min)], ['ARRAY_TASK_MAX', String(a.max)],
  ];
  const out: Array<[string, string]> = [];
  for (const [k, v] of vars) out.push([`XLURM_${k}`, v]);
  for (const [k, v] of vars) out.push([`SLURM_${k}`, v]);
  if (a.params) for (const [k, v] of Object.entries(a.params)) out.push([`XLURM_PARAM_${k}`, v]);
  return out;
}

/** `A_I` (an array task) or a plain job id, as tables and commands write it. */
export function jobLabel(id: number, array: { id: number; index: number } | null | undefined): string {
  return array ? `${array.id}_${array.index}` : String(id);
}
