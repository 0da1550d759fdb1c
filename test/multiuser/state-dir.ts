// docs/behaviour.md §7.2 as root: the state directory of a root daemon must be reached
// through components only root can change. Every case runs initStateDir, the
// check the daemon, `xlurm start` and `xlurm clean` all make first, in this
// (root) process; two of them also end to end through `xlurm clean`.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { initStateDir } from '@xlurm/protocol';
import { Daemon } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, runtime, sharedDir } from '../helpers/multiuser';

const ACCEPTED = 'Removed 0 job log(s); daemon.log was already absent.\n';
const untrusted = (p: string) => `root daemon state must be under trusted root-owned directories: ${p}`;

/** The message initStateDir refuses `home` with, or undefined when it accepts it. */
function refusal(home: string): string | undefined {
  try { initStateDir(home); return undefined; } catch (e) { return (e as Error).message; }
}

t.test('trusted ancestors and ownership of the state directory', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const rt = await runtime();
  const base = sharedDir(t, 0o755, 'xlmu-sd');
  const links: string[] = [];
  t.teardown(() => { for (const l of links) fs.rmSync(l, { force: true }); });
  const clean = (home: string) => new Daemon(t, home, { runtime: rt }).run('xlurm', ['clean'], { cwd: '/' });
  const dir = (name: string, mode: number, uid = 0) => {
    const p = path.join(base, name);
    fs.mkdirSync(p);
    fs.chmodSync(p, mode);
    fs.chownSync(p, uid, uid === 0 ? 0 : nobody.gid);
    return p;
  };
  /** A symbolic link in the sticky, world-writable /tmp, made by `uid`. */
  const link = (target: string, uid: number) => {
    const l = path.join(path.dirname(base), `xlmu-link-${process.pid}-${links.length}`);
    fs.symlinkSync(target, l);
    fs.lchownSync(l, uid, uid === 0 ? 0 : nobody.gid);
    links.push(l);
    return l;
  };
  const cases: Array<{ home: string; stderr?: string; what: string }> = [];
  const expect = (home: string, stderr: string | undefined, what: string) => { cases.push({ home, stderr, what }); };
  const jobsBefore = () => new Set(cases.filter((c) => fs.existsSync(path.join(c.home, 'jobs'))).map((c) => c.home));

  const trusted = dir('trusted', 0o755);
  expect(path.join(trusted, 'home'), undefined, 'root-owned 0755 parent');
  const sticky = dir('sticky', 0o1777);
  expect(path.join(sticky, 'home'), undefined, 'root-owned sticky world-writable parent (like /tmp)');
  const open = dir('open', 0o777);
  expect(path.join(open, 'home'), untrusted(open), 'world-writable parent without the sticky bit');
  const groupw = dir('groupw', 0o775);
  expect(path.join(groupw, 'home'), untrusted(groupw), 'group-writable parent');
  const users = dir('users', 0o755, nobody.uid);
  expect(path.join(users, 'home'), untrusted(users), 'parent owned by nobody');
  expect(path.join(users, 'deeper', 'home'), untrusted(users), 'grandparent owned by nobody');

  // Symbolic links: who owns the link decides who can re-point it later.
  expect(path.join(link(trusted, 0), 'via-root-link'), undefined, 'root-owned link to a trusted directory');
  const byNobody = link(trusted, nobody.uid);
  expect(path.join(byNobody, 'via-nobody-link'), untrusted(byNobody), 'nobody-owned link to a trusted directory');
  expect(path.join(link(users, 0), 'home2'), untrusted(users), 'root-owned link into a directory nobody owns');

  // The directory itself, and jobs/ in it.
  expect(dir('nobodys-home', 0o755, nobody.uid), 'XLURM_HOME must be a directory owned by the daemon account', 'home owned by nobody');
  expect(dir('writable-home', 0o775), 'XLURM_HOME must not be writable by other users', 'group-writable home');
  const badJobs = dir('bad-jobs', 0o755);
  fs.mkdirSync(path.join(badJobs, 'jobs'));
  fs.chownSync(path.join(badJobs, 'jobs'), nobody.uid, nobody.gid);
  expect(badJobs, 'invalid jobs directory owner', 'jobs/ owned by nobody');

  const existed = jobsBefore();
  for (const { home, stderr, what } of cases) {
    t.equal(refusal(home), stderr, `${what}: ${stderr === undefined ? 'accepted' : 'refused'}`);
    if (stderr === undefined) t.equal(fs.lstatSync(path.join(home, 'jobs')).uid, 0, `${what}: jobs/ created`);
    else if (!existed.has(home)) t.notOk(fs.existsSync(path.join(home, 'jobs')), `${what}: nothing created`);
  }
  t.notOk(fs.existsSync(path.join(trusted, 'via-nobody-link')), 'nothing created through nobody\'s link');

  // End to end: the commands make the same check.
  const viaNobody = await clean(path.join(link(trusted, nobody.uid), 'e2e'));
  t.equal(viaNobody.stderr, `xlurm: ${untrusted(links[links.length - 1]!)}\n`, 'xlurm clean refuses nobody\'s link');
  t.equal(viaNobody.code, 1);
  const viaRoot = await clean(path.join(link(trusted, 0), 'e2e-root'));
  t.equal(viaRoot.stdout, ACCEPTED, 'xlurm clean accepts a root-owned link');
  t.equal(viaRoot.code, 0, viaRoot.stderr);
});
