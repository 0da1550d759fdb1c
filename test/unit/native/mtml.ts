// The Moore Threads MTML vendor of the addon (native/src/addon/mtml.cc, node-holders.cc) against
// the fake MTML (test/fixtures/fake-mtml), loaded into this test process. MTML has no process
// query: occupancy comes from a scan of /proc/<pid>/fd for the GPU's device nodes, so these tests
// hold node files open from real processes, or point XLURM_MTML_PROC_ROOT at a fake process table.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as native from '../../../native/ts/index';
import { fakeLibrary } from '../../helpers/fixtures';
import { mtmlGpus, mttUuid as uuid } from '../../helpers/mtml';
import { waitFor } from '../../helpers/wait';
import { skip } from '../../helpers/tap';

const built = fs.existsSync(path.resolve(__dirname, '../../../native/build/Release/xlurm_native.node'));
if (!built) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  const { node, gpu, gpus, hold } = mtmlGpus(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-mtml-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const fake = fakeLibrary(t, 'mthreads', gpus(2));
  Object.assign(process.env, fake.env);
  delete process.env.XLURM_MTML_PROC_ROOT;
  const open = () => native.deviceOpen('mthreads', [fake.library], 2000);
  /** Open with a process-table root (read once, at initialisation). */
  const openWithRoot = (root: string) => {
    process.env.XLURM_MTML_PROC_ROOT = root;
    try { return open(); } finally { delete process.env.XLURM_MTML_PROC_ROOT; }
  };
  const stop = async (c: ChildProcess) => {
    c.kill('SIGKILL');
    await new Promise((resolve) => c.exitCode !== null || c.signalCode !== null ? resolve(null) : c.once('exit', resolve));
  };

  t.test('open failures say why', async (t) => {
    t.throws(() => native.deviceOpen('mthreads', ['/nonexistent/libmtml.so'], 2000),
      /^cannot load library: \/nonexistent\/libmtml\.so: cannot open shared object file/,
      'mthreads is compiled in: the open fails at the library, not at the kind');
    t.throws(() => native.deviceOpen('mthreads', ['libc.so.6'], 2000), /^libc\.so\.6 does not export mtmlLibraryInit \(not an MTML library\?\)$/);
    fake.write([...gpus(1), 'fail mtmlLibraryInit 1']);
    t.throws(open, /^mtmlLibraryInit: Driver not loaded \(1\)$/);
    t.throws(() => openWithRoot('proc'), /^XLURM_MTML_PROC_ROOT must be an absolute path: proc$/);
    fake.write([...gpus(1), 'fail mtmlLibraryCountDevice 2']);
    const h = open();
    t.throws(() => native.deviceDiscover(h, 2000), /^mtmlLibraryCountDevice: Driver failure \(2\)$/);
    native.deviceClose(h, 2000);
  });

  t.test('discovery: index, UUID and name; a device that cannot be identified is reported', async (t) => {
    fake.write([...gpus(2), 'device 2 5e1ec7ed-2 MTT S80 desktop', 'fail mtmlDeviceGetUUID 2 1']);
    const h = open();
    t.teardown(() => native.deviceClose(h, 2000));
    t.same(native.deviceDiscover(h, 2000), [
      // The node paths as reported, for device isolation (docs/behaviour.md §24.8); device 2 reports none.
      { id: 0, uuid: uuid(0), name: 'MTT S4000', npu: null, chip: null, nodes: [node(0), node(0, 'render')], error: null },
      { id: 1, uuid: '', name: '', npu: null, chip: null, error: 'mtmlDeviceGetUUID: Driver failure (2)' },
      { id: 2, uuid: '5e1ec7ed-2', name: 'MTT S80 desktop', npu: null, chip: null, error: null },
    ]);
  });

  t.test('occupancy: processes holding a GPU node open, by path, canonical path or device number', async (t) => {
    fake.write(gpus(3));
    const h = open();
    t.teardown(() => native.deviceClose(h, 2000));
    native.deviceDiscover(h, 2000);
    const probe = async () => (await native.deviceProbe(h, [0, 1, 2], 2000)).map((r) => [r.error, r.processes]);
    t.same(await probe(), [[null, []], [null, []], [null, []]], 'nobody holds a node; this process (the library) does not count');
    const a = await hold(node(1));
    const b = await hold(node(2, 'render'));
    const c = await hold(node(2));
    t.same(await probe(), [[null, []], [null, [a.pid]], [null, [b.pid!, c.pid!].sort((x, y) => x - y)]]);
    // the driver names a node through a symlink; the holder opened the file itself
    fs.symlinkSync(node(0), path.join(dir, 'link.0'));
    fake.write([...gpus(3).filter((l) => !l.startsWith('node 0 gpu')), `node 0 gpu ${path.join(dir, 'link.0')}`]);
    const d = await hold(node(0));
    t.same((await native.deviceProbe(h, [0], 2000))[0]!.processes, [d.pid], 'matched on the canonical path');
    await stop(a);
    await stop(d);
    t.same((await native.deviceProbe(h, [0, 1], 2000)).map((r) => r.processes), [[], []], 'idle once they exit');
  });

  t.test('a character device matches by device number whatever path the holder used', async (t) => {
    const copy = path.join(dir, 'null-copy');
    try {
      fs.rmSync(copy, { force: true });
      const st = fs.statSync('/dev/null');
      const mk = spawn('mknod', [copy, 'c', String(Math.floor(st.rdev / 256)), String(st.rdev % 256)]);
      const code = await new Promise((resolve) => mk.on('exit', resolve).on('error', () => resolve(1)));
      if (code !== 0) throw new Error('mknod failed');
    } catch {
      skip(t, 'cannot create a device node here (needs CAP_MKNOD)');
      return;
    }
    fake.write([`device 0 ${uuid(0)} x`, `node 0 gpu ${copy}`]);
    const h = open();
    t.teardown(() => native.deviceClose(h, 2000));
    const holder = await hold('/dev/null');
    const [row] = await native.deviceProbe(h, [0], 2000);
    t.equal(row!.error, null);
    t.ok(row!.processes!.includes(holder.pid!), 'the holder of /dev/null holds the same device as the copy');
    t.notOk(row!.processes!.includes(process.pid), 'never this process');
  });

  t.test('no occupancy without node paths, or with a node the driver names but the host lacks', async (t) => {
    fake.write([
      `device 0 ${uuid(0)} virtual`,
      `device 1 ${uuid(1)} render only`, `node 1 render ${node(1, 'render')}`,
      `device 2 ${uuid(2)} missing`, `node 2 gpu ${path.join(dir, 'gone')}`,
      ...gpu(3), 'fail mtmlDeviceGetPrimaryPath 2 3',
    ]);
    const h = open();
    t.teardown(() => native.deviceClose(h, 2000));
    const rows = await native.deviceProbe(h, [0, 1, 2, 3], 2000);
    t.same(rows.map((r) => r.error), [
      'occupancy unknown: MTML has no process query and reports no device node to watch (mtmlDeviceGetGpuPath: Not supported (4))',
      null,
      `occupancy unknown: cannot stat ${path.join(dir, 'gone')}: No such file or directory`,
      'mtmlDeviceGetPrimaryPath: Driver failure (2)',
    ]);
    t.same(rows.map((r) => r.uuid), [uuid(0), uuid(1), uuid(2), uuid(3)]);
    t.same(rows.map((r) => r.processes), [null, [], null, null], 'processes only where established');
  });

  t.test('a fake process table: holders found; another PID namespace or unreadable fds fail closed', async (t) => {
    const root = path.join(dir, 'proc');
    const mk = (p: string) => fs.mkdirSync(path.join(root, p), { recursive: true });
    mk('1/fd'); mk('2'); mk('4242/fd'); mk('4343/fd'); mk('99/fd'); mk('sys'); mk('888');
    const kthreadd = path.join(root, '2/stat');
    const stat2 = (flags: number) => fs.writeFileSync(kthreadd, `2 (kthreadd) S 0 0 0 0 -1 ${flags} 0 0 0 0 0 0 0 0 20 0 1 0 20\n`);
    stat2(0x208040); // PF_KTHREAD: the host's process table
    fs.symlinkSync('99', path.join(root, 'self'));
    fs.symlinkSync(node(0), path.join(root, '4242/fd/7'));
    fs.symlinkSync('socket:[1234]', path.join(root, '4242/fd/8'));
    fs.symlinkSync(node(1, 'render'), path.join(root, '4343/fd/3'));
    fs.symlinkSync(node(0), path.join(root, '99/fd/3')); // "self": the daemon's own library
    fake.write(gpus(2));
    const h = openWithRoot(root + '/');
    t.teardown(() => native.deviceClose(h, 2000));
    t.same((await native.deviceProbe(h, [0, 1], 2000)).map((r) => [r.error, r.processes]), [[null, [4242]], [null, [4343]]]);

    stat2(0x400100); // PID 2 is an ordinary process: a container's own /proc
    const why = `occupancy unknown: ${root} is not the host's process table (its PID 2 is not a kernel thread): processes in other PID namespaces cannot be seen`;
    t.same((await native.deviceProbe(h, [0, 1], 2000)).map((r) => [r.error, r.processes]), [[why, null], [why, null]]);
    fs.rmSync(kthreadd);
    t.same((await native.deviceProbe(h, [1], 2000))[0]!.error, `occupancy unknown: cannot read ${root}/2/stat: No such file or directory`);
    stat2(0x208040);

    mk('777');
    fs.writeFileSync(path.join(root, '777/fd'), '');
    t.same((await native.deviceProbe(h, [0], 2000))[0]!.error, `occupancy unknown: cannot read ${root}/777/fd: Not a directory`,
      'a process whose descriptors cannot be read makes occupancy unknown');
    fs.rmSync(path.join(root, '777'), { recursive: true });
    t.same((await native.deviceProbe(h, [0], 2000))[0]!.processes, [4242], 'an exited process (no fd directory) is skipped');
  });

  t.test('identity: a changed UUID is reported as is; a device object for another index is invalid', async (t) => {
    fake.write(gpus(2));
    const h = open();
    t.teardown(() => native.deviceClose(h, 2000));
    fake.write([...gpus(2).map((l) => l.replace(uuid(1), 'f00')), 'reindex 0 5']);
    t.same((await native.deviceProbe(h, [0, 1, 7], 2000)).map((r) => [r.uuid, r.error]), [
      [null, 'mtmlDeviceGetIndex: invalid answer (index 5 for device 0)'],
      ['f00', null],
      [null, 'mtmlLibraryInitDeviceByIndex: Not found (7)'],
    ]);
  });

  t.test('a hung call: bounded, no second call until it returns', async (t) => {
    fake.write(gpus(2));
    const h = open();
    t.teardown(() => native.deviceClose(h, 2000));
    fake.write([...gpus(2), 'hang mtmlDeviceGetUUID 30 1']);
    const rows = await native.deviceProbe(h, [0, 1], 300);
    t.same(rows.map((r) => r.error), ['mtmlDeviceGetUUID timed out after 300 ms', 'mtmlDeviceGetUUID timed out after 300 ms']);
    fake.write(gpus(2));
    const back = await waitFor(async () => {
      const r = await native.deviceProbe(h, [0, 1], 2000);
      return r.every((x) => x.error === null) ? r : undefined;
    }, { timeout: 5000, what: 'recovery' });
    t.same(back.map((r) => r.processes), [[], []]);
    t.notOk(fake.calls().some((c) => c.startsWith('CONCURRENT')));
  });

  t.test('readings for samples: GPU utilisation and memory through sub-objects, each freed', async (t) => {
    fake.write([...gpus(3), 'util 0 42', 'mem 0 49152 1024', 'util 1 250', 'mem 1 1024 2048', 'fail mtmlDeviceInitGpu 4 2', 'mem 2 8192 4096']);
    const h = open();
    t.teardown(() => native.deviceClose(h, 2000));
    native.deviceDiscover(h, 2000);
    const before = fake.calls().length;
    const rows = await native.deviceProbe(h, [0, 1, 2], 2000);
    t.same(rows.map((r) => [r.error, r.utilization, r.memory_used, r.memory_total, r.memory_free]), [
      [null, 42, 1024 * 2 ** 20, 49152 * 2 ** 20, 48128 * 2 ** 20],
      [null, undefined, undefined, undefined, undefined], // 250 % and more used than total: absurd, left out
      [null, undefined, 4096 * 2 ** 20, 8192 * 2 ** 20, 4096 * 2 ** 20], // no GPU object: no utilisation, never 0
    ]);
    const calls = fake.calls().slice(before);
    const n = (name: string) => calls.filter((c) => c === name).length;
    t.equal(n('mtmlDeviceInitGpu'), 3);
    t.equal(n('mtmlDeviceFreeGpu'), 2, 'every GPU object handed out is freed (device 2 got none)');
    t.equal(n('mtmlDeviceInitMemory'), 3);
    t.equal(n('mtmlDeviceFreeMemory'), 3, 'every memory object is freed');
    t.notOk(calls.some((c) => c.startsWith('BAD-OBJECT')), 'no unknown or freed object passed in');
    fake.write(gpus(1));
    t.same(Object.keys((await native.deviceProbe(h, [0], 2000))[0]!).sort(), ['error', 'health', 'id', 'processes', 'uuid'],
      'a GPU whose library reports nothing has no reading at all');
  });

  t.test('every object is freed; one shutdown per init', async (t) => {
    fake.write(gpus(2));
    const before = fake.calls().length;
    const h = open();
    native.deviceDiscover(h, 2000);
    await native.deviceProbe(h, [0, 1, 9], 2000);
    native.deviceClose(h, 2000);
    const calls = fake.calls().slice(before);
    const n = (name: string) => calls.filter((c) => c === name).length;
    t.equal(n('mtmlLibraryInit'), 1);
    t.equal(n('mtmlLibraryShutDown'), 1);
    t.equal(calls.at(-1), 'mtmlLibraryShutDown');
    t.equal(n('mtmlLibraryInitDeviceByIndex'), 5, 'two at discovery, three probed');
    t.equal(n('mtmlLibraryFreeDevice'), 4, 'every object handed out is freed (index 9 got none)');
    t.notOk(calls.some((c) => c.startsWith('BAD-OBJECT')), 'no unknown or freed object passed in');
  });
}
