// `xlurm clean` offline (clean.ts; docs/behaviour.md §2.2.5): job logs and daemon.log go,
// nothing else; refused while a daemon holds daemon.lock or the database has running jobs.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { statePaths } from '@xlurm/protocol';
import { flockExclusive } from '@xlurm/native';
import { clean } from '../../../packages/daemon/src/clean';
import { Store } from '../../../packages/daemon/src/store/store';
import { alice, spec } from '../../helpers/core';

/** A fresh state directory (mode 0700, as initStateDir requires of an existing one). */
function home(t: { teardown(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-clean-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const run = (h: string) => { const out: string[] = []; clean(h, (l) => out.push(l)); return out; };

t.test('a fresh home: the state directory is made, nothing to remove', async (t) => {
  const h = home(t);
  t.same(run(h), ['Removed 0 job log(s); daemon.log was already absent.']);
  t.ok(fs.statSync(statePaths(h).jobs).isDirectory());
});

t.test('only job logs and daemon.log go', async (t) => {
  const h = home(t);
  const p = statePaths(h);
  fs.mkdirSync(p.jobs, { mode: 0o700 });
  const keep = ['1.result', '1.lock', '2.cancel', '2.json', 'notes.txt', 'x.log'];
  for (const f of ['1.log', '2.log', ...keep]) fs.writeFileSync(path.join(p.jobs, f), 'x');
  fs.writeFileSync(p.daemonLog, 'log\n');
  const db = new Store(p.db);
  const j = db.insert(alice, spec(), 1);
  db.markRunning(j.id, [], 1);
  db.finish(j.id, { state: 'COMPLETED', exit_code: 0, finished_at: 2, error: null });
  db.close();
  t.same(run(h), ['Removed 2 job log(s) and daemon.log.']);
  t.same(fs.readdirSync(p.jobs).sort(), keep.sort(), "results, locks, markers and what is not a job's log stay");
  t.notOk(fs.existsSync(p.daemonLog));
  t.ok(fs.existsSync(p.db), 'history stays');
  t.same(run(h), ['Removed 0 job log(s); daemon.log was already absent.']);
});

t.test('refused while a daemon holds daemon.lock; the lock is free again after clean', async (t) => {
  const h = home(t);
  fs.writeFileSync(path.join(h, 'daemon.log'), 'x');
  const fd = fs.openSync(statePaths(h).daemonLock, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
  t.ok(flockExclusive(fd));
  t.throws(() => run(h), { code: 'STORAGE', message: 'xlurm is running; stop the scheduler before cleaning logs' });
  t.ok(fs.existsSync(path.join(h, 'daemon.log')), 'nothing removed');
  fs.closeSync(fd);
  run(h);
  const again = fs.openSync(statePaths(h).daemonLock, fs.constants.O_RDWR);
  t.teardown(() => fs.closeSync(again));
  t.ok(flockExclusive(again), 'clean let go of the lock');
});

t.test('refused while the database has running jobs, naming them', async (t) => {
  const h = home(t);
  const p = statePaths(h);
  fs.mkdirSync(p.jobs, { mode: 0o700 });
  fs.writeFileSync(path.join(p.jobs, '1.log'), 'x');
  const db = new Store(p.db);
  const ids = [db.insert(alice, spec(), 1).id, db.insert(alice, spec(), 1).id, db.insert(alice, spec(), 1).id];
  db.markRunning(ids[2]!, [], 1);
  db.markRunning(ids[0]!, [], 1);
  db.commit();
  db.close();
  t.throws(() => run(h), { code: 'JOBS_RUNNING', message: `cannot clean logs while jobs are running: ${ids[0]}, ${ids[2]}` });
  t.ok(fs.existsSync(path.join(p.jobs, '1.log')), 'nothing removed');
});

t.test('an unreadable database, or a log that cannot be removed: storage errors', async (t) => {
  const h = home(t);
  const p = statePaths(h);
  fs.mkdirSync(p.jobs, { mode: 0o700 });
  fs.writeFileSync(p.db, 'not a database, but long enough to have a header that sqlite reads and rejects');
  t.throws(() => run(h), { code: 'STORAGE', message: new RegExp(`^cannot read job database ${p.db}: `) });
  fs.rmSync(p.db);
  const stuck = path.join(p.jobs, '3.log');
  fs.mkdirSync(stuck);
  fs.writeFileSync(path.join(stuck, 'x'), '');
  t.throws(() => run(h), { code: 'STORAGE', message: `cannot remove ${stuck}` });
});
