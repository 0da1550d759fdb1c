import t from 'tap';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, SCHEMA_VERSION } from '../../../../packages/daemon/src/store/schema';
import { Store } from '../../../../packages/daemon/src/store/store';

const columns = (db: Database.Database) => (db.prepare('PRAGMA table_info(jobs)').all() as { name: string }[]).map((c) => c.name);

t.test('a version-1 database (with stepd_pid) opens, keeps its jobs and loses the column', async (t) => {
  const file = path.join(t.testdir(), 'xlurm.db');
  const old = new Database(file);
  old.exec(MIGRATIONS[0]!);
  old.pragma('user_version = 1');
  const spec = JSON.stringify({ command: ['true'], cwd: '/', env: {}, name: 'old', count: 0, kind: null, time_limit: null, script: null });
  const insert = old.prepare(`INSERT INTO jobs (owner_uid, owner_gid, owner_name, name, count, spec, state, devices, submitted_at, started_at, finished_at, exit_code, error, stepd_pid)
                              VALUES (1000, 1000, 'u', 'old', 0, ?, ?, '[]', 10, ?, ?, ?, NULL, ?)`);
  insert.run(spec, 'COMPLETED', 11, 12, 0, 4242);
  insert.run(spec, 'RUNNING', 13, null, null, 4343);
  insert.run(spec, 'PENDING', null, null, null, null);
  old.close();

  const store = new Store(file);
  try {
    t.match(store.get(1), { id: 1, state: 'COMPLETED', result: { state: 'COMPLETED', exit_code: 0, finished_at: 12, error: null } });
    t.same(store.active().map((j) => [j.id, j.state]), [[2, 'RUNNING'], [3, 'PENDING']]);
    t.notOk('stepdPid' in store.get(2)!, 'no pid in the job the daemon keeps');
    // The statements that used to clear stepd_pid work on the migrated table.
    store.unstart(2);
    store.finish(3, { state: 'CANCELLED', exit_code: 130, finished_at: 20, error: null });
    store.commit();
    t.match(store.get(2), { state: 'PENDING', started_at: null });
    t.match(store.get(3), { state: 'CANCELLED' });
    const fresh = store.insert({ uid: 1, gid: 1, name: 'u' }, JSON.parse(spec), 30);
    t.equal(fresh.id, 4, 'ids go on from where the old database was');
  } finally {
    store.close();
  }
  const db = new Database(file, { readonly: true });
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  t.notOk(columns(db).includes('stepd_pid'));
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok');
  db.close();
});

t.test('a new database has the current schema without stepd_pid', async (t) => {
  const file = path.join(t.testdir(), 'xlurm.db');
  new Store(file).close();
  const db = new Database(file, { readonly: true });
  t.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
  t.ok(SCHEMA_VERSION >= 2);
  t.same(columns(db), ['id', 'owner_uid', 'owner_gid', 'owner_name', 'name', 'count', 'kind', 'device_ids', 'spec', 'state',
    'devices', 'submitted_at', 'started_at', 'finished_at', 'exit_code', 'error',
    'cpus', 'mem', 'peak_memory', 'cpu_seconds', 'attempt', 'queued_at', 'array_id', 'array_task', 'priority', 'top', 'device_weight', 'text_id']);
  db.close();
});

t.test('the device-weight step: earlier jobs keep counting their devices; the rollups read the weight from then on', async (t) => {
  const file = path.join(t.testdir(), 'xlurm.db');
  const old = new Database(file);
  const DEVICE_WEIGHT_STEP = 8; // the migrations before it
  for (const m of MIGRATIONS.slice(0, DEVICE_WEIGHT_STEP)) old.exec(m);
  old.pragma(`user_version = ${DEVICE_WEIGHT_STEP}`);
  const spec = JSON.stringify({ command: ['true'], cwd: '/', env: {}, name: 'old', count: 2 });
  const insert = old.prepare(`INSERT INTO jobs (owner_uid, owner_gid, owner_name, name, count, spec, state, devices, submitted_at, started_at)
                              VALUES (1000, 1000, 'u', 'old', 2, ?, 'RUNNING', '[]', 10, 100)`);
  insert.run(spec);
  insert.run(spec);
  old.close();
  const store = new Store(file);
  try {
    store.finish(1, { state: 'COMPLETED', exit_code: 0, finished_at: 200, error: null });
    store.db.prepare('UPDATE jobs SET device_weight = 0.5 WHERE id = 2').run(); // as a slice's start records it
    store.finish(2, { state: 'COMPLETED', exit_code: 0, finished_at: 200, error: null });
    store.commit();
    const daily = store.db.prepare('SELECT device_seconds AS s FROM usage_daily').get() as { s: number };
    t.equal(daily.s, 100 * 2 + 100 * 0.5, 'the daily summary: a row from before counts its devices');
    const metric = store.db.prepare(`SELECT value FROM metric_totals WHERE name = 'user_device_seconds' AND label = 'u'`).get() as { value: number };
    t.equal(metric.value, 250);
    t.equal(store.db.pragma('integrity_check', { simple: true }), 'ok');
  } finally {
    store.close();
  }
});

t.test('the shared-text step (§28.2): an array stored with a copy per task keeps loading, its text once', async (t) => {
  const file = path.join(t.testdir(), 'xlurm.db');
  const old = new Database(file);
  const TEXT_STEP = 9; // the migrations before it
  for (const m of MIGRATIONS.slice(0, TEXT_STEP)) old.exec(m);
  old.pragma(`user_version = ${TEXT_STEP}`);
  const env = { BIG: 'x'.repeat(100_000), PATH: '/usr/bin' };
  const task = (i: number) => JSON.stringify({ command: ['run', String(i)], cwd: '/', env, name: `a[${i}]`, count: 0, kind: null, time_limit: null, script: 'echo hi' });
  const insert = old.prepare(`INSERT INTO jobs (owner_uid, owner_gid, owner_name, name, count, spec, state, devices, submitted_at, array_id, array_task)
                              VALUES (1000, 1000, 'u', ?, 0, ?, ?, '[]', 10, ?, ?)`);
  const member = (i: number) => JSON.stringify({ index: i, count: 3, min: 0, max: 2, throttle: null, params: null });
  insert.run('plain', JSON.stringify({ command: ['true'], cwd: '/', env, name: 'plain', count: 0 }), 'PENDING', null, null);
  for (let i = 0; i < 3; i++) insert.run(`a[${i}]`, task(i), i === 0 ? 'COMPLETED' : 'PENDING', 2, member(i));
  old.close();
  const store = new Store(file);
  try {
    const texts = store.db.prepare('SELECT id, length(text) AS n FROM job_texts').all() as { id: number; n: number }[];
    t.equal(texts.length, 1, 'one text for the array');
    t.equal(texts[0]!.id, 2);
    const lengths = store.db.prepare('SELECT id, length(spec) AS n FROM jobs ORDER BY id').all() as { id: number; n: number }[];
    t.ok(lengths[0]!.n > 100_000, 'a plain job keeps its own copy');
    for (const r of lengths.slice(1)) t.ok(r.n < 1000, `task ${r.id} keeps no copy (${r.n} bytes)`);
    const active = store.active();
    t.same(active.map((j) => j.id), [1, 3, 4]);
    const [a1, a2] = [active[1]!, active[2]!];
    t.same(a1.spec.env, env);
    t.equal(a1.spec.env, a2.spec.env, 'the tasks share one environment object');
    t.equal(a1.spec.script, 'echo hi');
    t.same(a1.spec.command, ['run', '1'], "each task's own command");
    t.same(a2.spec.command, ['run', '2']);
    t.equal(store.get(2)!.spec.env.BIG, env.BIG, 'a finished task reads its text');
    // The last task of the array to go takes the text with it.
    store.removeJobs([2, 3]);
    t.equal((store.db.prepare('SELECT count(*) AS n FROM job_texts').get() as { n: number }).n, 1);
    store.removeJobs([4]);
    t.equal((store.db.prepare('SELECT count(*) AS n FROM job_texts').get() as { n: number }).n, 0);
    t.equal(store.db.pragma('integrity_check', { simple: true }), 'ok');
  } finally {
    store.close();
  }
});
