// The data behind `xlurm report` (docs/behaviour.md §26.4): which jobs a window holds, whose,
// the devices as indexes, and the samples summed per day.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import type { Device } from '@xlurm/protocol';
import type { Scope as Tap } from '../../../helpers/tap';
import { Store } from '../../../../packages/daemon/src/store/store';
import { closeReportConnections, reportData } from '../../../../packages/daemon/src/report/data';
import { reportDataOffLoop, stopReportWorker } from '../../../../packages/daemon/src/report/off-loop';

const dev = (id: number): Device => ({ kind: 'nvidia', id, name: 'Fake H100', visible: `GPU-${id}`, npu: null, chip: null });

function storeWith(t: Tap, rows: Array<[uid: number, name: string, state: string, devices: Device[], submitted: number, started: number | null, finished: number | null]>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-report-data-'));
  const file = path.join(dir, 'xlurm.db');
  const store = new Store(file);
  const insert = store.db.prepare(`INSERT INTO jobs (owner_uid, owner_gid, owner_name, name, count, kind, device_ids, spec, state, devices, submitted_at, started_at, finished_at, exit_code)
    VALUES (?, ?, ?, ?, ?, NULL, NULL, '{}', ?, ?, ?, ?, ?, ?)`);
  for (const [uid, name, state, devices, submitted, started, finished] of rows) {
    insert.run(uid, uid, name, `job-of-${name}`, devices.length, state, JSON.stringify(devices), submitted, started, finished, finished === null ? null : 0);
  }
  t.teardown(() => { closeReportConnections(); store.close(); fs.rmSync(dir, { recursive: true, force: true }); });
  return file;
}

const DAY = 86400;
const until = 100 * DAY;
const since = until - 7 * DAY;

t.test('the window: jobs not finished before it and submitted before its end; owners; devices by index', async (t) => {
  const db = storeWith(t, [
    [1000, 'alice', 'COMPLETED', [dev(0)], since - 3 * DAY, since - 3 * DAY, since - 2 * DAY], // ended before: out
    [1000, 'alice', 'COMPLETED', [dev(1)], since - 10, since - 5, since + 100], // straddles the start: in
    [1001, 'bob', 'FAILED', [dev(0), dev(1)], since + DAY, since + DAY + 5, since + DAY + 50],
    [1001, 'bob', 'RUNNING', [dev(7)], until - 100, until - 90, null], // a device the inventory no longer has
    [1000, 'alice', 'PENDING', [], until - 10, null, null],
    [1000, 'alice', 'CANCELLED', [], since + 5, null, since + 9], // never started
  ]);
  const all = reportData({ db, since, until, uid: undefined, devices: [dev(0), dev(1)] });
  t.equal(all.host, true);
  t.same(all.jobs.map((j) => j.id), [2, 3, 4, 5, 6]);
  t.same(all.devices.map((d) => d.id), [0, 1, 7], 'a device only a job knows is appended');
  t.same(all.jobs.find((j) => j.id === 3)!.devices, [0, 1]);
  t.same(all.jobs.find((j) => j.id === 4)!.devices, [2]);
  t.same(all.jobs.find((j) => j.id === 3), {
    id: 3, user: 'bob', uid: 1001, name: 'job-of-bob', count: 2, state: 'FAILED', devices: [0, 1],
    submitted_at: since + DAY, started_at: since + DAY + 5, finished_at: since + DAY + 50, device_weight: 2,
  }, 'no command, environment or directory');
  t.equal(all.jobs.find((j) => j.id === 5)!.device_weight, 0, 'a pending job holds nothing');
  t.same(all.samples, [], 'no samples table: none');

  const alice = reportData({ db, since, until, uid: 1000, devices: [dev(0), dev(1)] });
  t.equal(alice.host, false);
  t.same(alice.jobs.map((j) => j.id), [2, 5, 6], 'a user sees only their own jobs');
  t.ok(alice.jobs.every((j) => j.user === 'alice'));
});

t.test('device samples, averaged per UTC day and device (the host view only)', async (t) => {
  const db = storeWith(t, []);
  const w = new (require('better-sqlite3'))(db) as import('better-sqlite3').Database;
  const ins = w.prepare(`INSERT INTO device_samples (at, device, status, job, user, utilization, memory_used) VALUES (?, ?, 'allocated', 1, 'alice', ?, ?)`);
  ins.run(since + 10, 'nv:0', 0.2, 100);
  ins.run(since + 40, 'nv:0', 0.6, 300);
  ins.run(since + DAY + 10, 'nv:1', null, null);
  ins.run(since + 20, 'nv:9', 1, 0); // a device no longer in the inventory
  ins.run(since - 10, 'nv:0', 1, 0); // before the window
  w.close();
  const r = reportData({ db, since, until, uid: undefined, devices: [dev(0), dev(1)] });
  t.same(r.samples.map((s) => ({ ...s, utilization: s.utilization === null ? null : Math.round(s.utilization * 100) / 100 })), [
    { day: since, device: 0, samples: 2, utilization: 0.4, memory_used: 200 },
    { day: since, device: 2, samples: 1, utilization: 1, memory_used: 0 },
    { day: since + DAY, device: 1, samples: 1, utilization: null, memory_used: null },
  ]);
  t.equal(r.devices[2]!.id, 9);
  t.same(reportData({ db, since, until, uid: 1000, devices: [dev(0), dev(1)] }).samples, [], 'a user\'s report has no host samples');
});

t.test('on the worker thread: the same answer; a store that cannot be read is a STORAGE error', async (t) => {
  const db = storeWith(t, [
    [1000, 'alice', 'COMPLETED', [dev(1)], since - 10, since - 5, since + 100],
    [1001, 'bob', 'RUNNING', [dev(0)], until - 100, until - 90, null],
  ]);
  t.teardown(stopReportWorker);
  const q = { db, since, until, uid: undefined, devices: [dev(0), dev(1)] };
  t.same(await reportDataOffLoop(q), reportData(q));
  t.same(await reportDataOffLoop({ ...q, uid: 1001 }), reportData({ ...q, uid: 1001 }));
  await t.rejects(reportDataOffLoop({ ...q, db: path.join(path.dirname(db), 'missing.db') }), { code: 'STORAGE', message: /^cannot read the job database for the report: / });
});

t.test('a slice job\'s device weight: what its start recorded (its share of each card\'s memory)', async (t) => {
  const db = storeWith(t, [
    [1000, 'alice', 'COMPLETED', [dev(0), dev(1)], since + 10, since + 20, since + 3620],
    [1000, 'alice', 'COMPLETED', [dev(0)], since + 10, since + 20, since + 3620],
  ]);
  const w = new Database(db);
  w.prepare('UPDATE jobs SET device_weight = 0.5 WHERE id = 1').run();
  w.close();
  const r = reportData({ db, since, until, uid: undefined, devices: [dev(0), dev(1)] });
  t.same(r.jobs.map((j) => [j.id, j.device_weight]), [[1, 0.5], [2, 1]], 'NULL: whole devices, its count');
});
