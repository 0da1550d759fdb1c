/**
 * The stats table of `xlurm report` (docs/behaviour.md §26.1, §26.4): the shape of the daemon's
 * `stats` answer, and the same figures computed from the report's own jobs for a daemon that has
 * no `stats` operation.
 */
import type { OpResult } from '@xlurm/protocol';

type ReportData = OpResult<'report'>;

export const FINAL_STATES = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'EXPIRED', 'OUT_OF_MEMORY'] as const;

/** A user's row of `xlurm stats --json` (docs/behaviour.md §26.1): the protocol's, as the daemon sends it. */
export type UserStatsRow = StatsTable['users'][number];

/** `xlurm stats --json` (docs/behaviour.md §26.1): the daemon's `stats` answer. */
export type StatsTable = OpResult<'stats'>;

/**
 * The devices a job counts as in device time: its device count, or a slice job's share of each
 * card's memory (docs/behaviour.md §25.4); a daemon that does not send the weight: the count.
 */
export function deviceWeight(j: ReportData['jobs'][number]): number {
  return j.device_weight ?? j.devices.length;
}

/** The p-quantile of sorted values, nearest rank (0 when empty). */
export function nearestRank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** The §26.1 figures over the jobs that ended in the window (CPU-hours are not in the report's data: 0). */
export function statsFromReport(data: ReportData): StatsTable {
  const byUser = new Map<number, { user: string; jobs: Record<string, number>; dev: number; waits: number[]; runs: number[]; started: number }>();
  for (const j of data.jobs) {
    if (j.finished_at === null || j.finished_at < data.since || j.finished_at > data.until) continue;
    let u = byUser.get(j.uid);
    if (!u) {
      u = { user: j.user, jobs: Object.fromEntries(FINAL_STATES.map((s) => [s, 0])), dev: 0, waits: [], runs: [], started: 0 };
      byUser.set(j.uid, u);
    }
    u.jobs[j.state] = (u.jobs[j.state] ?? 0) + 1;
    if (j.started_at !== null) {
      u.started++;
      const run = Math.max(0, j.finished_at - j.started_at);
      u.runs.push(run);
      u.waits.push(Math.max(0, j.started_at - j.submitted_at));
      u.dev += (run * deviceWeight(j)) / 3600;
    }
  }
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const users = [...byUser].sort((a, b) => a[1].user.localeCompare(b[1].user)).map(([uid, u]) => ({
    user: u.user, uid, jobs: u.jobs, device_hours: u.dev, cpu_hours: 0,
    wait_mean_s: mean(u.waits), wait_p95_s: nearestRank([...u.waits].sort((a, b) => a - b), 0.95),
    run_mean_s: mean(u.runs), success_rate: u.started ? (u.jobs.COMPLETED ?? 0) / u.started : 0,
  }));
  let host: StatsTable['host'] = null;
  if (data.host) {
    const available = (data.devices.length * (data.until - data.since)) / 3600;
    const used = busySeconds(data) / 3600;
    host = { device_hours: used, available_device_hours: available, utilization: available > 0 ? used / available : 0 };
  }
  return { since: data.since, until: data.until, users, host };
}

/** Device-seconds held within the window by every job in the data. */
function busySeconds(data: ReportData): number {
  let s = 0;
  for (const j of data.jobs) {
    if (j.started_at === null) continue;
    const a = Math.max(j.started_at, data.since);
    const b = Math.min(j.finished_at ?? data.until, data.until);
    if (b > a) s += (b - a) * deviceWeight(j);
  }
  return s;
}
