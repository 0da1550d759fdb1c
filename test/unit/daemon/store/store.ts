import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Store } from '../../../../packages/daemon/src/store/store';
import { waitFor } from '../../../helpers/wait';

const owner = { uid: 1000, gid: 1000, name: 'alice' };
const spec = { command: ['true'], cwd: '/', env: {}, name: 'true', count: 0, kind: null, time_limit: null, script: null };

t.test('ids are never reused, even after the newest jobs are deleted', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-store-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'x.db');
  let s = new Store(file);
  const a = s.insert(owner, spec, 1);
  const b = s.insert(owner, spec, 1);
  s.finish(b.id, { state: 'COMPLETED', exit_code: 0, finished_at: 2, error: null });
  s.removeJobs([b.id]);
  s.close();
  s = new Store(file);
  const c = s.insert(owner, spec, 3);
  t.ok(c.id > b.id && b.id > a.id);
  t.equal(s.db.pragma('journal_mode', { simple: true }), 'wal');
  t.equal(s.db.pragma('synchronous', { simple: true }), 1, 'synchronous=NORMAL (the store syncs the WAL itself)');
  s.close();
});

t.test('transitions and summaries', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-store-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const s = new Store(path.join(dir, 'x.db'));
  const j = s.insert(owner, { ...spec, count: 1, device_ids: [2], kind: 'nvidia' }, 10);
  s.markRunning(j.id, [{ kind: 'nvidia', id: 2, name: 'G', visible: 'GPU-2', npu: null, chip: null }], 11);
  t.throws(() => s.markRunning(j.id, [], 12), 'only a pending job starts');
  t.equal(s.finish(j.id, { state: 'FAILED', exit_code: 3, finished_at: 13, error: null }), true);
  t.equal(s.finish(j.id, { state: 'COMPLETED', exit_code: 0, finished_at: 14, error: null }), false, 'terminal is final');
  const [sum] = s.recentSummaries(10);
  t.same(Object.keys(sum!), ['id', 'owner', 'name', 'state', 'count', 'device_ids', 'kind', 'devices', 'submitted_at', 'started_at', 'finished_at', 'reason', 'cpus', 'mem', 'array', 'priority', 'nice', 'share']);
  t.equal(sum!.finished_at, 13);
  const got = s.get(j.id)!;
  t.same(got.result, { state: 'FAILED', exit_code: 3, finished_at: 13, error: null });
  s.close();
});

t.test('a foreign or corrupt database stops start-up with a clear message', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-store-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const junk = path.join(dir, 'junk.db');
  fs.writeFileSync(junk, 'this is not sqlite at all, not even close'.repeat(200));
  t.throws(() => new Store(junk), /cannot open job database .*junk\.db/);
  const Database = require('better-sqlite3');
  const foreign = path.join(dir, 'foreign.db');
  const db = new Database(foreign);
  db.exec('CREATE TABLE other (x)');
  db.close();
  t.throws(() => new Store(foreign), /not an xlurm database/);
});

t.test('group commit: writes of one turn become durable together, and only then', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-store-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'x.db');
  const s = new Store(file);
  t.teardown(() => s.close());
  const Database = require('better-sqlite3');
  const other = new Database(file, { readonly: true });
  t.teardown(() => other.close());
  const visible = () => (other.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n;
  const seenBeforeFlush: number[] = [];
  s.beforeFlush = () => seenBeforeFlush.push(visible());
  s.insert(owner, spec, 1);
  s.insert(owner, spec, 1);
  const durable = s.durable();
  t.equal(visible(), 0, 'not committed within the turn');
  await durable;
  t.equal(visible(), 2, 'committed together by the end of the turn');
  t.same(seenBeforeFlush, [0], 'beforeFlush runs once, just before the commit');
  s.beforeFlush = undefined;
  t.resolves(s.durable(), 'nothing open: resolves at once');

  const j = s.insert(owner, spec, 2);
  s.markRunning(j.id, [], 3);
  s.commit();
  t.equal(visible(), 3, 'commit() is immediate');

  s.insert(owner, spec, 4);
  const lost = s.durable();
  s.rollback();
  await t.rejects(lost, /rolled back/);
  t.equal(visible(), 3);
  t.equal(s.recentSummaries(10).length, 3, 'the rolled-back job is gone');
});

t.test('durability: nothing is reported durable before the WAL is fdatasync()ed; commits made during a sync share the next', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-store-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'x.db');
  const s = new Store(file);
  t.teardown(() => s.close());
  const walSize = fs.statSync(`${file}-wal`).size;
  t.ok(walSize >= 1000 * 4096, `the WAL is written out to its working size at open (${walSize} bytes)`);

  // Hold every fdatasync until the test releases it.
  const realFs = require('node:fs');
  const real = realFs.fdatasync;
  const held: Array<() => void> = [];
  realFs.fdatasync = (fd: number, cb: (e: Error | null) => void) => { held.push(() => real(fd, cb)); };
  t.teardown(() => { realFs.fdatasync = real; });
  const tick = () => new Promise((r) => setImmediate(r));

  let first = false;
  s.insert(owner, spec, 1);
  void s.durable().then(() => { first = true; });
  await tick(); await tick();
  t.equal(held.length, 1, 'the group commit started one sync');
  t.notOk(first, 'committed but not synced: not durable yet');

  let second = false; let third = false;
  s.insert(owner, spec, 1);
  void s.durable().then(() => { second = true; });
  await tick(); await tick();
  s.insert(owner, spec, 1);
  void s.durable().then(() => { third = true; });
  await tick(); await tick();
  t.equal(held.length, 1, 'no second sync while one is in flight');
  held.shift()!();
  // Both follow the completed sync asynchronously: its waiters are told, the next sync starts.
  await waitFor(() => first && held.length > 0, { what: 'the first sync done and the next one started' });
  t.ok(first, 'durable once its sync completed');
  t.notOk(second || third, 'commits made during the sync wait for the next one');
  t.equal(held.length, 1, 'one sync covers both later commits');
  held.shift()!();
  await waitFor(() => second && third, { what: 'the shared sync done' });
  t.ok(second && third, 'both durable after the shared sync');

  // A failed sync is an error for its waiters, never a silent success.
  let failing = 0;
  realFs.fdatasync = (_fd: number, cb: (e: Error | null) => void) => {
    failing++;
    const e = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    setImmediate(() => cb(e));
  };
  const errors: Error[] = [];
  s.onSyncError = (e) => errors.push(e);
  s.insert(owner, spec, 1);
  await t.rejects(s.durable(), /cannot write the job database: EIO/);
  t.equal(errors.length, 1, 'the store reports the failed sync');
  for (let i = 0; i < 5; i++) await tick();
  t.equal(failing, 1, 'a failing disk is not retried in a loop while nobody waits');
  await t.rejects(s.durable(), /EIO/, 'the next waiter gets a fresh attempt');
  t.equal(failing, 2);
  realFs.fdatasync = real;
});

t.test('an array: consecutive ids in one unit, its membership back after a reopen, its tasks by range', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-store-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'x.db');
  let s = new Store(file);
  const before = s.insert(owner, spec, 1);
  const n = 10000;
  const specs = Array.from({ length: n }, (_, i) => ({ ...spec, name: `sw[${i * 2}]` }));
  const members = specs.map((_, i) => ({ index: i * 2, count: n, min: 0, max: (n - 1) * 2, throttle: 4, params: i === 1 ? { lr: '0.1' } : null }));
  const t0 = performance.now();
  const jobs = s.insertArray(owner, specs, members, 2);
  s.commit();
  t.ok(performance.now() - t0 < 2000, `10k tasks inserted in ${(performance.now() - t0).toFixed(0)} ms`);
  const a = before.id + 1;
  t.same(jobs.map((j) => j.id).slice(0, 3), [a, a + 1, a + 2]);
  t.equal(jobs[n - 1]!.id, a + n - 1);
  t.same(jobs[1]!.array, { id: a, index: 2, count: n, min: 0, max: (n - 1) * 2, throttle: 4, params: { lr: '0.1' } });
  s.close();
  s = new Store(file);
  t.same(s.get(a + 1)!.array, { id: a, index: 2, count: n, min: 0, max: (n - 1) * 2, throttle: 4, params: { lr: '0.1' } });
  t.equal(s.get(before.id)!.array, null);
  const rows = s.arraySummaries(a, n);
  t.equal(rows.length, n);
  t.same(rows[3]!.array, { id: a, index: 6, count: n });
  t.same(s.arraySummaries(a, n, 6).map((r) => r.id), [a + 3]);
  t.same(s.arraySummaries(a, n, 7), []);
  t.same(s.arraySummaries(before.id, 1), [], 'no array');
  // One unit: a task that cannot be inserted leaves none of them.
  const bad = [{ ...spec, name: 'ok[0]' }, { ...spec, name: 'bad[1]', count: undefined as unknown as number }];
  t.throws(() => s.insertArray(owner, bad, [members[0]!, members[1]!], 3));
  s.commit();
  t.equal(s.recentSummaries(1)[0]!.id, a + n - 1, 'nothing of the failed array is left');
  s.close();
});

t.test('an array keeps its environment, script and command once (§28.2); hold/update keep them out of the rows', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-store-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'x.db');
  let s = new Store(file);
  const env = { BIG: 'e'.repeat(1 << 20) };
  const base = { ...spec, env, script: 's'.repeat(1000), command: ['a', 'b'] };
  const n = 500;
  const specs = Array.from({ length: n }, (_, i) => ({ ...base, name: `big[${i}]`, command: i === 7 ? ['a', 'x7'] : base.command }));
  const members = specs.map((_, i) => ({ index: i, count: n, min: 0, max: n - 1, throttle: null, params: null }));
  const jobs = s.insertArray(owner, specs, members, 2);
  s.commit();
  const total = (s.db.prepare('SELECT total(length(spec)) AS n FROM jobs').get() as { n: number }).n;
  const texts = (s.db.prepare('SELECT count(*) AS c, total(length(text)) AS n FROM job_texts').get() as { c: number; n: number });
  t.equal(texts.c, 1, 'one text row');
  t.ok(texts.n > 1 << 20 && texts.n < (1 << 20) + 5000, `the text is one copy (${texts.n} bytes)`);
  t.ok(total < n * 1000, `the ${n} rows hold no copy (${total} bytes in all)`);
  const pendingTotal = (s.db.prepare(`SELECT value FROM metric_totals WHERE name = 'jobs' AND label = 'PENDING'`).get() as { value: number }).value;
  t.equal(pendingTotal, n, 'the jobs-per-state total counts every task (one statement for the later ones)');
  const a = jobs[0]!.id;
  // A hold (a changed spec) of a task keeps the row small.
  s.updateSpec(a + 3, { ...jobs[3]!.spec, hold: true });
  s.setOrderKeys(a + 4, 5, 1, { ...jobs[4]!.spec, nice: 3 });
  s.commit();
  const row3 = (s.db.prepare('SELECT length(spec) AS n FROM jobs WHERE id = ?').get(a + 3) as { n: number }).n;
  t.ok(row3 < 1000, `an updated task's row stays small (${row3})`);
  s.close();
  s = new Store(file);
  const active = s.active();
  t.equal(active.length, n);
  t.equal(active[0]!.spec.env, active[n - 1]!.spec.env, 'loaded tasks share one environment object');
  t.same(active[0]!.spec.env, env);
  t.equal(active[1]!.spec.script, base.script);
  t.same(active[1]!.spec.command, ['a', 'b']);
  t.same(active[7]!.spec.command, ['a', 'x7'], "a task's own words are its own");
  t.equal(active[3]!.spec.hold, true);
  t.same(active[3]!.spec.env, env, 'a held task still has its environment');
  t.equal(active[4]!.spec.nice, 3);
  t.equal(s.get(a + 9)!.spec.script, base.script);
  s.close();
});
