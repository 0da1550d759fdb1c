/** Submission options shared by xrun and xbatch (docs/behaviour.md §2.3). */
import * as path from 'node:path';
import type { Options } from 'yargs';
import type { DeviceKind, Job, JobRequest, Submission } from '@xlurm/protocol';
import { KIND_NAMES, checkRequest, checkTimes, durationError, durationSeconds, parseKind, parseShare, sizeBytes, sizeError, timeLimitSeconds } from '@xlurm/protocol';
import { flag, many, parseIdList, parseUnsigned, present, single, U32_MAX } from './argv';
import { CliError, UsageError, osErrorText } from './errors';
import { WORKFLOW_OPTIONS, parseWorkflowFlags, workflowFields, type WorkflowFlags } from './workflow-flags';

export const SUBMIT_OPTIONS: Readonly<Record<string, Options>> = {
  gpus: { alias: ['g', 'devices'], type: 'string', describe: 'Number of devices; 0 = CPU-only job [default: 1]' },
  'device-ids': { alias: 'i', type: 'string', describe: 'Exact device IDs, comma-separated (repeatable)' },
  'exclude-device-ids': { alias: 'x', type: 'string', describe: 'Device IDs this job must not get, comma-separated (repeatable; not with -i)' },
  device: { type: 'string', describe: `Restrict to one vendor [possible values: ${KIND_NAMES.join(', ')}]` },
  name: { alias: 'n', type: 'string', describe: 'Job name' },
  'time-limit': { alias: 't', type: 'string', describe: 'Wall-clock limit, measured from launch: seconds, a number with s, m, h or d, or MM:SS, HH:MM:SS, D-HH:MM:SS' },
  timeout: { type: 'string', describe: "Longest time the job may wait to start (seconds, or a number with s, m, h or d); then it ends EXPIRED [default: the host's default_queue_timeout]" },
  'group-affinity': { type: 'boolean', describe: "All devices from one device group, or wait (overrides the host's group_affinity)" },
  'ignore-group-affinity': { type: 'boolean', describe: 'Any free devices, regardless of device groups (first fit)' },
  cpus: { alias: 'c', type: 'string', describe: "Host CPUs for the job, enforced by its cgroup [default: the host's default_cpus]" },
  mem: { type: 'string', describe: "Host memory for the job: a number with K, M, G or T (a bare number is MiB), enforced by its cgroup [default: the host's default_memory]" },
  notify: { type: 'string', describe: "Once the job has ended, run CMD with `bash -c` as you, in the job's directory (60 s at most; its output goes to the end of the job's log)" },
  ...WORKFLOW_OPTIONS,
  nice: { type: 'string', describe: "Wait behind jobs of lower nice: 0 to 10000 (yours can only go back, never ahead) [default: 0]" },
  share: { type: 'string', describe: 'A slice of each device instead of the whole: MEM of device memory (a number with K, M, G or T; a bare number is MiB) and COMPUTE percent of its compute (1 to 100) [default COMPUTE: 100]; the host must enable sharing' },
};

/** The options as typed values (parse errors are usage errors, exit 2). */
export interface SubmitFlags {
  gpus?: number;
  deviceIds?: number[];
  excludeIds?: number[];
  kind: DeviceKind | null;
  name?: string;
  timeLimit: number | null;
  /** `--timeout`: seconds it may stay PENDING; absent: the host's default. */
  queueTimeout?: number;
  /** `--group-affinity` (require) / `--ignore-group-affinity` (off); absent: the host's. */
  groupAffinity?: 'require' | 'off';
  /** `-c/--cpus` and `--mem` (bytes); absent: the host's defaults (docs/behaviour.md §24.1). */
  cpus?: number;
  mem?: number;
  /** `--notify CMD` (docs/behaviour.md §23.7). */
  notify?: string;
  /** `-d`, `--begin`, `--retry`, `--hold` (docs/behaviour.md §23.1, §23.3-§23.5). */
  workflow?: WorkflowFlags;
  /** `--nice` (docs/behaviour.md §22.1); absent: 0. */
  nice?: number;
  /** `--share MEM[,COMPUTE%]` (docs/behaviour.md §25.1); absent: whole devices. */
  share?: { mem: number; compute: number };
}

export function parseSubmitFlags(args: Record<string, unknown>): SubmitFlags {
  const gpus = single(args.gpus, '--gpus <N>');
  const ids = many(args['device-ids']);
  const excludes = many(args['exclude-device-ids']);
  const device = single(args.device, '--device <KIND>');
  const name = single(args.name, '--name <NAME>');
  const limit = single(args['time-limit'], '--time-limit <TIME>');
  const timeout = single(args.timeout, '--timeout <DURATION>');
  const queueTimeout = timeout === undefined ? undefined : parseQueueTimeout(present(timeout, '--timeout <DURATION>'));
  if (flag(args['group-affinity']) && flag(args['ignore-group-affinity'])) {
    throw new UsageError("the argument '--group-affinity' cannot be used with '--ignore-group-affinity'");
  }
  const cpus = single(args.cpus, '--cpus <N>');
  const mem = single(args.mem, '--mem <SIZE>');
  const notify = single(args.notify, '--notify <CMD>');
  const nice = single(args.nice, '--nice <NICE>');
  const share = single(args.share, '--share <MEM[,COMPUTE%]>');
  const groupAffinity = flag(args['group-affinity']) ? 'require' as const : flag(args['ignore-group-affinity']) ? 'off' as const : undefined;
  let kind: DeviceKind | null = null;
  if (device !== undefined) {
    const k = parseKind(present(device, '--device <KIND>'));
    if (!k) throw new UsageError(`invalid value '${device}' for '--device <KIND>' [possible values: ${KIND_NAMES.join(', ')}]`);
    kind = k;
  }
  return {
    gpus: gpus === undefined ? undefined : parseUnsigned(present(gpus, '--gpus <N>'), '--gpus <N>', U32_MAX),
    deviceIds: ids.length ? parseIdList(ids, '--device-ids <LIST>') : undefined,
    excludeIds: excludes.length ? parseIdList(excludes, '--exclude-device-ids <LIST>') : undefined,
    kind,
    name,
    timeLimit: limit === undefined ? null : parseTimeLimit(present(limit, '--time-limit <TIME>')),
    ...(queueTimeout !== undefined ? { queueTimeout } : {}),
    ...(groupAffinity ? { groupAffinity } : {}),
    ...(cpus !== undefined ? { cpus: parseUnsigned(present(cpus, '--cpus <N>'), '--cpus <N>', U32_MAX) } : {}),
    ...(mem !== undefined ? { mem: parseMem(present(mem, '--mem <SIZE>')) } : {}),
    ...(notify !== undefined ? { notify: present(notify, '--notify <CMD>') } : {}),
    ...workflowOf(args),
    ...(nice !== undefined ? { nice: parseNice(present(nice, '--nice <NICE>')) } : {}),
    ...(share !== undefined ? { share: parseShareFlag(present(share, '--share <MEM[,COMPUTE%]>')) } : {}),
  };
}

/** `--share` (docs/behaviour.md §25.1): refused with the daemon's own words. */
function parseShareFlag(text: string): { mem: number; compute: number } {
  const s = parseShare(text);
  if ('error' in s) throw new UsageError(s.error);
  return s;
}

/** `--mem`: a size (docs/behaviour.md §20.1). */
function parseMem(text: string): number {
  const bytes = sizeBytes(text);
  if (bytes === null) throw new UsageError(sizeError(text));
  return bytes;
}

/**
 * `--nice`: 0 to 10000. A negative value would move the job ahead, which no
 * user may do (docs/behaviour.md §22.1): refused like any value out of range.
 */
export function parseNice(text: string): number {
  if (/^-[0-9]+$/.test(text)) throw new UsageError(`invalid value '${text}' for '--nice <NICE>': a nice value cannot be negative (only root can move a job ahead, with xlurm priority)`);
  const n = parseUnsigned(text, '--nice <NICE>', U32_MAX);
  if (n > 10000) throw new UsageError(`invalid value '${text}' for '--nice <NICE>': use 0 to 10000`);
  return n;
}

/** The workflow flags, only when one is given (flags without them stay as they were). */
function workflowOf(args: Record<string, unknown>): { workflow?: WorkflowFlags } {
  const w = parseWorkflowFlags(args);
  return Object.keys(w).length ? { workflow: w } : {};
}

/** `-t`: a duration or one of Slurm's clock forms (docs/behaviour.md §20.1); zero is left to checkRequest. */
export function parseTimeLimit(text: string): number {
  const secs = timeLimitSeconds(text);
  if (secs === null) throw new UsageError(durationError(text));
  inRange({ time_limit: secs }, { time_limit: text });
  return secs;
}

/** What the daemon cannot represent is refused here first, in its words (docs/behaviour.md §28.4). */
export function inRange(...args: Parameters<typeof checkTimes>): void {
  const bad = checkTimes(...args);
  if (bad) throw new UsageError(bad.message);
}

/** `--timeout`: a duration; zero is no limit at all, so it is refused (docs/behaviour.md §20.1). */
export function parseQueueTimeout(text: string): number {
  const secs = durationSeconds(text);
  if (secs === null || secs === 0) throw new UsageError(durationError(text));
  inRange({ queue_timeout: secs }, { queue_timeout: text });
  return secs;
}

/**
 * The request the flags ask for, checked as the daemon checks it (one shared
 * check, so both refuse with the same words); returns the device count.
 * Without `-g`, `-i` asks for as many devices as it names, else one.
 */
export function validateSubmitFlags(f: SubmitFlags): number {
  const req: JobRequest = { count: f.gpus ?? f.deviceIds?.length ?? 1, kind: f.kind, timeLimit: f.timeLimit };
  if (f.deviceIds) req.deviceIds = f.deviceIds;
  if (f.excludeIds) req.excludeIds = f.excludeIds;
  if (f.share) req.share = f.share;
  const bad = checkRequest(req);
  if (bad) throw new CliError(bad.message);
  return req.count;
}

/** `-n`, else the script's file name, else the first command word, else `batch`. */
export function defaultName(f: SubmitFlags, scriptPath: string | undefined, command: readonly string[]): string {
  if (f.name !== undefined) return f.name;
  if (scriptPath !== undefined) return path.basename(scriptPath);
  if (command.length > 0) return command[0]!;
  return 'batch';
}

export interface SubmissionParts {
  command: string[];
  cwd: string;
  env: Record<string, string>;
  name: string;
  count: number;
  flags: SubmitFlags;
  script: string | null;
}

/** The wire Submission, keys in the reference's order; `device_ids` only with `-i`. */
export function buildSubmission(p: SubmissionParts): Submission {
  const s: Submission = { command: p.command, cwd: p.cwd, env: p.env, name: p.name, count: p.count };
  if (p.flags.deviceIds) s.device_ids = p.flags.deviceIds;
  if (p.flags.excludeIds) s.exclude_ids = p.flags.excludeIds;
  s.kind = p.flags.kind;
  s.time_limit = p.flags.timeLimit;
  s.script = p.script;
  if (p.flags.queueTimeout !== undefined) s.queue_timeout = p.flags.queueTimeout;
  if (p.flags.groupAffinity) s.group_affinity = p.flags.groupAffinity;
  if (p.flags.cpus !== undefined) s.cpus = p.flags.cpus;
  if (p.flags.mem !== undefined) s.mem = p.flags.mem;
  if (p.flags.notify !== undefined) s.notify = p.flags.notify;
  if (p.flags.workflow) Object.assign(s, workflowFields(p.flags.workflow));
  if (p.flags.nice) s.nice = p.flags.nice;
  if (p.flags.share) s.share = p.flags.share;
  return s;
}

/** The absolute working directory. */
export function currentDir(): string {
  try {
    return process.cwd();
  } catch (e) {
    throw new CliError(`cannot determine the current directory: ${osErrorText(e)}`);
  }
}

/** The submit reply must be a job with an id. */
export function checkJob(job: unknown): Job {
  const j = job as Job | null;
  if (!j || typeof j !== 'object' || typeof j.id !== 'number') throw new CliError('unexpected response');
  return j;
}
