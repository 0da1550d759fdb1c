// initStateDir: the state directory's checks and modes (docs/behaviour.md, State directory). The
// checks of a root daemon's ancestors need root (files owned by someone else); skipped otherwise.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { initStateDir } from '../../../packages/protocol/src/state-dir';
import { peerSkip, type Tap } from '../../helpers/tap';

const IS_ROOT = process.geteuid?.() === 0;
const NOBODY = 65534;
const mode = (p: string) => fs.statSync(p).mode & 0o7777;

function scratch(t: Tap): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-statedir-'));
  fs.chmodSync(dir, 0o755);
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const storage = (message: string | RegExp) => ({ name: 'XlurmError', code: 'STORAGE', message });

t.test('creates the home (0755) and jobs/ (0700), and puts their modes right again', async (t) => {
  const home = path.join(scratch(t), 'a', 'home');
  initStateDir(home);
  t.equal(mode(home), 0o755);
  t.equal(mode(path.join(home, 'jobs')), 0o700);
  fs.chmodSync(home, 0o700);
  fs.chmodSync(path.join(home, 'jobs'), 0o750);
  initStateDir(home);
  t.equal(mode(home), 0o755, 'again 0755');
  t.equal(mode(path.join(home, 'jobs')), 0o700, 'again 0700');
});

t.test('refuses a home that is not a directory, or is writable by others', async (t) => {
  const dir = scratch(t);
  const file = path.join(dir, 'file');
  fs.writeFileSync(file, '');
  t.throws(() => initStateDir(file), storage('cannot create state directory; start the shared daemon with sudo'), 'a file where the home should be');
  const link = path.join(dir, 'link');
  fs.mkdirSync(path.join(dir, 'real'));
  fs.symlinkSync(path.join(dir, 'real'), link);
  t.throws(() => initStateDir(link), storage('XLURM_HOME must be a directory owned by the daemon account'), 'a symbolic link is not the directory');
  const open = path.join(dir, 'open');
  fs.mkdirSync(open);
  fs.chmodSync(open, 0o777);
  t.throws(() => initStateDir(open), storage('XLURM_HOME must not be writable by other users'));
  const jobsFile = path.join(dir, 'jobsfile');
  fs.mkdirSync(jobsFile);
  fs.writeFileSync(path.join(jobsFile, 'jobs'), '');
  t.throws(() => initStateDir(jobsFile), storage('invalid jobs directory owner'), 'jobs/ that is not a directory');
});

t.test('as root: untrusted ancestors and foreign-owned parts are refused', { skip: !IS_ROOT && peerSkip('needs root (files of another owner)') }, async (t) => {
  const dir = scratch(t);
  const foreign = path.join(dir, 'foreign');
  fs.mkdirSync(foreign, { mode: 0o755 });
  fs.chownSync(foreign, NOBODY, NOBODY);
  t.throws(() => initStateDir(path.join(foreign, 'home')), storage(`root daemon state must be under trusted root-owned directories: ${foreign}`),
    'a parent owned by another account');

  const writable = path.join(dir, 'writable');
  fs.mkdirSync(writable);
  fs.chmodSync(writable, 0o777);
  t.throws(() => initStateDir(path.join(writable, 'home')), storage(`root daemon state must be under trusted root-owned directories: ${writable}`),
    'a world-writable parent without the sticky bit');
  const sticky = path.join(dir, 'sticky');
  fs.mkdirSync(sticky);
  fs.chmodSync(sticky, 0o1777);
  initStateDir(path.join(sticky, 'home'));
  t.pass('a sticky world-writable parent (like /tmp) is fine');

  const target = path.join(dir, 'target');
  fs.mkdirSync(target, { mode: 0o755 });
  const link = path.join(dir, 'via');
  fs.symlinkSync(target, link);
  fs.lchownSync(link, NOBODY, NOBODY);
  t.throws(() => initStateDir(path.join(link, 'home')), storage(`root daemon state must be under trusted root-owned directories: ${link}`),
    'a symbolic link another account owns (it could re-point it)');
  const rootLink = path.join(dir, 'rootvia');
  fs.symlinkSync(foreign, rootLink);
  t.throws(() => initStateDir(path.join(rootLink, 'home')), storage(`root daemon state must be under trusted root-owned directories: ${foreign}`),
    'a root-owned link leading through an untrusted directory');

  const home = path.join(dir, 'owned');
  fs.mkdirSync(home, { mode: 0o755 });
  fs.chownSync(home, NOBODY, NOBODY);
  t.throws(() => initStateDir(home), storage('XLURM_HOME must be a directory owned by the daemon account'), 'a home of another account');
  const jobsHome = path.join(dir, 'jobsowned');
  fs.mkdirSync(path.join(jobsHome, 'jobs'), { recursive: true, mode: 0o755 });
  fs.chownSync(path.join(jobsHome, 'jobs'), NOBODY, NOBODY);
  t.throws(() => initStateDir(jobsHome), storage('invalid jobs directory owner'), 'jobs/ of another account');
});
