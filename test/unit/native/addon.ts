// The native addon through its typed facade (native/ts/index.ts): peer credentials, flock,
// accounts and groups, close-on-exec, RLIMIT_NOFILE. Needs `npm run build:native`.
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { once } from 'node:events';
import * as native from '../../../native/ts/index';

const built = fs.existsSync(path.resolve(__dirname, '../../../native/build/Release/xlurm_native.node'));
if (!built) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  t.test('exports exactly the XlurmNative contract', async t => {
    t.same(Object.keys(native.native()).sort(), [
      'accountByUid', 'canSpawnSupervisor', 'deviceClose', 'deviceDiscover', 'deviceOpen', 'deviceProbe', 'deviceVendors',
      'flockExclusive', 'flockUnlock', 'getNofileLimit', 'groupList',
      'launcherClose', 'launcherPair', 'launcherSignal', 'launcherSpawn', 'launcherWatch', 'memfd',
      'peerCred', 'setCloexec', 'setNofileLimit', 'spawnSupervisor', 'spawnSupervisorAsync',
    ]);
  });

  t.test('peerCred reports the connecting process over a real Unix socket', async t => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xlurm-peercred-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const sockPath = path.join(dir, 's.sock');
    const server = net.createServer();
    server.listen(sockPath);
    await once(server, 'listening');
    t.teardown(() => { server.close(); });

    const accepted = once(server, 'connection');
    const client = net.connect(sockPath);
    t.teardown(() => { client.destroy(); });
    const [conn] = (await accepted) as [net.Socket];
    t.teardown(() => { conn.destroy(); });
    const fd = (conn as unknown as { _handle: { fd: number } })._handle.fd;
    t.ok(Number.isInteger(fd) && fd > 2, 'accepted socket has an fd');
    t.same(native.peerCred(fd), { pid: process.pid, uid: process.geteuid!(), gid: process.getegid!() });
  });

  t.test('peerCred errors are Node-style system errors', async t => {
    const dir = t.testdir({ f: 'x' });
    const fd = fs.openSync(path.join(dir, 'f'), 'r');
    t.teardown(() => fs.closeSync(fd));
    t.throws(() => native.peerCred(fd), {
      code: 'ENOTSOCK', errno: -os.constants.errno.ENOTSOCK, syscall: 'getsockopt',
      message: /^ENOTSOCK: .*, getsockopt$/,
    });
    t.throws(() => native.peerCred(-1), TypeError);
    t.throws(() => native.peerCred(1.5), TypeError);
  });

  t.test('flockExclusive contends between open file descriptions of one file', async t => {
    const dir = t.testdir({ 'job.lock': '' });
    const file = path.join(dir, 'job.lock');
    const a = fs.openSync(file, 'r+');
    const b = fs.openSync(file, 'r+');
    t.teardown(() => fs.closeSync(a));
    t.equal(native.flockExclusive(a), true, 'first taker gets it');
    t.equal(native.flockExclusive(a), true, 'retaking through the same description is fine');
    t.equal(native.flockExclusive(b), false, 'second description would block');
    native.flockUnlock(a);
    t.equal(native.flockExclusive(b), true, 'free after unlock');
    t.equal(native.flockExclusive(a), false);
    fs.closeSync(b);
    const c = fs.openSync(file, 'r+');
    t.equal(native.flockExclusive(a), true, 'closing the holder releases the lock');
    fs.closeSync(c);
  });

  t.test('flock on a bad descriptor throws EBADF', async t => {
    const dir = t.testdir({ f: '' });
    const fd = fs.openSync(path.join(dir, 'f'), 'r');
    fs.closeSync(fd);
    t.throws(() => native.flockExclusive(fd), { code: 'EBADF', errno: -os.constants.errno.EBADF, syscall: 'flock' });
    t.throws(() => native.flockUnlock(fd), { code: 'EBADF', syscall: 'flock' });
    t.throws(() => native.flockExclusive(-3), TypeError);
  });

  t.test('accountByUid', async t => {
    const root = native.accountByUid(0);
    t.match(root, { name: 'root', uid: 0, gid: 0, dir: String, shell: String });
    t.equal(native.accountByUid(4000000000), null);
    const me = native.accountByUid(process.geteuid!());
    if (me) t.equal(me.uid, process.geteuid!());
    t.throws(() => native.accountByUid(-1), TypeError);
    t.throws(() => native.accountByUid(2 ** 32), TypeError);
  });

  t.test('groupList', async t => {
    const root = native.groupList('root', 0);
    t.ok(root.includes(0), 'root is in group 0');
    t.ok(root.every(g => Number.isInteger(g) && g >= 0));
    // An unknown name still yields the primary gid, as getgrouplist(3) does.
    t.same(native.groupList('no-such-user-xlurm', 4242), [4242]);
    t.throws(() => native.groupList('', 0), TypeError);
    t.throws(() => native.groupList('root', -1), TypeError);
  });

  t.test('setCloexec toggles FD_CLOEXEC (seen in /proc/self/fdinfo)', async t => {
    const dir = t.testdir({ f: '' });
    const fd = fs.openSync(path.join(dir, 'f'), 'r');
    t.teardown(() => fs.closeSync(fd));
    const O_CLOEXEC = 0o2000000;
    const cloexec = () => {
      const m = /^flags:\s+([0-7]+)$/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      return (parseInt(m![1], 8) & O_CLOEXEC) !== 0;
    };
    native.setCloexec(fd, false);
    t.equal(cloexec(), false);
    native.setCloexec(fd, true);
    t.equal(cloexec(), true);
    fs.closeSync(fs.openSync(path.join(dir, 'f'), 'r')); // unrelated fd churn
    t.throws(() => native.setCloexec(100000, true), { code: 'EBADF', syscall: 'fcntl' });
  });

  t.test('RLIMIT_NOFILE round trip', async t => {
    const [soft, hard] = native.getNofileLimit();
    t.ok(Number.isInteger(soft) && Number.isInteger(hard) && soft <= hard);
    t.teardown(() => native.setNofileLimit(soft, hard));
    const lower = Math.min(soft, 256);
    native.setNofileLimit(lower, hard);
    t.same(native.getNofileLimit(), [lower, hard]);
    native.setNofileLimit(soft, hard);
    t.same(native.getNofileLimit(), [soft, hard]);
    if (hard < Number.MAX_SAFE_INTEGER) {
      t.throws(() => native.setNofileLimit(hard + 1, hard), { code: 'EINVAL', syscall: 'setrlimit' },
        'soft above hard is EINVAL');
    }
    t.throws(() => native.setNofileLimit(-1, hard), TypeError);
    t.throws(() => native.setNofileLimit(1.5, hard), TypeError);
  });
}
