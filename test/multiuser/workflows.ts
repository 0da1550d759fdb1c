// docs/behaviour.md §23.1, §23.3, §23.5 as root with the nobody and daemon accounts: hold,
// release and update are the owner's or root's; only root raises a running job's limit; a
// dependency may name another user's job; a retried job of nobody's runs again as nobody.
import t from 'tap';
import { MULTIUSER_SKIP, accounts, as, rootDaemon, workDir } from '../helpers/multiuser';

t.test('hold, release and update: the owner or root, nobody else', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  const d = await rootDaemon(t);
  const cwd = workDir(t);
  const id = await d.batch('true', ['-g', '0', '--hold'], as(nobody, { cwd }));
  const foreign = await d.run('xlurm', ['release', String(id)], as(daemon, { cwd }));
  t.same([foreign.code, foreign.stderr], [1, `xlurm: permission denied: job belongs to nobody (UID ${nobody.uid})\n`]);
  const upd = await d.run('xlurm', ['update', String(id), '-n', 'x'], as(daemon, { cwd }));
  t.equal(upd.code, 1, 'nor update it');
  t.equal((await d.job(id)).spec.name, 'bash', 'unchanged');
  t.equal((await d.run('xlurm', ['hold', String(id)])).code, 0, 'root may');
  const own = await d.run('xlurm', ['release', String(id)], as(nobody, { cwd }));
  t.same([own.code, own.stdout], [0, `Job ${id} released\n`]);
  await d.waitState(id, 'COMPLETED');
});

t.test("a running job's limit: its owner lowers it, only root raises it", { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const d = await rootDaemon(t);
  const cwd = workDir(t);
  const id = await d.batch('sleep 60', ['-g', '0', '-t', '1h'], as(nobody, { cwd }));
  await d.waitState(id, 'RUNNING');
  const raise = await d.run('xlurm', ['update', String(id), '-t', '2h'], as(nobody, { cwd }));
  t.same([raise.code, raise.stderr], [1, `xlurm: permission denied: only root may raise the time limit of a running job (job ${id} has 1h)\n`]);
  t.equal((await d.run('xlurm', ['update', String(id), '-t', '30m'], as(nobody, { cwd }))).code, 0, 'lowered by its owner');
  t.equal((await d.run('xlurm', ['update', String(id), '-t', '2h'])).code, 0, 'raised by root');
  t.equal((await d.job(id)).spec.time_limit, 7200);
  t.equal((await d.run('xlurm', ['update', String(id), '-t', '1'])).code, 0);
  await d.waitState(id, 'TIMED_OUT', 15000);
});

t.test("a dependency on another user's job; a retried job runs again as its owner", { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const d = await rootDaemon(t);
  const cwd = workDir(t);
  const parent = await d.batch('true', ['-g', '0']);
  const child = await d.batch('id -u; exit 3', ['-g', '0', '-d', `afterok:${parent}`, '--retry', '1'], as(nobody, { cwd }));
  const j = await d.waitState(child, 'FAILED', 20000);
  t.equal(j.attempt, 2);
  const log = await d.run('xqueue', [String(child), '--log'], as(nobody, { cwd }));
  t.equal(log.stdout, `${nobody.uid}\n[xlurm] retry 1 of 1 after exit 3\n${nobody.uid}\n`);
});
