// docs/behaviour.md §8, "non-root daemon": a daemon running as nobody owns its state, its
// socket is 0600, it runs only nobody's jobs (still with no_new_privs), and
// refuses jobs from any other uid, root included.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startDaemon } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, as, rawRequestAs, runtime, sharedDir, workDir } from '../helpers/multiuser';

t.test('a daemon run as nobody', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  // Its own XLURM_HOME, under a nobody-owned directory in the root-owned, sticky /tmp.
  const parent = sharedDir(t, 0o755, 'xlmu-nobody');
  fs.chownSync(parent, nobody.uid, nobody.gid);
  const d = await startDaemon(t, { home: path.join(parent, 'home'), uid: nobody.uid, gid: nobody.gid, runtime: await runtime() });
  const st = await d.request('status', {}) as any;
  t.equal(st.result.uid, 65534, 'the daemon runs as nobody');

  for (const [p, m] of [[d.home, 0o755], [d.jobsDir, 0o700], [d.socket, 0o600]] as const) {
    const s = fs.lstatSync(p);
    t.equal(s.uid, 65534, `${path.basename(p)} owned by nobody`);
    t.equal(s.mode & 0o7777, m, `${path.basename(p)} mode ${m.toString(8)}`);
  }

  const cwd = workDir(t);
  const wrap = 'echo "uid=$(id -u) groups=$(id -G)"; grep NoNewPrivs /proc/self/status';
  const root = await d.run('xbatch', ['-g', '0', '--wrap', wrap], { cwd });
  t.equal(root.code, 1, 'root is refused');
  t.equal(root.stderr, 'xlurm: only a root daemon can run jobs for other users\n');
  const spec = { command: ['true'], cwd, env: {}, name: 'x', count: 0 };
  const raw = await d.request('submit', spec) as any;
  t.same(raw.error, { code: 'FOREIGN_USER', message: 'only a root daemon can run jobs for other users' });
  const other = await d.run('xbatch', ['-g', '0', '--wrap', wrap], as(daemon, { cwd }));
  t.equal(other.code, 1, 'daemon (uid 1) cannot even connect to the 0600 socket');
  t.match(other.stderr, /^xlurm: xlurm is not running; ask the administrator to run `sudo xlurm start`: .*Permission denied/);
  await t.rejects(rawRequestAs(daemon, d.socket, JSON.stringify({ v: 1, op: 'submit', args: spec }) + '\n'), /EACCES|permission denied/i);
  t.same(await d.jobs(), [], 'nothing was queued');

  const id = await d.batch(wrap, ['-g', '0'], as(nobody, { cwd }));
  const job = await d.waitState(id, ['COMPLETED', 'FAILED']);
  t.equal(job.state, 'COMPLETED');
  const log = await d.run('xqueue', [String(id), '--log'], as(nobody, { cwd }));
  t.equal(log.stdout, `uid=65534 groups=${nobody.gid}\nNoNewPrivs:\t1\n`, 'its own jobs run, with no_new_privs');
  const asRoot = await d.run('xqueue', [String(id)], { cwd });
  t.equal(asRoot.code, 0, 'root may still read job details');
  t.notOk(fs.readdirSync(d.jobsDir).some((n) => fs.statSync(path.join(d.jobsDir, n)).uid !== 65534), 'every per-job file is nobody\'s');
});
