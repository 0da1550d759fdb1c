// The addon's descriptor-relative file operations (native/src/addon/safe-fs.cc) through their
// facade (native/ts/index.ts): no link is ever followed, names stay one component (or beneath
// the directory for safeOpenat), removeTree stays inside its tree, on its filesystem, within
// its bounds. The concurrent-swap attacks are in test/security/file-races.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import * as native from '../../../native/ts/index';
import { skip, type Tap } from '../../helpers/tap';

const built = fs.existsSync(path.resolve(__dirname, '../../../native/build/Release/xlurm_native.node'));
const IS_ROOT = process.getuid?.() === 0;
const c = fs.constants;

function opened(t: Tap, dir: string): number {
  const fd = fs.openSync(dir, c.O_RDONLY | c.O_DIRECTORY);
  t.teardown(() => fs.closeSync(fd));
  return fd;
}

function fd2(t: Tap, dirfd: number): number {
  const fd = native.safeOpenat(dirfd, 'real/f', c.O_RDONLY);
  t.teardown(() => fs.closeSync(fd));
  return fd;
}

/** A tree with files, subdirectories, a FIFO and links to a victim outside it. */
function victimAndTree(t: Tap): { dir: string; victim: string } {
  const dir = t.testdir({ victim: { keep: 'precious', sub: { also: 'precious' } }, tree: { a: { b: { f: 'x' }, g: 'y' }, h: 'z' } });
  const victim = path.join(dir, 'victim');
  fs.symlinkSync(victim, path.join(dir, 'tree', 'a', 'to-victim'));
  fs.symlinkSync(path.join(victim, 'keep'), path.join(dir, 'tree', 'a', 'b', 'to-keep'));
  spawnSync('mkfifo', [path.join(dir, 'tree', 'fifo')]);
  return { dir, victim };
}

function victimIntact(t: Tap, victim: string): void {
  t.equal(fs.readFileSync(path.join(victim, 'keep'), 'utf8'), 'precious', 'the victim file is intact');
  t.equal(fs.readFileSync(path.join(victim, 'sub', 'also'), 'utf8'), 'precious', "the victim's subdirectory is intact");
}

if (!built) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  t.test('safeOpenat never follows a link, in the last component or any before it', async (t) => {
    const dir = t.testdir({ real: { f: 'inside' }, target: { f: 'outside' } });
    fs.symlinkSync(path.join(dir, 'target', 'f'), path.join(dir, 'real', 'link'));
    fs.symlinkSync(path.join(dir, 'target'), path.join(dir, 'dlink'));
    const fd = opened(t, dir);
    const f = native.safeOpenat(fd, 'real/f', c.O_RDONLY);
    t.equal(fs.readFileSync(f, 'utf8'), 'inside', 'a plain path beneath the directory opens');
    fs.closeSync(f);
    t.throws(() => native.safeOpenat(fd, 'real/link', c.O_RDONLY), { code: 'ELOOP' }, 'a link as the last component');
    t.throws(() => native.safeOpenat(fd, 'dlink/f', c.O_RDONLY), { code: 'ELOOP' }, 'a link as a directory on the way');
    t.throws(() => native.safeOpenat(fd, 'dlink', c.O_RDONLY | c.O_DIRECTORY), { code: /^(ELOOP|ENOTDIR)$/ }, 'a link opened as a directory');
    t.throws(() => native.safeOpenat(fd, 'real/link', c.O_WRONLY | c.O_CREAT, 0o644), { code: 'ELOOP' }, 'creating through a link');
    t.equal(fs.readFileSync(path.join(dir, 'target', 'f'), 'utf8'), 'outside');
    for (const bad of ['/etc/passwd', '../x', 'real/../real/f', '', 'a//b', './f']) {
      t.throws(() => native.safeOpenat(fd, bad, c.O_RDONLY), TypeError, `refused: ${JSON.stringify(bad)}`);
    }
    t.throws(() => native.safeOpenat(-1, 'f', 0), TypeError);
    const made = native.safeOpenat(fd, 'real/new', c.O_RDWR | c.O_CREAT | c.O_EXCL, 0o600);
    fs.closeSync(made);
    t.throws(() => native.safeOpenat(fd, 'real/new', c.O_RDWR | c.O_CREAT | c.O_EXCL, 0o600), { code: 'EEXIST' });
    const flags = /^flags:\s+(\d+)$/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd2(t, fd)}`, 'utf8'))![1]!;
    t.ok((parseInt(flags, 8) & 0o2000000) !== 0, 'opened close-on-exec');
  });

  t.test('entry operations act on the entry itself, never on a link\'s target', async (t) => {
    const dir = t.testdir({ target: 'secret', file: 'mine' });
    fs.chmodSync(path.join(dir, 'target'), 0o600);
    fs.symlinkSync(path.join(dir, 'target'), path.join(dir, 'link'));
    const fd = opened(t, dir);
    t.throws(() => native.safeFchmodat(fd, 'link', 0o666), { code: 'ELOOP' }, 'chmod of a link is refused');
    t.equal(fs.statSync(path.join(dir, 'target')).mode & 0o777, 0o600, 'the target keeps its mode');
    native.safeFchmodat(fd, 'file', 0o640);
    t.equal(fs.statSync(path.join(dir, 'file')).mode & 0o777, 0o640);
    const st = native.safeFstatat(fd, 'link');
    t.equal(st.mode & c.S_IFMT, c.S_IFLNK, 'fstatat reports the link itself');
    t.equal(native.safeFstatat(fd, '').mode & c.S_IFMT, c.S_IFDIR, "'' is the directory itself");
    t.throws(() => native.safeFstatat(fd, 'missing'), { code: 'ENOENT' });
    if (IS_ROOT) {
      native.safeFchownat(fd, 'link', 65534, 65534);
      t.equal(fs.lstatSync(path.join(dir, 'link')).uid, 65534, "the link's own owner changes");
      t.equal(fs.statSync(path.join(dir, 'target')).uid, 0, 'the target stays root\'s');
    }
    native.safeRenameat(fd, 'link', fd, 'moved');
    t.ok(fs.lstatSync(path.join(dir, 'moved')).isSymbolicLink(), 'a link is renamed, not its target');
    t.throws(() => native.safeRenameat(fd, 'moved', fd, 'file', native.RENAME_NOREPLACE), { code: 'EEXIST' });
    native.safeUnlinkat(fd, 'moved');
    t.equal(fs.readFileSync(path.join(dir, 'target'), 'utf8'), 'secret', 'unlinking a link leaves its target');
    native.safeMkdirat(fd, 'd', 0o700);
    t.throws(() => native.safeUnlinkat(fd, 'd'), { code: 'EISDIR' });
    native.safeUnlinkat(fd, 'd', native.AT_REMOVEDIR);
    for (const bad of ['a/b', '..', '.', '']) t.throws(() => native.safeUnlinkat(fd, bad), TypeError, `refused: ${JSON.stringify(bad)}`);
  });

  t.test('safeRemoveTree removes the tree and only the tree: links are removed, never followed', async (t) => {
    const { dir, victim } = victimAndTree(t);
    const fd = opened(t, dir);
    t.equal(native.safeRemoveTree(fd, 'tree'), 9, 'every entry counted (files, directories, links, the FIFO, the top)');
    t.notOk(fs.existsSync(path.join(dir, 'tree')));
    victimIntact(t, victim);
    t.equal(native.safeRemoveTree(fd, 'tree'), 0, 'nothing there: nothing removed, no error');
    fs.symlinkSync(victim, path.join(dir, 'top-link'));
    t.equal(native.safeRemoveTree(fd, 'top-link'), 1, 'a link as the tree itself: only the link goes');
    victimIntact(t, victim);
  });

  t.test('safeRemoveTree is bounded in depth and entries and leaves the rest', async (t) => {
    const dir = t.testdir({ deep: { a: { b: { c: { d: { f: 'x' } } } } }, wide: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, ''])) });
    const fd = opened(t, dir);
    t.throws(() => native.safeRemoveTree(fd, 'deep', 2), { code: 'ELOOP' }, 'deeper than maxDepth');
    t.ok(fs.existsSync(path.join(dir, 'deep', 'a', 'b')), 'what is above the bound stays');
    t.equal(native.safeRemoveTree(fd, 'deep', 8), 6);
    let thrown: NodeJS.ErrnoException & { removed?: number } = new Error('none');
    try { native.safeRemoveTree(fd, 'wide', 8, 10); } catch (e) { thrown = e as typeof thrown; }
    t.equal(thrown.code, 'E2BIG', 'more entries than maxEntries');
    t.equal(thrown.removed, 10, 'the error says how many went');
    t.equal(fs.readdirSync(path.join(dir, 'wide')).length, 40);
  });

  t.test('safeRemoveTree never crosses into another filesystem (a mount point)', { skip: IS_ROOT ? false : 'mounting needs root' }, async (t) => {
    // Not t.testdir: the mount must go before the directory is removed.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-safefs-'));
    const mnt = path.join(dir, 'tree', 'm');
    fs.mkdirSync(mnt, { recursive: true });
    fs.writeFileSync(path.join(dir, 'tree', 'f'), 'x');
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'none', mnt]);
    t.teardown(() => {
      if (r.status === 0) spawnSync('umount', ['-l', mnt]);
      fs.rmSync(dir, { recursive: true, force: true });
    });
    if (r.status !== 0) { skip(t, `cannot mount a tmpfs here: ${r.stderr}`); return; }
    fs.writeFileSync(path.join(mnt, 'on-the-mount'), 'keep');
    const fd = opened(t, dir);
    t.throws(() => native.safeRemoveTree(fd, 'tree'), { code: 'EXDEV' });
    t.equal(fs.readFileSync(path.join(mnt, 'on-the-mount'), 'utf8'), 'keep', 'nothing on the mount is removed');
  });
}

/** A cgroup filesystem this process may make directories in (v2, else a v1 hierarchy), or null. */
function cgroupMount(): string | null {
  const mounts = fs.readFileSync('/proc/mounts', 'utf8').split('\n').map((l) => l.split(' '));
  const pick = mounts.find((m) => m[2] === 'cgroup2') ?? mounts.find((m) => m[2] === 'cgroup');
  return pick ? pick[1]! : null;
}

if (built) {
  t.test('safeRemoveTree removes a cgroup tree (rmdir with its control files in it)', { skip: IS_ROOT && cgroupMount() ? false : 'needs root and a cgroup filesystem' }, async (t) => {
    const mnt = cgroupMount()!;
    const name = `xl-safefs-${process.pid}`;
    const top = path.join(mnt, name);
    try { fs.mkdirSync(path.join(top, 'child', 'grandchild'), { recursive: true }); } catch (e) {
      skip(t, `cannot make a cgroup in ${mnt}: ${(e as Error).message}`);
      return;
    }
    t.teardown(() => { for (const d of [path.join(top, 'child', 'grandchild'), path.join(top, 'child'), top]) { try { fs.rmdirSync(d); } catch { /* gone */ } } });
    t.ok(fs.readdirSync(top).length > 1, 'the cgroup has control files');
    const fd = opened(t, mnt);
    t.equal(native.safeRemoveTree(fd, name), 3, 'three cgroups, no control file unlinked');
    t.notOk(fs.existsSync(top));
  });
}
