/**
 * What the Slurm engine translates (docs/behaviour.md §27.1), as pure
 * functions: our submission options to sbatch/srun options, and Slurm's job
 * records (squeue/sacct --json) to our job rows and states.
 */
import type { Device, DeviceKind, Job, JobState, JobSummary, Reason, Submission } from '@xlurm/protocol';
import { KIND_LABEL, durationSeconds } from '@xlurm/protocol';
import { flag, single } from '../argv';
import { UsageError } from '../errors';
import type { ClusterConfig } from './cluster';
import type { SubmitContext } from './types';

/**
 * Options Slurm expresses, by our option name. Every other option of the
 * command that was given is refused by name before anything reaches Slurm
 * (exact device ids, exclusions, device groups, and whatever Slurm has no
 * counterpart for).
 */
export const MAPPED_OPTIONS: ReadonlySet<string> = new Set([
  'gpus', 'device', 'name', 'time-limit', 'timeout', 'immediate', 'cpus', 'mem',
  'dependency', 'array', 'begin', 'nice', 'hold', 'wrap',
]);

/** Was an option given at all (a flag set, a value present)? */
function given(v: unknown): boolean {
  if (v === undefined || v === false || v === null) return false;
  if (Array.isArray(v)) return v.some(given);
  return true;
}

/** `--device-ids` (`-i`), as the refusal names it. */
function display(name: string, ctx: SubmitContext): string {
  const alias = ctx.options[name]?.alias;
  const short = (Array.isArray(alias) ? alias : alias === undefined ? [] : [alias]).find((a) => a.length === 1);
  return short ? `--${name} (-${short})` : `--${name}`;
}

/** The first given option Slurm cannot express, else undefined. */
export function unmappable(ctx: SubmitContext): string | undefined {
  for (const name of Object.keys(ctx.options)) {
    if (!MAPPED_OPTIONS.has(name) && given(ctx.args[name])) return name;
  }
  return undefined;
}

/** Seconds as Slurm's `--time` (D-HH:MM:SS; Slurm rounds up to whole minutes). */
export function slurmTime(secs: number): string {
  const d = Math.floor(secs / 86400);
  const h = Math.floor((secs % 86400) / 3600);
  const m = Math.floor((secs % 3600) / 60);
  const s = secs % 60;
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d}-${two(h)}:${two(m)}:${two(s)}`;
}

/** Our `--begin` forms (docs/behaviour.md §20.1) as Slurm's: `now+DURATION` in seconds; the clock forms are Slurm's own. */
export function slurmBegin(text: string): string {
  const m = /^now\+(.+)$/.exec(text);
  if (m) {
    const secs = durationSeconds(m[1]!);
    if (secs === null) throw new UsageError(`invalid value '${text}' for '--begin <TIME>'`);
    return `now+${secs}`;
  }
  return text;
}

/** The GRES name a request uses: its `--device` vendor's, else the only vendor's in `[cluster] gres`. */
export function gresName(kind: DeviceKind | null | undefined, cluster: ClusterConfig): string {
  const named = Object.entries(cluster.gres) as Array<[DeviceKind, string]>;
  if (kind) {
    const name = cluster.gres[kind];
    if (!name) throw new UsageError(`no GRES name for ${KIND_LABEL[kind]} in [cluster] gres`);
    return name;
  }
  if (named.length === 1) return named[0]![1];
  if (named.length === 0) throw new UsageError('[cluster] gres names no vendor: use -g 0 for a job without devices');
  throw new UsageError(`--device is required: [cluster] gres names several vendors (${named.map(([k]) => KIND_LABEL[k]).join(', ')})`);
}

/** A raw option's single text value, if given. */
function raw(ctx: SubmitContext, name: string, shown: string): string | undefined {
  const v = ctx.args[name];
  if (!given(v)) return undefined;
  return single(v, shown);
}

/**
 * sbatch/srun options for a submission: the mapped options, the partition,
 * the environment and working directory as Slurm passes them. Throws a usage
 * error naming the first option Slurm cannot express.
 */
export function slurmOptions(s: Submission, ctx: SubmitContext, cluster: ClusterConfig): string[] {
  const bad = unmappable(ctx);
  if (bad !== undefined) throw new UsageError(`${display(bad, ctx)} cannot be used on a Slurm cluster ([cluster] engine = "slurm")`);
  const x = s as Submission & Record<string, unknown>;
  const out: string[] = [];
  if (cluster.partition) out.push(`--partition=${cluster.partition}`);
  out.push(`--job-name=${s.name}`);
  if (s.count > 0) out.push(`--gres=${gresName(s.kind, cluster)}:${s.count}`);
  if (typeof s.time_limit === 'number' && s.time_limit > 0) out.push(`--time=${slurmTime(s.time_limit)}`);
  const queueTimeout = typeof x.queue_timeout === 'number' ? x.queue_timeout : undefined;
  if (queueTimeout !== undefined) out.push(`--deadline=now+${queueTimeout + (s.time_limit ?? 0)}`);
  const cpus = typeof x.cpus === 'number' ? x.cpus : numberArg(raw(ctx, 'cpus', '--cpus <N>'));
  if (cpus !== undefined && cpus > 0) out.push(`--cpus-per-task=${cpus}`);
  if (typeof x.mem === 'number' && x.mem > 0) out.push(`--mem=${Math.ceil(x.mem / 1024)}K`);
  else {
    const mem = raw(ctx, 'mem', '--mem <SIZE>');
    if (mem !== undefined) out.push(`--mem=${mem.replace(/i?B$/i, '')}`);
  }
  const dep = raw(ctx, 'dependency', '--dependency <LIST>');
  if (dep !== undefined) out.push(`--dependency=${dep}`);
  const array = raw(ctx, 'array', '--array <SPEC>');
  if (array !== undefined) out.push(`--array=${array}`);
  const begin = raw(ctx, 'begin', '--begin <TIME>');
  if (begin !== undefined) out.push(`--begin=${slurmBegin(begin)}`);
  const nice = raw(ctx, 'nice', '--nice <N>');
  if (nice !== undefined) out.push(`--nice=${nice}`);
  if (flag(ctx.args.hold)) out.push('--hold');
  if (flag(ctx.args.immediate) || s.immediate === true) out.push('--immediate');
  out.push('--export=ALL', `--chdir=${s.cwd}`);
  return out;
}

/**
 * sbatch's `--wrap` for `xbatch --wrap CMD` (a submission `bash -c CMD`):
 * sbatch runs a wrap with `sh -c`, so CMD is handed to bash explicitly and
 * runs as it does on this host (extensions 28.11).
 */
export function slurmWrap(command: readonly string[]): string {
  const words = command[0] === 'bash' && command[1] === '-c' && command.length === 3 ? command : ['bash', '-c', command.join(' ')];
  return `--wrap=${words.map(shWord).join(' ')}`;
}

/** A word for sh. */
export function shWord(w: string): string {
  return /^[A-Za-z0-9_\/.,:=+@%-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

function numberArg(text: string | undefined): number | undefined {
  return text === undefined ? undefined : Number(text);
}

/** Slurm's state (long name, or the short code squeue prints) as ours. */
export function mapState(state: string): JobState {
  const s = state.split(/[ ,]/)[0]!.toUpperCase();
  const m: Record<string, string> = {
    PD: 'PENDING', PENDING: 'PENDING', R: 'RUNNING', RUNNING: 'RUNNING', CF: 'RUNNING', CONFIGURING: 'RUNNING',
    CG: 'RUNNING', COMPLETING: 'RUNNING', S: 'RUNNING', SUSPENDED: 'RUNNING', ST: 'RUNNING', STOPPED: 'RUNNING',
    RQ: 'PENDING', REQUEUED: 'PENDING', RH: 'PENDING', REQUEUE_HOLD: 'PENDING', RF: 'PENDING', REQUEUE_FED: 'PENDING',
    RS: 'PENDING', RESIZING: 'RUNNING', SI: 'RUNNING', SIGNALING: 'RUNNING', SO: 'RUNNING', STAGE_OUT: 'RUNNING',
    CD: 'COMPLETED', COMPLETED: 'COMPLETED',
    F: 'FAILED', FAILED: 'FAILED', NF: 'FAILED', NODE_FAIL: 'FAILED', BF: 'FAILED', BOOT_FAIL: 'FAILED',
    CA: 'CANCELLED', CANCELLED: 'CANCELLED', PR: 'CANCELLED', PREEMPTED: 'CANCELLED', RV: 'CANCELLED', REVOKED: 'CANCELLED',
    TO: 'TIMED_OUT', TIMEOUT: 'TIMED_OUT',
    OOM: 'OUT_OF_MEMORY', OUT_OF_MEMORY: 'OUT_OF_MEMORY',
    DL: 'EXPIRED', DEADLINE: 'EXPIRED',
  };
  return (m[s] ?? 'FAILED') as JobState;
}

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'OUT_OF_MEMORY', 'EXPIRED']);

/** Slurm's reasons that have a counterpart among ours (docs/behaviour.md §20.4). */
const REASONS: Record<string, Reason['code']> = {
  Resources: 'Resources', Priority: 'Priority', Dependency: 'Dependency', BeginTime: 'BeginTime',
  JobHeldUser: 'Held', JobHeldAdmin: 'Held', ReqNodeNotAvail: 'DevicesUnavailable',
};

/** A job's exit status: a raw wait status (squeue) or {status, return_code, signal} (sacct). */
export function exitStatus(v: unknown): number {
  if (typeof v === 'number') {
    const sig = v & 0x7f;
    return sig ? 128 + sig : (v >> 8) & 0xff;
  }
  if (v && typeof v === 'object') {
    const o = v as { return_code?: number; signal?: { signal_id?: number } };
    const sig = o.signal?.signal_id;
    if (typeof sig === 'number' && sig > 0) return 128 + sig;
    return typeof o.return_code === 'number' ? o.return_code : 0;
  }
  return 0;
}

/**
 * sacct's text form of an exit status, `CODE:SIGNAL` (`3:0`, `0:9`), as an exit code; undefined
 * when it is not of that form. Slurm 22.05's `sacct --json` reports `return_code: 0` and
 * `SUCCESS` for a job that exited 3 (its text output says `3:0`, seen against a real slurmdbd),
 * so a finished job's code is read from the text form (docs/behaviour.md §27.3).
 */
export function exitCodeText(text: string): number | undefined {
  const m = /^(\d+):(\d+)$/.exec(text.trim());
  if (!m) return undefined;
  const sig = Number(m[2]);
  return sig > 0 ? 128 + sig : Number(m[1]) & 0xff;
}

/** Expand Slurm's index lists: `0-2,5` → [0,1,2,5]. */
export function indexList(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const a = Number(m[1]), b = m[2] === undefined ? a : Number(m[2]);
    for (let i = a; i <= b && out.length < 4096; i++) out.push(i);
  }
  return out;
}

/** The vendor of a GRES name under `[cluster] gres`. */
function kindOf(name: string, cluster: ClusterConfig): DeviceKind | null {
  for (const [k, v] of Object.entries(cluster.gres)) if (v === name) return k as DeviceKind;
  return null;
}

/** Requested GRES (`gres:npu:2`, `gres/gpu:1`, `gpu:2`) as (kind, count). */
export function requested(tres: string, cluster: ClusterConfig): { kind: DeviceKind | null; count: number } {
  for (const item of tres.split(',')) {
    const m = /^(?:gres[:/])?([A-Za-z][A-Za-z0-9_]*)(?::[^:=]+)?[:=](\d+)$/.exec(item.trim());
    if (m && m[1] !== 'cpu' && m[1] !== 'mem' && m[1] !== 'node' && m[1] !== 'billing') {
      return { kind: kindOf(m[1]!, cluster), count: Number(m[2]) };
    }
  }
  return { kind: null, count: 0 };
}

/** Allocated devices from gres_detail (`gpu:1(IDX:0)`, `npu(IDX:0-1)`; count-only `npu(CNT:2)` names no index). */
export function allocated(details: readonly string[], cluster: ClusterConfig): Device[] {
  const out: Device[] = [];
  for (const d of details) {
    for (const m of d.matchAll(/([A-Za-z][A-Za-z0-9_]*)(?::[^(,]*)?\((?:[^)]*?)IDX:([0-9,-]+)\)/g)) {
      const kind = kindOf(m[1]!, cluster);
      if (!kind) continue;
      for (const id of indexList(m[2]!)) out.push({ kind, id, name: m[1]!, visible: String(id), npu: null, chip: null });
    }
  }
  return out;
}

/** Slurm's job record as the field names of squeue --json (22.05) give it. */
export interface SlurmJob {
  job_id: number;
  name?: string;
  user_id?: number;
  user_name?: string;
  group_id?: number;
  job_state?: string | string[];
  state_reason?: string;
  submit_time?: number;
  start_time?: number;
  end_time?: number;
  exit_code?: unknown;
  tres_per_node?: string;
  tres_per_job?: string;
  tres_req_str?: string;
  gres_detail?: string[];
  cpus?: number;
  memory_per_node?: number | null;
  time_limit?: number | null;
  command?: string;
  current_working_directory?: string;
  standard_output?: string;
  nodes?: string;
  partition?: string;
  // sacct --json's shapes
  state?: { current?: string };
  time?: { submission?: number; start?: number; end?: number; limit?: number };
  array_job_id?: number;
  array_task_id?: number | null;
  array_task_string?: string;
  user?: string;
  group?: string;
  working_directory?: string;
}

export function stateText(j: SlurmJob): string {
  if (Array.isArray(j.job_state)) return j.job_state[0] ?? 'PENDING';
  return j.job_state ?? j.state?.current ?? 'PENDING';
}

/** One queue row. */
export function summaryOf(j: SlurmJob, cluster: ClusterConfig): JobSummary {
  const state = mapState(stateText(j));
  const req = requested(j.tres_per_node || j.tres_per_job || '', cluster);
  const submitted = j.submit_time ?? j.time?.submission ?? 0;
  const start = j.start_time ?? j.time?.start ?? 0;
  const end = j.end_time ?? j.time?.end ?? 0;
  const reasonCode = state === 'PENDING' && j.state_reason ? REASONS[j.state_reason] : undefined;
  return {
    id: j.job_id,
    owner: { uid: j.user_id ?? 0, gid: j.group_id ?? 0, name: j.user_name ?? j.user ?? String(j.user_id ?? '') },
    name: j.name ?? '',
    state,
    count: req.count,
    kind: req.kind,
    devices: state === 'PENDING' ? [] : allocated(j.gres_detail ?? [], cluster),
    submitted_at: submitted,
    started_at: state !== 'PENDING' && start > 0 ? start : null,
    finished_at: TERMINAL.has(state) && end > 0 ? end : null,
    reason: reasonCode ? { code: reasonCode, message: j.state_reason! } : null,
    cpus: j.cpus ?? 0,
    mem: typeof j.memory_per_node === 'number' ? j.memory_per_node * 1024 * 1024 : 0,
    ...arrayOf(j),
  } as JobSummary;
}

/**
 * Tasks per array in a set of records: the split tasks (one record each) plus the indices of a
 * pending remainder that Slurm still keeps as one record (`array_task_string` `5-9%2`).
 */
export function arrayCounts(records: readonly SlurmJob[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const j of records) {
    if (!j.array_job_id) continue;
    const n = typeof j.array_task_id === 'number' ? 1 : indexList((j.array_task_string ?? '').replace(/%\d+$/, '')).length;
    out.set(j.array_job_id, (out.get(j.array_job_id) ?? 0) + n);
  }
  return out;
}

/** Set each array row's count from `counts` (at least 1: the row itself). */
export function setArrayCounts<T extends { array?: { id: number; count: number } | null }>(rows: T[], counts: ReadonlyMap<number, number>): T[] {
  for (const r of rows) if (r.array) r.array.count = Math.max(1, counts.get(r.array.id) ?? 1);
  return rows;
}

/** An array task's place in its array (docs/behaviour.md §23.2), else null; the count is set by setArrayCounts. */
function arrayOf(j: SlurmJob): { array: { id: number; index: number; count: number } | null } {
  if (!j.array_job_id || typeof j.array_task_id !== 'number') return { array: null };
  return { array: { id: j.array_job_id, index: j.array_task_id, count: 1 } };
}

/** The whole job, as far as Slurm tells it. */
export function jobOf(j: SlurmJob, cluster: ClusterConfig): Job {
  const sum = summaryOf(j, cluster);
  const limit = j.time_limit ?? j.time?.limit;
  const done = TERMINAL.has(sum.state);
  const reason = j.state_reason && j.state_reason !== 'None' ? j.state_reason : null;
  return {
    id: sum.id,
    owner: sum.owner,
    spec: {
      command: j.command ? [j.command] : [],
      cwd: j.current_working_directory || j.working_directory || '/',
      env: {},
      name: sum.name,
      count: sum.count,
      kind: sum.kind,
      time_limit: typeof limit === 'number' && limit > 0 ? limit * 60 : null,
      script: null,
    },
    state: sum.state,
    devices: sum.devices,
    submitted_at: sum.submitted_at,
    started_at: sum.started_at,
    result: done ? {
      state: sum.state as NonNullable<Job['result']>['state'],
      exit_code: exitStatus(j.exit_code),
      finished_at: sum.finished_at ?? sum.submitted_at,
      error: sum.state === 'COMPLETED' ? null : reason,
    } : null,
    reason: sum.reason,
    cpus: sum.cpus,
    mem: sum.mem,
    array: (sum as { array?: unknown }).array ?? null,
  } as Job;
}
