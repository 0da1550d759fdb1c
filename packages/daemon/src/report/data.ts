/**
 * The data behind `xlurm report` (docs/behaviour.md §26.4): the jobs that overlap a window, with
 * their devices and times, and the device samples averaged per UTC day. The report itself is drawn
 * by the client; the daemon only selects, so a report of a busy month costs it one indexed query.
 *
 * Read through a read-only connection of its own: the store's connection carries the daemon's
 * group commits, and a report must never sit inside (or wait behind) one of them. WAL mode lets
 * it read a consistent snapshot while the daemon writes.
 */
import Database from 'better-sqlite3';
import type { Device, DeviceKind, OpResult } from '@xlurm/protocol';
import { KIND_LABEL } from '@xlurm/protocol';

type ReportData = OpResult<'report'>;
type ReportJob = ReportData['jobs'][number];

const DAY = 86400;

interface JobRow {
  id: number; owner_uid: number; owner_name: string; name: string; count: number; state: string;
  devices: string; submitted_at: number; started_at: number | null; finished_at: number | null;
  device_weight: number | null;
}

// device_weight: what a started slice job counts as in device time (its share of each card's memory,
// recorded at its start; docs/behaviour.md §25.4); NULL for whole devices.
const COLUMNS = 'id, owner_uid, owner_name, name, count, state, devices, submitted_at, started_at, finished_at, device_weight';

/** One read-only connection per database file, opened on first use (the daemon has one file). */
const connections = new Map<string, { db: Database.Database; stmts: Map<string, Database.Statement> }>();

function connection(file: string) {
  let c = connections.get(file);
  if (!c) {
    c = { db: new Database(file, { readonly: true, fileMustExist: true }), stmts: new Map() };
    connections.set(file, c);
  }
  return c;
}

function prepared(file: string, sql: string): Database.Statement {
  const c = connection(file);
  let s = c.stmts.get(sql);
  if (!s) { s = c.db.prepare(sql); c.stmts.set(sql, s); }
  return s;
}

/** Close the connections (daemon shutdown, tests). */
export function closeReportConnections(): void {
  for (const c of connections.values()) c.db.close();
  connections.clear();
}

const deviceKey = (d: Pick<Device, 'kind' | 'id'>) => `${d.kind}:${d.id}`;

export interface ReportQuery {
  /** The store's file. */
  db: string;
  /** The window, unix seconds. */
  since: number;
  until: number;
  /** Only this owner's jobs; undefined: every user's (root). */
  uid: number | undefined;
  /** The inventory, in xinfo's order. */
  devices: readonly Device[];
}

/**
 * Jobs that were submitted before `until` and had not finished before `since`: the finished ones
 * through the finished_at index, the active ones through the active-state index (two indexed
 * reads, never a scan of the history).
 */
export function reportData(q: ReportQuery): ReportData {
  const own = q.uid === undefined ? '' : ' AND owner_uid = @uid';
  const args = q.uid === undefined ? { since: q.since, until: q.until } : { since: q.since, until: q.until, uid: q.uid };
  const finished = prepared(q.db, `SELECT ${COLUMNS} FROM jobs WHERE finished_at >= @since AND submitted_at <= @until${own}`).all(args) as JobRow[];
  const active = prepared(q.db, `SELECT ${COLUMNS} FROM jobs WHERE state IN ('PENDING', 'RUNNING') AND submitted_at <= @until${own}`).all(args) as JobRow[];
  const rows = finished.concat(active.filter((r) => r.finished_at === null)).sort((a, b) => a.id - b.id);

  const devices: Device[] = [...q.devices];
  const index = new Map(devices.map((d, i) => [deviceKey(d), i]));
  const indexOf = (d: Device): number => {
    const k = deviceKey(d);
    let i = index.get(k);
    if (i === undefined) { i = devices.length; devices.push(d); index.set(k, i); }
    return i;
  };
  const jobs: ReportJob[] = rows.map((r) => {
    const held = r.devices === '[]' ? [] : (JSON.parse(r.devices) as Device[]).map(indexOf);
    return {
      id: r.id, user: r.owner_name, uid: r.owner_uid, name: r.name, count: r.count, state: r.state as ReportJob['state'],
      devices: held, submitted_at: r.submitted_at, started_at: r.started_at, finished_at: r.finished_at,
      device_weight: r.device_weight ?? held.length,
    };
  });
  const samples = q.uid === undefined ? dailySamples(q, indexOf) : [];
  return { since: q.since, until: q.until, host: q.uid === undefined, devices, jobs, samples };
}

/**
 * The device samples of the window averaged per UTC day and device, where the store has them
 * (docs/behaviour.md §26.2; rows name a device by its label, `nv:0`). Summed in SQL: a month of
 * 8 devices at 30 s is 690,000 rows, which the client must never receive one by one.
 */
function dailySamples(q: ReportQuery, indexOf: (d: Device) => number): ReportData['samples'] {
  const c = connection(q.db);
  const cols = (c.db.prepare(`SELECT name FROM pragma_table_info('device_samples')`).all() as { name: string }[]).map((r) => r.name);
  if (!['at', 'device', 'utilization', 'memory_used'].every((n) => cols.includes(n))) return [];
  // One indexed range per UTC day, grouped by device: sorting each day's 23,000 rows is cheaper
  // than one sort of the whole window's (the grouping is by sorting in SQLite).
  const day = prepared(q.db, `SELECT device, count(*) AS n, avg(utilization) AS utilization, avg(memory_used) AS memory_used
    FROM device_samples WHERE at >= @from AND at < @to GROUP BY device`);
  const rows: { day: number; device: string; n: number; utilization: number | null; memory_used: number | null }[] = [];
  for (let d = Math.floor(q.since / DAY) * DAY; d <= q.until; d += DAY) {
    const part = day.all({ from: Math.max(d, q.since), to: Math.min(d + DAY, q.until + 1) }) as Omit<(typeof rows)[number], 'day'>[];
    for (const r of part) rows.push({ day: d, ...r });
  }
  const byLabel = new Map(Object.entries(KIND_LABEL).map(([kind, label]) => [label, kind as DeviceKind]));
  const out: ReportData['samples'] = [];
  for (const r of rows) {
    const m = /^([a-z]+):(\d+)$/.exec(r.device);
    const kind = m ? byLabel.get(m[1]!) : undefined;
    if (!m || !kind) continue;
    out.push({
      day: r.day, device: indexOf({ kind, id: Number(m[2]), name: '', visible: '', npu: null, chip: null }),
      samples: r.n, utilization: r.utilization, memory_used: r.memory_used,
    });
  }
  return out;
}
