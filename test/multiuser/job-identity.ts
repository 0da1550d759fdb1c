// docs/behaviour.md §6.3 and §8 as root: a job runs as its owner (uid, gid, the owner's own
// supplementary groups, saved ids), with no_new_privs, so a setuid program
// cannot raise its privileges; the owner's account is re-checked at start.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { runProcess, type Daemon } from '../helpers/daemon';
import {
  MULTIUSER_SKIP, accounts, as, rootDaemon, runWithGroups, sharedDir, untilExists, workDir, type Account,
} from '../helpers/multiuser';

/** Run `script` as a batch job of `a` and return the finished job and its log. */
async function jobOf(d: Daemon, a: Account, script: string, cwd: string): Promise<{ job: any; log: string }> {
  const id = await d.batch(script, ['-g', '0'], as(a, { cwd }));
  const job = await d.waitState(id, ['COMPLETED', 'FAILED']);
  const log = await d.run('xqueue', [String(id), '--log'], as(a, { cwd }));
  return { job, log: log.stdout };
}

const numbers = (s: string) => s.trim().split(/\s+/).map(Number).sort((a, b) => a - b);
const systemGroups = (name: string) => numbers(execFileSync('id', ['-G', name], { encoding: 'utf8' }));

const IDENTITY = 'echo "uid=$(id -u) gid=$(id -g)"; echo "groups=$(id -G)"; ' +
  'grep -E "^(Uid|Gid|Groups|NoNewPrivs):" /proc/self/status; touch made-by-job; stat -c "file=%u:%g:%a" made-by-job';

function field(log: string, name: string): string {
  const m = new RegExp(`^${name}=(.*)$`, 'm').exec(log);
  if (!m) throw new Error(`no ${name}= line in job log:\n${log}`);
  return m[1]!;
}

t.test('identity of a job', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  const d = await rootDaemon(t);

  t.test('nobody: uid, gid, groups, saved ids, no_new_privs, files it creates', async (t) => {
    const cwd = workDir(t);
    const { job, log } = await jobOf(d, nobody, IDENTITY, cwd);
    t.equal(job.state, 'COMPLETED', log);
    t.same(job.owner, { uid: 65534, gid: nobody.gid, name: 'nobody' });
    t.equal(field(log, 'uid'), `65534 gid=${nobody.gid}`);
    t.same(numbers(field(log, 'groups')), systemGroups('nobody'), 'exactly nobody\'s groups (id -G nobody)');
    t.match(log, /^Uid:\t65534\t65534\t65534\t65534$/m, 'real, effective, saved and filesystem uid');
    t.match(log, new RegExp(`^Gid:\\t${nobody.gid}\\t${nobody.gid}\\t${nobody.gid}\\t${nobody.gid}$`, 'm'));
    t.match(log, /^NoNewPrivs:\t1$/m);
    t.equal(field(log, 'file'), `65534:${nobody.gid}:600`, 'files belong to nobody, umask 077');
    const st = fs.statSync(path.join(cwd, 'made-by-job'));
    t.equal(st.uid, 65534);
  });

  t.test('the working directory is entered as the owner, not as root', async (t) => {
    const closed = sharedDir(t, 0o700, 'xlmu-closed'); // root's, 0700: exists, but nobody cannot enter it
    const id = await d.batch('touch inside', ['-g', '0'], as(nobody, { cwd: closed }));
    const job = await d.waitState(id, ['COMPLETED', 'FAILED']);
    t.match(job.result, { state: 'FAILED', exit_code: 1, error: 'cannot execute bash: Permission denied' });
    t.notOk(fs.existsSync(path.join(closed, 'inside')));
  });

  t.test('nobody follows its own job with xrun', async (t) => {
    const cwd = workDir(t);
    const ok = await d.run('xrun', ['-g', '0', '--', 'id', '-u'], as(nobody, { cwd }));
    t.equal(ok.stdout, '65534\n');
    t.equal(ok.code, 0, ok.stderr);
    const failed = await d.run('xrun', ['-g', '0', '--', 'sh', '-c', 'exit 3'], as(nobody, { cwd }));
    t.equal(failed.code, 3, 'the job\'s exit code');
  });

  t.test('daemon: exactly the groups getgrouplist gives (id -G daemon)', async (t) => {
    const cwd = workDir(t);
    const { job, log } = await jobOf(d, daemon, IDENTITY, cwd);
    t.equal(job.state, 'COMPLETED', log);
    t.equal(field(log, 'uid'), `1 gid=${daemon.gid}`);
    t.same(numbers(field(log, 'groups')), systemGroups('daemon'));
    t.notOk(numbers(field(log, 'groups')).includes(0), 'none of the root daemon\'s groups');
    t.match(log, /^Uid:\t1\t1\t1\t1$/m);
    t.match(log, /^NoNewPrivs:\t1$/m);
  });

  t.test('the peer\'s effective gid is the primary group; the client\'s own groups do not travel', async (t) => {
    const cwd = workDir(t);
    // nobody, running with effective gid 1 (daemon) and supplementary groups root and 4.
    const r = await runWithGroups(d, nobody, daemon.gid, [0, 4], 'xbatch', ['-g', '0', '--wrap', IDENTITY], { cwd });
    t.equal(r.code, 0, r.stderr);
    const id = Number(r.stdout.trim());
    const job = await d.waitState(id, ['COMPLETED', 'FAILED']);
    const log = (await d.run('xqueue', [String(id), '--log'])).stdout;
    t.equal(job.state, 'COMPLETED', log);
    t.same(job.owner, { uid: 65534, gid: daemon.gid, name: 'nobody' });
    t.equal(field(log, 'uid'), `65534 gid=${daemon.gid}`);
    // getgrouplist("nobody", 1): the recorded gid plus nobody's own memberships.
    const own = systemGroups('nobody').filter((g) => g !== nobody.gid);
    t.same(numbers(field(log, 'groups')), [...new Set([daemon.gid, ...own])].sort((a, b) => a - b));
    t.notOk(numbers(field(log, 'groups')).includes(0), 'the client\'s group 0 is not given to the job');
  });

  t.test('a setuid-root program inside the job cannot raise privileges', async (t) => {
    const dir = sharedDir(t, 0o755, 'xlmu-suid');
    const cat = path.join(dir, 'cat');
    fs.copyFileSync(execFileSync('sh', ['-c', 'command -v cat'], { encoding: 'utf8' }).trim(), cat);
    fs.chownSync(cat, 0, 0);
    fs.chmodSync(cat, 0o4755);
    const secret = path.join(dir, 'root-only');
    fs.writeFileSync(secret, 'root-secret\n', { mode: 0o600 });

    // Control: outside a job, the setuid bit works here (else this test could not fail).
    const control = await runProcess(cat, ['/proc/self/status', secret], as(nobody, { cwd: '/' }));
    const honoured = /^Uid:\t65534\t0\t0\t0$/m.test(control.stdout) && control.stdout.includes('root-secret');
    t.test('inside a job', { skip: honoured ? false : `setuid programs are not honoured under ${dir} (nosuid mount?): nothing to prove` }, async (t) => {
      const cwd = workDir(t);
      const { job, log } = await jobOf(d, nobody, `${cat} /proc/self/status; ${cat} ${secret}`, cwd);
      t.match(log, /^Uid:\t65534\t65534\t65534\t65534$/m, 'effective uid stays 65534');
      t.match(log, /^NoNewPrivs:\t1$/m);
      t.notMatch(log, /root-secret/, 'the root-only file stays unreadable');
      t.match(log, /Permission denied/);
      t.equal(job.state, 'FAILED');
    });
  });
});

/** A private mount namespace with a different /etc/group: possible here? */
function canUnshare(): boolean {
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', '--', 'mount', '--bind', '/etc/group', '/etc/group'], { stdio: 'ignore' });
  return r.status === 0;
}

t.test('supplementary groups of a member of several groups', {
  skip: MULTIUSER_SKIP || (canUnshare() ? false : 'cannot make a private mount namespace (unshare --mount needs CAP_SYS_ADMIN)'),
}, async (t) => {
  // `daemon` has no supplementary groups on most systems. Without creating
  // accounts or touching the host, give it two in the daemon's own view: the
  // daemon runs in a private mount namespace where /etc/group is a copy that
  // lists daemon as a member of two existing groups.
  const { daemon } = accounts();
  const lines = fs.readFileSync('/etc/group', 'utf8').split('\n');
  const picks: number[] = [];
  const edited = lines.map((line) => {
    const f = line.split(':');
    const gid = Number(f[2]);
    if (f.length !== 4 || picks.length >= 2 || !Number.isInteger(gid) || gid <= 1 || gid === 65534 || f[3]!.split(',').includes('daemon')) return line;
    picks.push(gid);
    f[3] = f[3] ? `${f[3]},daemon` : 'daemon';
    return f.join(':');
  });
  t.equal(picks.length, 2, 'two groups to join');
  const dir = sharedDir(t, 0o755, 'xlmu-grp');
  const groupFile = path.join(dir, 'group');
  fs.writeFileSync(groupFile, edited.join('\n'), { mode: 0o644 });

  const d = await rootDaemon(t, {
    wrap: ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', 'mount --bind "$0" /etc/group && exec "$@"', groupFile],
  });
  const inside = numbers(execFileSync('nsenter', ['--target', String(d.proc!.pid), '--mount', '--', 'id', '-G', 'daemon'], { encoding: 'utf8' }));
  t.same(inside, [daemon.gid, ...picks].sort((a, b) => a - b), 'the daemon sees daemon in three groups');
  t.same(systemGroups('daemon'), [daemon.gid], 'the host is unchanged');

  const { job, log } = await jobOf(d, daemon, IDENTITY, workDir(t));
  t.equal(job.state, 'COMPLETED', log);
  t.same(numbers(field(log, 'groups')), inside, 'the job has exactly id -G daemon as the daemon sees it');
  t.match(log, new RegExp(`^Groups:\\t${inside.join(' ')} ?$`, 'm'));
});

t.test('a job whose owner\'s account changed before it started fails without running', { skip: MULTIUSER_SKIP }, async (t) => {
  // Renaming a real account is out of bounds for tests, so the recorded name
  // is changed instead: to the supervisor the two are the same mismatch
  // (getpwuid(owner uid) no longer names the recorded owner).
  const { nobody } = accounts();
  const d = await rootDaemon(t, { maxRunning: 1 });
  const cwd = workDir(t);
  const gate = path.join(cwd, 'gate');
  const blocker = await d.batch(untilExists(gate), ['-g', '0'], as(nobody, { cwd }));
  await d.waitState(blocker, 'RUNNING');
  const victim = await d.batch('touch ran', ['-g', '0'], as(nobody, { cwd }));
  t.equal((await d.job(victim)).state, 'PENDING');

  await d.stop(); // the blocker keeps running under its supervisor
  const db = new Database(path.join(d.home, 'xlurm.db'));
  try {
    const n = db.prepare('UPDATE jobs SET owner_name = ? WHERE id = ? AND owner_name = ?').run('xlurm-renamed', victim, 'nobody').changes;
    t.equal(n, 1);
  } finally { db.close(); }
  await d.start();

  fs.writeFileSync(gate, '');
  await d.waitState(blocker, 'COMPLETED');
  const job = await d.waitState(victim, ['FAILED', 'COMPLETED']);
  t.match(job.result, { state: 'FAILED', exit_code: 1, error: 'job owner\'s account changed since submission' });
  t.notOk(fs.existsSync(path.join(cwd, 'ran')), 'the command never ran');
  const detail = await d.run('xqueue', [String(victim)], as(nobody, { cwd }));
  t.match(detail.stdout, /^Error: job owner's account changed since submission$/m);
});
