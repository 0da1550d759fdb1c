// docs/behaviour.md §7.1 / §7.2 as root: the modes and owners of everything under $XLURM_HOME
// of a daemon started by `xlurm start`, after jobs of another account ran,
// were cancelled and logged; and that account cannot read any of it directly.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Daemon, runProcess } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, as, cancelActive, rootHome, runtime, untilExists, workDir } from '../helpers/multiuser';
import { pidAlive, waitFor } from '../helpers/wait';

/** `xlurm start` as root; stopped (and waited for) at teardown. */
async function started(t: any): Promise<Daemon> {
  const d = new Daemon(t, rootHome(t), { runtime: await runtime() });
  t.teardown(async () => {
    const st = await d.request('status', {}).catch(() => null) as any;
    await cancelActive(d);
    await d.run('xlurm', ['stop']);
    if (st?.ok) await waitFor(() => !pidAlive(st.result.pid), { what: 'daemon exit' });
  });
  const r = await d.run('xlurm', ['start', '--backend', 'none']);
  t.equal(r.code, 0, r.stderr);
  return d;
}

const mode = (p: string) => fs.lstatSync(p).mode & 0o7777;

t.test('state directory, socket and per-job files: modes and owners', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const d = await started(t);
  const cwd = workDir(t);

  // A job that completes, one cancelled while running: every per-job file exists.
  const done = await d.batch('echo secret-output', ['-g', '0'], as(nobody, { cwd }));
  await d.waitState(done, 'COMPLETED');
  const gate = path.join(cwd, 'gate');
  const cancelled = await d.batch(untilExists(gate), ['-g', '0'], as(nobody, { cwd }));
  await d.waitState(cancelled, 'RUNNING');
  const c = await d.run('xcancel', [String(cancelled)], as(nobody, { cwd }));
  t.equal(c.code, 0, c.stderr);
  await d.waitState(cancelled, 'CANCELLED');

  const st = fs.statSync(d.home);
  t.equal(st.uid, 0, 'home owned by root');
  t.equal(mode(d.home), 0o755, 'home 0755: anyone may reach the socket');
  const sock = fs.lstatSync(d.socket);
  t.ok(sock.isSocket());
  t.equal(sock.uid, 0);
  t.equal(mode(d.socket), 0o666, 'root daemon socket 0666: peer credentials decide');
  t.equal(mode(d.jobsDir), 0o700, 'jobs/ 0700');
  t.equal(fs.statSync(d.jobsDir).uid, 0);

  const expected = ['daemon.lock', 'daemon.log', 'jobs', 'xlurm.db', 'xlurm.sock'];
  const names = fs.readdirSync(d.home).sort();
  for (const n of expected) t.ok(names.includes(n), `${n} exists`);
  for (const n of names) {
    if (n === 'jobs' || n === 'xlurm.sock') continue;
    const p = path.join(d.home, n);
    t.equal(fs.lstatSync(p).uid, 0, `${n} owned by root`);
    t.equal(mode(p), 0o600, `${n} is 0600`);
  }

  for (const id of [done, cancelled]) {
    for (const ext of ['log', 'lock', 'result']) t.ok(fs.existsSync(path.join(d.jobsDir, `${id}.${ext}`)), `${id}.${ext} exists`);
  }
  t.ok(fs.existsSync(path.join(d.jobsDir, `${cancelled}.cancel`)), 'cancel marker exists');
  for (const n of fs.readdirSync(d.jobsDir)) {
    const s = fs.lstatSync(path.join(d.jobsDir, n));
    t.ok(s.isFile(), `${n} is a plain file`);
    t.equal(s.uid, 0, `jobs/${n} owned by root, not by the job's owner`);
    t.equal(s.gid, 0, `jobs/${n} group root`);
    t.equal(s.mode & 0o7777, 0o600, `jobs/${n} is 0600`);
  }

  // The job's owner reaches its log only through the daemon.
  const log = await d.run('xqueue', [String(done), '--log'], as(nobody, { cwd }));
  t.equal(log.stdout, 'secret-output\n');
  for (const p of [path.join(d.jobsDir, `${done}.log`), path.join(d.home, 'xlurm.db'), path.join(d.home, 'daemon.log')]) {
    const r = await runProcess('cat', [p], as(nobody, { cwd: '/' }));
    t.not(r.code, 0, `nobody cannot read ${path.basename(p)}`);
    t.match(r.stderr, /Permission denied/);
  }
  const ls = await runProcess('ls', [d.jobsDir], as(nobody, { cwd: '/' }));
  t.not(ls.code, 0, 'nobody cannot list jobs/');
});
