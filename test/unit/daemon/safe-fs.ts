// packages/daemon/src/safe-fs.ts: the anchored directory handle (create O_EXCL, atomic replace
// through an unpredictable temporary name, remove, remove a tree, chown/chmod of the entry) and
// extensions 28.1's directory rule.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SafeDir, notOwnedProblem, ownedByDaemonNotWritable, randomDigits, withDir } from '../../../packages/daemon/src/safe-fs';

const IS_ROOT = process.getuid?.() === 0;

t.test('createFile is exclusive: a planted link or file under the name is refused, its target untouched', async (t) => {
  const dir = t.testdir({ victim: 'secret', taken: 'x' });
  fs.symlinkSync(path.join(dir, 'victim'), path.join(dir, 'planted'));
  withDir(dir, (d) => {
    t.throws(() => d.createFile('planted', 0o666), { code: 'EEXIST' });
    t.throws(() => d.createFile('taken', 0o666), { code: 'EEXIST' });
    const fd = d.createFile('new', 0o644);
    fs.closeSync(fd);
  });
  t.equal(fs.statSync(path.join(dir, 'new')).mode & 0o777, 0o644, 'the mode asked for, whatever the umask');
  t.equal(fs.readFileSync(path.join(dir, 'victim'), 'utf8'), 'secret');
});

t.test('writeAtomic replaces the name in one step, a link there included, and never writes through one', async (t) => {
  const dir = t.testdir({ victim: 'secret' });
  fs.chmodSync(path.join(dir, 'victim'), 0o600);
  fs.symlinkSync(path.join(dir, 'victim'), path.join(dir, 'out.prom'));
  withDir(dir, (d) => d.writeAtomic('out.prom', 'new\n', 0o644));
  t.ok(fs.lstatSync(path.join(dir, 'out.prom')).isFile(), 'the link was replaced by a file');
  t.equal(fs.readFileSync(path.join(dir, 'out.prom'), 'utf8'), 'new\n');
  t.equal(fs.statSync(path.join(dir, 'out.prom')).mode & 0o777, 0o644);
  t.equal(fs.readFileSync(path.join(dir, 'victim'), 'utf8'), 'secret', 'the link target untouched');
  t.equal(fs.statSync(path.join(dir, 'victim')).mode & 0o777, 0o600, 'and not chmod\'ed');
  t.same(fs.readdirSync(dir).sort(), ['out.prom', 'victim'], 'no temporary file left');
  // A fixed temporary name someone planted: refused (EEXIST), nothing written anywhere.
  fs.symlinkSync(path.join(dir, 'victim'), path.join(dir, 'tmp.1'));
  t.throws(() => withDir(dir, (d) => d.writeAtomic('out.prom', 'newer\n', 0o644, { temp: 'tmp.1' })), { code: 'EEXIST' });
  t.equal(fs.readFileSync(path.join(dir, 'out.prom'), 'utf8'), 'new\n');
  t.ok(fs.lstatSync(path.join(dir, 'tmp.1')).isSymbolicLink(), "someone else's entry is not removed on failure either");
});

t.test('temporary names are unpredictable', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 100; i++) {
    const r = randomDigits();
    t.match(r, /^\d{18}$/);
    seen.add(r);
  }
  t.equal(seen.size, 100);
});

t.test('openAppend: a link is refused, a FIFO is not written to', async (t) => {
  const dir = t.testdir({ victim: 'secret' });
  fs.symlinkSync(path.join(dir, 'victim'), path.join(dir, 'log'));
  await withDir(dir, async (d) => {
    t.throws(() => d.openAppend('log'), { code: 'ELOOP' });
    const fd = d.openAppend('fresh')!;
    fs.writeSync(fd, 'line\n');
    fs.closeSync(fd);
  });
  t.equal(fs.readFileSync(path.join(dir, 'victim'), 'utf8'), 'secret');
  t.equal(fs.statSync(path.join(dir, 'fresh')).mode & 0o777, 0o600);
});

t.test('remove, removeDir, removeTree, chmod and chown act on entries of the held directory', async (t) => {
  const dir = t.testdir({ victim: { keep: 'x' }, inner: { tree: { a: { b: 'c' } }, f: 'y' } });
  fs.symlinkSync(path.join(dir, 'victim'), path.join(dir, 'inner', 'tree', 'link'));
  const d = SafeDir.open(dir);
  t.teardown(() => d.close());
  const inner = d.openDir('inner');
  t.teardown(() => inner.close());
  t.equal(inner.removeTree('tree'), 4, 'tree, a, a/b and the link');
  t.equal(inner.removeTree('tree'), 0);
  t.equal(inner.remove('f'), true);
  t.equal(inner.remove('f'), false, 'a missing entry: false, no error');
  t.equal(d.removeDir('inner'), true);
  t.equal(fs.readFileSync(path.join(dir, 'victim', 'keep'), 'utf8'), 'x');
  fs.symlinkSync(path.join(dir, 'victim'), path.join(dir, 'l'));
  t.throws(() => d.chmod('l', 0o777), { code: 'ELOOP' });
  t.equal(fs.statSync(path.join(dir, 'victim')).mode & 0o777, 0o755);
  if (IS_ROOT) {
    d.chown('l', 65534, 65534);
    t.equal(fs.statSync(path.join(dir, 'victim')).uid, 0, "chown of a link never reaches its target");
  }
  t.throws(() => SafeDir.open(path.join(dir, 'l')), { code: /^(ELOOP|ENOTDIR)$/ }, 'a held directory is never a link');
  t.throws(() => d.openDir('l'), { code: /^(ELOOP|ENOTDIR)$/ });
});

t.test("ownedByDaemonNotWritable: 28.1's directory rule", async (t) => {
  const dir = t.testdir({ ok: {}, open: {}, group: {} });
  fs.chmodSync(path.join(dir, 'open'), 0o777);
  fs.chmodSync(path.join(dir, 'group'), 0o775);
  fs.chmodSync(path.join(dir, 'ok'), 0o755);
  const me = process.geteuid!();
  t.equal(ownedByDaemonNotWritable(path.join(dir, 'ok'), me), true);
  t.equal(ownedByDaemonNotWritable(path.join(dir, 'open'), me), false, 'world-writable');
  t.equal(ownedByDaemonNotWritable(path.join(dir, 'group'), me), false, 'group-writable');
  t.equal(ownedByDaemonNotWritable(path.join(dir, 'missing'), me), true, 'missing: the daemon makes it itself');
  fs.symlinkSync(path.join(dir, 'ok'), path.join(dir, 'link'));
  t.equal(ownedByDaemonNotWritable(path.join(dir, 'link'), me), false, 'a link is not the directory');
  if (IS_ROOT) {
    fs.chownSync(path.join(dir, 'ok'), 65534, 65534);
    t.equal(ownedByDaemonNotWritable(path.join(dir, 'ok'), 0), false, "another user's");
    t.equal(ownedByDaemonNotWritable(path.join(dir, 'ok'), 65534), true, "a non-root daemon's own");
    fs.chownSync(path.join(dir, 'ok'), 0, 0);
    t.equal(ownedByDaemonNotWritable(path.join(dir, 'ok'), 65534), true, "root's, for a non-root daemon");
  }
  t.equal(notOwnedProblem('/var/lib/x', 0), '/var/lib/x must be owned by root and not writable by others');
  t.equal(notOwnedProblem('/tmp/x', 1000), "/tmp/x must be owned by root or the daemon's user (uid 1000) and not writable by others");
});
