/**
 * Usage statistics (docs/behaviour.md §26.1): per user, the jobs that ended
 * in a window by final state, device- and CPU-hours, wait and run times,
 * success rate; for root, the host's utilisation.
 *
 * Cheap on a long history: the sums come from `usage_daily` (one row per
 * user and UTC day, kept by a trigger when a job ends, and outliving the
 * jobs' own retention), so the whole days of a window cost one row per user
 * and day; only the two partial days at its ends are summed from the jobs
 * themselves, through the covering index `jobs_stats` (finished_at first).
 * The 95th percentile of the wait is read per user from `jobs_user_wait`
 * (ordered by wait), counting down from the longest: no sort of the window.
 * It covers the jobs the history still holds (`[daemon] retention`).
 * A job's device-hours are its run time × its device weight, recorded when it
 * started (a slice: its share of each card's memory, docs/behaviour.md §25.4;
 * NULL: whole devices, its count).
 */
import type Database from 'better-sqlite3';
import type { OpResult } from '@xlurm/protocol';

/** The final states every row lists, in the CSV's column order (docs/behaviour.md §26.1). */
export const FINAL_STATES = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'EXPIRED', 'OUT_OF_MEMORY'] as const;

/** A user's row and the whole answer: the protocol's `stats` result (docs/behaviour.md §26.1), defined once. */
export type StatsResult = OpResult<'stats'>;
export type UserStatsRow = StatsResult['users'][number];

export interface StatsQuery {
  since: number;
  until: number;
  /** Only this account's rows (a user asking for their own). */
  uid?: number;
  /** Only the rows of this account name (root's `--user`). */
  name?: string;
  /** Add the host totals (root). */
  host: boolean;
  /** Devices in the inventory: the host's available device-hours. */
  devices: number;
}

const DAY = 86400;

/** Sums over the jobs that ended in [@from, @to) (a partial day), by user. */
const EDGE_SQL = `
  SELECT owner_uid AS uid, max(owner_name) AS name,
         total(state = 'COMPLETED') AS completed, total(state = 'FAILED') AS failed, total(state = 'CANCELLED') AS cancelled,
         total(state = 'TIMED_OUT') AS timed_out, total(state = 'EXPIRED') AS expired, total(state = 'OUT_OF_MEMORY') AS out_of_memory,
         count(started_at) AS started, count(started_at) AS retained,
         total(max(0, finished_at - started_at) * ifnull(device_weight, count)) AS device_seconds,
         total(max(0, finished_at - started_at) * cpus) AS cpu_seconds,
         total(started_at - submitted_at) AS wait_seconds, total(max(0, finished_at - started_at)) AS run_seconds
    FROM jobs INDEXED BY jobs_stats
   WHERE finished_at >= @from AND finished_at < @to AND finished_at IS NOT NULL
   GROUP BY owner_uid`;

/** The same sums over whole days [@from, @to] from the daily rollup. */
const DAYS_SQL = `
  SELECT uid, max(name) AS name, total(completed) AS completed, total(failed) AS failed, total(cancelled) AS cancelled,
         total(timed_out) AS timed_out, total(expired) AS expired, total(out_of_memory) AS out_of_memory,
         total(started) AS started, total(started - removed_started) AS retained,
         total(device_seconds) AS device_seconds, total(cpu_seconds) AS cpu_seconds,
         total(wait_seconds) AS wait_seconds, total(run_seconds) AS run_seconds
    FROM usage_daily WHERE day >= @from AND day <= @to GROUP BY uid`;

const NTH_LONGEST_WAIT_SQL = `
  SELECT started_at - submitted_at AS w FROM jobs INDEXED BY jobs_user_wait
   WHERE owner_uid = @uid AND started_at IS NOT NULL AND finished_at IS NOT NULL AND finished_at >= @since AND finished_at <= @until
   ORDER BY started_at - submitted_at DESC LIMIT 1 OFFSET @skip`;

interface Sums {
  uid: number; name: string; completed: number; failed: number; cancelled: number; timed_out: number; expired: number;
  out_of_memory: number; started: number;
  /** Of the started jobs, those the history still holds (the 95th percentile ranks these). */
  retained: number;
  device_seconds: number; cpu_seconds: number; wait_seconds: number; run_seconds: number;
}
const SUM_KEYS = ['completed', 'failed', 'cancelled', 'timed_out', 'expired', 'out_of_memory', 'started', 'retained',
  'device_seconds', 'cpu_seconds', 'wait_seconds', 'run_seconds'] as const;

const round = (x: number, places: number) => { const f = 10 ** places; return Math.round(x * f) / f; };

const prepared = new WeakMap<Database.Database, Record<'edge' | 'days' | 'nth', Database.Statement>>();

function statements(db: Database.Database) {
  let s = prepared.get(db);
  if (!s) {
    s = { edge: db.prepare(EDGE_SQL), days: db.prepare(DAYS_SQL), nth: db.prepare(NTH_LONGEST_WAIT_SQL) };
    prepared.set(db, s);
  }
  return s;
}

/** Per user, the sums over the jobs that ended in [since, until]. */
function sums(db: Database.Database, since: number, until: number): Map<number, Sums> {
  const st = statements(db);
  const parts: Sums[][] = [];
  const first = Math.floor(since / DAY) + 1;
  const last = Math.floor(until / DAY) - 1;
  if (last >= first) {
    parts.push(st.edge.all({ from: since, to: first * DAY }) as Sums[]);
    parts.push(st.days.all({ from: first, to: last }) as Sums[]);
    parts.push(st.edge.all({ from: (last + 1) * DAY, to: until + 1 }) as Sums[]);
  } else {
    parts.push(st.edge.all({ from: since, to: until + 1 }) as Sums[]);
  }
  const out = new Map<number, Sums>();
  for (const rows of parts) {
    for (const r of rows) {
      const have = out.get(r.uid);
      if (!have) { out.set(r.uid, { ...r }); continue; }
      for (const k of SUM_KEYS) have[k] += r[k];
    }
  }
  return out;
}

/**
 * The nearest-rank 95th percentile of the waits of a user's started jobs in
 * the window: the (n - rank + 1)th longest of the `n` the history holds.
 */
function waitP95(db: Database.Database, uid: number, since: number, until: number, n: number): number {
  const st = statements(db);
  if (n <= 0) return 0;
  const rank = Math.ceil(0.95 * n); // 1-based, ascending
  const row = st.nth.get({ uid, since, until, skip: n - rank }) as { w: number } | undefined;
  return row?.w ?? 0;
}

export function usageStats(db: Database.Database, q: StatsQuery): StatsResult {
  const byUid = sums(db, q.since, q.until);
  let hostDevSeconds = 0;
  const users: UserStatsRow[] = [];
  for (const [uid, u] of [...byUid].sort((a, b) => a[0] - b[0])) {
    hostDevSeconds += u.device_seconds;
    if (q.uid !== undefined && uid !== q.uid) continue;
    if (q.name !== undefined && u.name !== q.name) continue;
    const jobs: Record<string, number> = {
      COMPLETED: u.completed, FAILED: u.failed, CANCELLED: u.cancelled, TIMED_OUT: u.timed_out,
      EXPIRED: u.expired, OUT_OF_MEMORY: u.out_of_memory,
    };
    const started = u.started;
    users.push({
      user: u.name, uid, jobs,
      device_hours: round(u.device_seconds / 3600, 6),
      cpu_hours: round(u.cpu_seconds / 3600, 6),
      wait_mean_s: started ? round(u.wait_seconds / started, 3) : 0,
      wait_p95_s: waitP95(db, uid, q.since, q.until, u.retained),
      run_mean_s: started ? round(u.run_seconds / started, 3) : 0,
      success_rate: started ? round(u.completed / started, 4) : 0,
    });
  }
  let host: StatsResult['host'] = null;
  if (q.host) {
    const available = q.devices * Math.max(0, q.until - q.since);
    host = {
      device_hours: round(hostDevSeconds / 3600, 6),
      available_device_hours: round(available / 3600, 6),
      utilization: available > 0 ? round(Math.min(1, hostDevSeconds / available), 6) : 0,
    };
  }
  return { since: q.since, until: q.until, users, host };
}
