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
    'cpus', 'mem', 'peak_memory', 'cpu_seconds', 'attempt', 'queued_at', 'array_id', 'array_task', 'priority', 'top', 'device_weight']);
  db.close();
});

t.test('the device-weight step: earlier jobs keep counting their devices; the rollups read the weight from then on', async (t) => {
  const file = path.join(t.testdir(), 'xlurm.db');
  const old = new Database(file);
  for (const m of MIGRATIONS.slice(0, -1)) old.exec(m);
  old.pragma(`user_version = ${SCHEMA_VERSION - 1}`);
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
