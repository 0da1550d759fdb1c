// The native addon through its typed facade (native/ts/index.ts): peer credentials, flock,
// accounts and groups, RLIMIT_NOFILE. Needs `npm run build:native`.
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { once } from 'node:events';
import * as native from '../../../native/ts/index';
import { setSoftNofileLimit } from '../../helpers/nofile';

const built = fs.existsSync(path.resolve(__dirname, '../../../native/build/Release/xlurm_native.node'));
if (!built) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  t.test('exports exactly the XlurmNative contract', async t => {
    // `satisfies Record<keyof XlurmNative, true>` makes the type checker hold this list to the
    // interface in native/ts/index.ts both ways (a missing member or an undeclared one fails
    // typecheck:test); the run below holds the built addon to the same list.
    const contract = {
      accountByUid: true, canSpawnSupervisor: true, deviceClose: true, deviceDiscover: true,
      deviceFilterAttach: true, deviceFilterCount: true, deviceFilterSupported: true,
      deviceOpen: true, deviceProbe: true,
      flockExclusive: true, flockUnlock: true, getNofileLimit: true, groupList: true,
      launcherClose: true, launcherPair: true, launcherSignal: true, launcherSpawn: true, launcherWatch: true,
      memfd: true, peerCred: true,
      safeFchmodat: true, safeFchownat: true, safeFstatat: true, safeMkdirat: true, safeOpenat: true,
      safeRemoveTree: true, safeRenameat: true, safeUnlinkat: true,
      spawnSupervisorAsync: true, unixClose: true, unixConnect: true, unixExchange: true,
    } satisfies Record<keyof native.XlurmNative, true>;
    t.same(Object.keys(native.native()).sort(), Object.keys(contract).sort());
    // Each native export also has its checked wrapper in the facade.
    for (const name of Object.keys(contract)) t.type((native as unknown as Record<string, unknown>)[name], 'function', `facade exports ${name}`);
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

  t.test('getNofileLimit reports RLIMIT_NOFILE as the kernel has it, changes included', async t => {
    const [soft, hard] = native.getNofileLimit();
    t.ok(Number.isInteger(soft) && Number.isInteger(hard) && soft <= hard);
    // /proc's view; RLIM_INFINITY ("unlimited") is reported as Number.MAX_SAFE_INTEGER.
    const proc = (): number[] => /^Max open files\s+(\S+)\s+(\S+)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'))!
      .slice(1, 3).map(v => (v === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(v)));
    t.same([soft, hard], proc());
    t.teardown(() => setSoftNofileLimit(soft));
    const lower = Math.min(soft, 256);
    setSoftNofileLimit(lower);
    t.same(native.getNofileLimit(), [lower, hard]);
    setSoftNofileLimit(soft);
    t.same(native.getNofileLimit(), [soft, hard]);
  });
}
