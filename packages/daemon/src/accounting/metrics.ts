/**
 * The Prometheus text exposition (docs/behaviour.md §26.3): what
 * `metrics_file` holds and `xlurm metrics` prints. Exactly the documented
 * names; every label set that can exist is written (0 where none), so a
 * series never vanishes when a count drops to zero.
 */
import { KIND_LABEL, VERSION, type Device } from '@xlurm/protocol';
import { DeviceStatus, JobState, ReasonCode } from '@xlurm/protocol/dist/schemas';
import type Database from 'better-sqlite3';
import type { Core } from '../core';
import type { DeviceReading } from '../devices/backend';
import { passSeconds, type Histogram } from './histogram';


const literals = (u: { anyOf: ReadonlyArray<{ const?: unknown }> }): string[] => u.anyOf.map((x) => String(x.const));
const STATES = literals(JobState as never);
const REASONS = literals(ReasonCode as never);
const DEVICE_STATUSES = literals(DeviceStatus as never);
/** A pending job no pass has explained yet. */
const NO_REASON = 'None';

export const deviceLabel = (d: Device): string => `${KIND_LABEL[d.kind]}:${d.id}`;

/** A label value as the text format wants it: backslash, double quote and newline escaped. */
function esc(v: string): string { return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n'); }

function num(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

class Text {
  private readonly lines: string[] = [];
  family(name: string, type: 'gauge' | 'counter' | 'histogram', help: string): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  }
  sample(name: string, labels: Record<string, string>, v: number): void {
    const l = Object.entries(labels).map(([k, x]) => `${k}="${esc(x)}"`).join(',');
    this.lines.push(`${name}${l ? `{${l}}` : ''} ${num(v)}`);
  }
  histogram(name: string, buckets: ReadonlyArray<readonly [string, number]>, sum: number, count: number): void {
    for (const [le, n] of buckets) this.sample(`${name}_bucket`, { le }, n);
    this.sample(`${name}_sum`, {}, sum);
    this.sample(`${name}_count`, {}, count);
  }
  toString(): string { return this.lines.join('\n') + '\n'; }
}

interface TotalRow { name: string; label: string; value: number }

function totals(db: Database.Database): TotalRow[] {
  return db.prepare(`SELECT name, label, value FROM metric_totals`).all() as TotalRow[];
}

/** The recorded device weights of the active slice jobs (through the active-state index). */
function runningWeights(db: Database.Database): Map<number, number> {
  const rows = db.prepare(`SELECT id, device_weight AS w FROM jobs WHERE state IN ('PENDING', 'RUNNING') AND device_weight IS NOT NULL`)
    .all() as { id: number; w: number }[];
  return new Map(rows.map((r) => [r.id, r.w]));
}

/**
 * Jobs per state: the history's from the store's running totals (a trigger
 * keeps them, so this never scans the jobs), the queue's from memory.
 */
export function jobCounts(core: Core, rows: readonly TotalRow[] = totals(core.historyDb)): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) if (r.name === 'jobs' && r.value > 0) out[r.label] = r.value;
  let pending = 0; let running = 0;
  for (const j of core.activeJobs()) { if (j.state === 'PENDING') pending++; else if (j.state === 'RUNNING') running++; }
  out.PENDING = pending;
  out.RUNNING = running;
  return out;
}

/** The whole exposition, now. `readings`: the latest device readings (the sampler's). */
export function metricsText(core: Core, readings: ReadonlyMap<string, DeviceReading>): string {
  const t = new Text();
  t.family('xlurm_up', 'gauge', 'Whether the xlurm daemon is up and answering (1).');
  t.sample('xlurm_up', {}, 1);
  t.family('xlurm_build_info', 'gauge', 'The running daemon\'s version, as a label.');
  t.sample('xlurm_build_info', { version: VERSION }, 1);

  const rows = totals(core.historyDb);
  const counts = jobCounts(core, rows);
  t.family('xlurm_jobs', 'gauge', 'Jobs in the job history by state (PENDING and RUNNING: the queue now).');
  for (const s of new Set([...STATES, ...Object.keys(counts)])) t.sample('xlurm_jobs', { state: s }, counts[s] ?? 0);

  const byReason = new Map<string, number>(REASONS.map((r) => [r, 0]));
  byReason.set(NO_REASON, 0);
  for (const j of core.activeJobs()) {
    if (j.state !== 'PENDING') continue;
    const r = j.reason?.code ?? NO_REASON;
    byReason.set(r, (byReason.get(r) ?? 0) + 1);
  }
  t.family('xlurm_jobs_pending_by_reason', 'gauge', 'Pending jobs by the reason they wait (None: not yet considered by a pass).');
  for (const [r, n] of byReason) t.sample('xlurm_jobs_pending_by_reason', { reason: r }, n);

  const views = core.deviceViews();
  t.family('xlurm_device_status', 'gauge', 'Each device\'s status: 1 for the status it has, 0 for the others.');
  for (const v of views) {
    const device = deviceLabel(v.device);
    for (const s of DEVICE_STATUSES) t.sample('xlurm_device_status', { device, status: s }, v.status === s ? 1 : 0);
  }
  t.family('xlurm_device_utilization_ratio', 'gauge', 'Device utilisation (0-1) as the vendor library last reported it; absent where it reports none.');
  for (const v of views) {
    const r = readings.get(deviceLabel(v.device));
    if (r?.utilization !== undefined) t.sample('xlurm_device_utilization_ratio', { device: deviceLabel(v.device) }, r.utilization);
  }
  t.family('xlurm_device_memory_used_bytes', 'gauge', 'Device memory in use as the vendor library last reported it; absent where it reports none.');
  for (const v of views) {
    const r = readings.get(deviceLabel(v.device));
    if (r?.memoryUsed !== undefined) t.sample('xlurm_device_memory_used_bytes', { device: deviceLabel(v.device) }, r.memoryUsed);
  }

  const perUser = new Map<string, number>();
  const waitBuckets: Array<[string, number]> = [];
  let waitSum = 0; let waitCount = 0;
  for (const r of rows) {
    if (r.name === 'user_device_seconds') perUser.set(r.label, r.value);
    else if (r.name === 'wait_bucket') waitBuckets.push([r.label, r.value]);
    else if (r.name === 'wait_sum') waitSum = r.value;
    else if (r.name === 'wait_count') waitCount = r.value;
  }
  // Running jobs count up to now; their completion adds the whole run to the stored total. A slice
  // counts at the device weight its start recorded, the rate its completion adds (docs/behaviour.md §25.4).
  const now = core.now();
  let weights: Map<number, number> | undefined;
  for (const j of core.activeJobs()) {
    if (j.state !== 'RUNNING' || j.started_at === null || j.devices.length === 0) continue;
    let rate = j.devices.length;
    if (j.spec.share) {
      weights ??= runningWeights(core.historyDb);
      rate = weights.get(j.id) ?? rate;
    }
    perUser.set(j.owner.name, (perUser.get(j.owner.name) ?? 0) + Math.max(0, now - j.started_at) * rate);
  }
  t.family('xlurm_user_device_seconds_total', 'counter', 'Device-seconds used per user (run time times devices; a slice: times its share of each card\'s memory), running jobs up to now.');
  for (const [user, v] of [...perUser].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    t.sample('xlurm_user_device_seconds_total', { user }, v);
  }

  waitBuckets.sort((a, b) => Number(a[0]) - Number(b[0]));
  t.family('xlurm_job_wait_seconds', 'histogram', 'Time from submission to start of the jobs that started.');
  t.histogram('xlurm_job_wait_seconds', [...waitBuckets.map(([le, n]) => [String(Number(le)), n] as const), ['+Inf', waitCount]], waitSum, waitCount);
  t.family('xlurm_scheduler_pass_seconds', 'histogram', 'Duration of the scheduler\'s passes since the daemon started.');
  histogramOf(t, 'xlurm_scheduler_pass_seconds', passSeconds);
  return t.toString();
}

function histogramOf(t: Text, name: string, h: Histogram): void {
  t.histogram(name, h.cumulative(), h.sum, h.count);
}
