/** xqueue output: row selection, table (docs/behaviour.md §4.4) and detail text (§4.3). */
import type { Device, Job, JobState, JobSummary, Reason } from '@xlurm/protocol';
import { KIND_LABEL, formatSize, isTerminal, jobLabel } from '@xlurm/protocol';
import { formatDuration, since } from './duration';
import { escapeDebug } from './escape';
import { renderTable } from './table';
import { formatLocal, formatShifted, localOffsetMinutes, formatOffset } from './time';

/** Table STATE: the Debug name upper-cased, so `TIMED_OUT` shows as `TIMEDOUT`. */
export function stateLabel(state: JobState | string): string {
  return state.replace(/_/g, '');
}

/** Detail line state: `Pending`, …, `TimedOut`. */
export function stateName(state: JobState | string): string {
  return state.toLowerCase().split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

const label = (kind: string) => (KIND_LABEL as Record<string, string>)[kind] ?? kind;

/** `nv:[2,0],asc:[1,3]`: ids grouped by vendor in order of first appearance; `-` when empty. */
export function assignedDevices(devices: readonly Device[]): string {
  if (devices.length === 0) return '-';
  const groups = new Map<string, number[]>();
  for (const d of devices) {
    const g = groups.get(d.kind);
    if (g) g.push(d.id);
    else groups.set(d.kind, [d.id]);
  }
  return [...groups].map(([kind, ids]) => `${label(kind)}:[${ids.join(',')}]`).join(',');
}

/** The DEVICES cell (docs/behaviour.md §4.4 rules 1–4). */
export function devicesCell(job: Pick<JobSummary, 'state' | 'devices' | 'count' | 'device_ids' | 'kind'>): string {
  if (job.devices.length > 0 || job.state !== 'PENDING') return assignedDevices(job.devices);
  if (job.count === 0) return 'cpu';
  const prefix = job.kind ? label(job.kind) : 'auto';
  if (job.device_ids) return `${prefix}:[${job.device_ids.join(',')}]`;
  return `${prefix}:${job.count}`;
}

/** WAIT and RUN texts; `now` and the times are unix seconds. */
export function waitAndRun(
  submitted: number, started: number | null, finished: number | null, now: number,
): { wait: string; run: string } {
  const end = finished ?? now;
  if (started !== null) return { wait: formatDuration(since(started, submitted)), run: formatDuration(since(end, started)) };
  return { wait: formatDuration(since(end, submitted)), run: '-' };
}

/**
 * Rows shown by xqueue: newest to oldest, non-terminal only unless `all`,
 * at most 100, back in submission order; without `all`, RUNNING rows first.
 */
/** Rows `xqueue` shows at most. */
export const QUEUE_ROWS = 100;

export function selectRows<T extends Pick<JobSummary, 'state'>>(jobs: readonly T[], all: boolean, limit = QUEUE_ROWS): T[] {
  const picked: T[] = [];
  for (let i = jobs.length - 1; i >= 0 && picked.length < limit; i--) {
    const j = jobs[i]!;
    if (all || !isTerminal(j.state)) picked.push(j);
  }
  picked.reverse();
  if (all) return picked;
  return [...picked.filter((j) => j.state === 'RUNNING'), ...picked.filter((j) => j.state !== 'RUNNING')];
}

export interface TableClock { now: number; offsetMinutes: number }

/** The clock for a table: now in unix seconds and the local zone's offset now. */
export function tableClock(nowMs = Date.now()): TableClock {
  return { now: Math.floor(nowMs / 1000), offsetMinutes: localOffsetMinutes(new Date(nowMs)) };
}

/**
 * The xqueue table. Start times are shown in the local zone at the table's
 * single offset (named in the header), so every cell agrees with the header.
 */
export function queueTable(
  rows: readonly JobSummary[], all: boolean, clock: TableClock = tableClock(), long = false,
): string {
  const headers = ['JOB', 'USER', 'STATE', 'DEVICES', `STARTED (UTC${formatOffset(clock.offsetMinutes)})`, 'WAIT', 'RUN'];
  // The REASON column only in the long form: the default table keeps the core's exact columns
  // (docs/behaviour.md §20.4), which scripts parse.
  if (long) headers.push('REASON');
  headers.push('NAME');
  const cells = rows.map((j) => {
    const { wait, run } = waitAndRun(j.submitted_at, j.started_at, j.finished_at, clock.now);
    const row = [
      jobLabel(j.id, j.array), j.owner.name, stateLabel(j.state), devicesCell(j),
      j.started_at === null ? '-' : formatShifted(j.started_at, clock.offsetMinutes, all),
      wait, run,
    ];
    if (long) row.push(reasonCell(j));
    row.push(escapeDebug(j.name));
    return row;
  });
  return renderTable(headers, cells);
}

/** The REASON cell: the code for a PENDING job, `-` otherwise (and before its first pass). */
export function reasonCell(job: Pick<JobSummary, 'state' | 'reason'>): string {
  return job.state === 'PENDING' && job.reason ? job.reason.code : '-';
}

/** `<Code>: <message>`, as in `xqueue ID`'s `Reason:` line and xrun's `Pending:` line. */
export function reasonText(reason: Reason): string {
  return `${reason.code}: ${reason.message}`;
}

/** `xqueue <id>` detail text (docs/behaviour.md §4.3), with the start time in the local zone. */
export function jobDetail(job: Job, now: number): string {
  const finished = job.result ? job.result.finished_at : null;
  const { wait, run } = waitAndRun(job.submitted_at, job.started_at, finished, now);
  let started = '-';
  if (job.started_at !== null) {
    const { text, label: zone } = formatLocal(job.started_at);
    started = zone ? `${text} ${zone}` : text;
  }
  const lines = [
    `Job ${job.id}: ${stateName(job.state)}`,
    `Name: ${escapeDebug(job.spec.name)}`,
    `User: ${job.owner.name} (UID ${job.owner.uid})`,
    `Directory: ${job.spec.cwd}`,
    `Log: xqueue ${job.id} --log`,
    `Devices: ${assignedDevices(job.devices)}`,
    `Started at: ${started}`,
    `Wait time: ${wait}`,
    `Run time: ${run}`,
  ];
  if (job.result) {
    lines.push(`Exit code: ${job.result.exit_code}`);
    if (job.result.error !== null && job.result.error !== undefined) lines.push(`Error: ${job.result.error}`);
  }
  // An array task's place (docs/behaviour.md §23.2), after the core's lines.
  if (job.array) lines.push(`Array: ${jobLabel(job.id, job.array)} (task of array ${job.array.id}, ${job.array.count} tasks)`);
  // A job that may be retried: which run this is (docs/behaviour.md §23.5).
  if (job.spec.retry) lines.push(`Attempt: ${job.attempt ?? 1} of ${job.spec.retry + 1}`);
  // A slice of each device (docs/behaviour.md §25.1).
  if (job.share) lines.push(`Share: ${formatSize(job.share.mem)} and ${job.share.compute}% of each device`);
  // Last, so the core's lines keep their positions (docs/behaviour.md §20.4).
  if (job.state === 'PENDING' && job.reason) lines.push(`Reason: ${reasonText(job.reason)}`);
  return lines.map((l) => l + '\n').join('');
}
