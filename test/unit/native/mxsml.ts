// The MetaX MXSML vendor of the addon (native/src/addon/mxsml.cc) against the fake MXSML
// (test/fixtures/fake-mxsml), loaded into this test process: discovery (VFs), availability, and the
// decoding of process rows — matched on the device's sequence index, never its physical gpuId —
// with the capacity protocol and validation of invalid answers.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as native from '../../../native/ts/index';
import { fakeLibrary } from '../../helpers/fixtures';
import { waitFor } from '../../helpers/wait';

const built = fs.existsSync(path.resolve(__dirname, '../../../native/build/Release/xlurm_native.node'));
if (!built) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  const uuid = (i: number) => `GPU-3e7a0000-0000-4000-8000-00000000000${i}`;
  const gpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} ${uuid(i)} "MXC500"`);
  const fake = fakeLibrary(t, 'metax', gpus(3));
  Object.assign(process.env, fake.env);
  const open = () => native.deviceOpen('metax', [fake.library], 2000);
  const PROCS = 'mxSmlGetSingleGpuProcess_v3';
  /** An opened, discovered library for one subtest. */
  function library(t: any, state: string[] = gpus(3)): native.DeviceHandle {
    fake.write(state);
    const h = open();
    t.teardown(() => native.deviceClose(h, 2000));
    native.deviceDiscover(h, 2000);
    return h;
  }
  const processes = async (h: native.DeviceHandle, ids: number[]) =>
    (await native.deviceProbe(h, ids, 2000)).map((r) => r.error ?? r.processes);

  t.test('open failures say why', async (t) => {
    t.throws(() => native.deviceOpen('metax', ['/nonexistent/a/libmxsml.so', '/nonexistent/b/libmxsml.so'], 2000),
      /^cannot load library: \/nonexistent\/a\/libmxsml\.so: cannot open shared object file: No such file or directory; \/nonexistent\/b\/libmxsml\.so: cannot open/,
      'metax is compiled in: the open fails at the library, not at the kind');
    t.throws(() => native.deviceOpen('metax', ['libc.so.6'], 2000), /^libc\.so\.6 does not export mxSmlInit \(not an MXSML library\?\)$/);
    fake.write([]);
    t.throws(open, /^mxSmlInit: No device \(2\)$/);
    fake.write([...gpus(1), 'fail mxSmlInit 26']);
    t.throws(open, /^mxSmlInit: Unknown error \(26\)$/);
  });

  t.test('discovery: index, UUID, name; VFs left out beside physical GPUs, kept in a guest', async (t) => {
    fake.write([...gpus(2), `vf 2 ${uuid(7)} "MXC500 VF"`, `device 3 ${uuid(3)} MXC500`, 'fail mxSmlGetDeviceInfo 6 3']);
    let h = open();
    t.same(native.deviceDiscover(h, 2000), [
      { id: 0, uuid: uuid(0), name: 'MXC500', npu: null, chip: null, pci: '0000:10:00.0', error: null },
      { id: 1, uuid: uuid(1), name: 'MXC500', npu: null, chip: null, pci: '0000:11:00.0', error: null },
      { id: 2, uuid: uuid(7), name: 'MXC500 VF', npu: null, chip: null, error: 'a virtual function (VF); the physical GPUs are managed' },
      { id: 3, uuid: '', name: '', npu: null, chip: null, error: 'mxSmlGetDeviceInfo: Invalid device id (6)' },
    ]);
    native.deviceClose(h, 2000);
    fake.write([`vf 0 ${uuid(0)} "MXC500 VF"`, `vf 1 ${uuid(1)} "MXC500 VF"`]);
    h = open();
    t.same(native.deviceDiscover(h, 2000).map((d) => [d.id, d.error]), [[0, null], [1, null]], 'only VFs: a guest uses them');
    native.deviceClose(h, 2000);
  });

  t.test('process rows are matched on the sequence index, not the physical gpuId', async (t) => {
    // physical ids chosen to collide with other devices' indices
    const h = library(t, [...gpus(3), 'gpuid 0 1', 'gpuid 1 2', 'gpuid 2 0', 'proc 4242 0,2', 'proc 4343 1', 'proc 77 2']);
    t.same(await processes(h, [0, 1, 2]), [[4242], [4343], [77, 4242]]);
    fake.write([...gpus(3), 'gpuid 0 1', 'gpuid 1 2', 'gpuid 2 0', 'proc 4242 0,2', 'proc 4343 1', 'proc 77 2', 'rows all']);
    t.same(await processes(h, [0, 1, 2]), [[4242], [4343], [77, 4242]], 'rows of processes on other GPUs are not counted');
    fake.write(gpus(3));
    t.same(await processes(h, [0, 1, 2]), [[], [], []]);
  });

  t.test('a long process list is read whole (the buffer grows)', async (t) => {
    const pids = Array.from({ length: 150 }, (_, i) => 1000 + i);
    const h = library(t, [...gpus(1), ...pids.map((p) => `proc ${p} 0`)]);
    const before = fake.calls().length;
    t.same(await processes(h, [0]), [pids]);
    t.ok(fake.calls().slice(before).filter((c) => c === PROCS).length >= 2, 'asked again with a larger buffer');
    fake.write([...gpus(1), ...pids.slice(0, 64).map((p) => `proc ${p} 0`)]);
    t.same(await processes(h, [0]), [pids.slice(0, 64)], 'a buffer filled exactly is asked again, not trusted');
  });

  t.test('invalid answers are errors, never "no processes"', async (t) => {
    const h = library(t);
    const cases: [string[], string][] = [
      [['proc 0 1'], 'row 0 has PID 0'],
      [['proc 5000000 1'], 'row 0 has PID 5000000'],
      [['proc 12 1', 'gpunumber 12 65'], 'row 0 (PID 12) lists 65 GPUs'],
      [['proc 12 1', 'gpunumber 12 0'], 'row 0 (PID 12) lists 0 GPUs'],
      [['proc 12 1', 'overcount'], '65 rows for a buffer of 64'],
    ];
    for (const [extra, why] of cases) {
      fake.write([...gpus(3), ...extra]);
      t.same(await processes(h, [1]), [`${PROCS}: invalid answer (${why})`], extra.join('; '));
    }
    fake.write([...gpus(3), 'proc 12 1', 'overcount']);
    t.same(await processes(h, [0]), [[]], 'per device: only the device whose answer is invalid');
    fake.write([...gpus(3), 'fail mxSmlGetSingleGpuProcess 8 2']);
    t.same(await processes(h, [2]), [`${PROCS}: Permission denied (8)`]);
  });

  t.test('availability: an unavailable reason or state 0 is unhealthy (without a process query)', async (t) => {
    const h = library(t);
    fake.write([...gpus(3), 'unavailable 1 3 "PCIe link down"', 'state 2 0', 'proc 9 1']);
    const before = fake.calls().length;
    t.same((await native.deviceProbe(h, [0, 1, 2], 2000)).map((r) => [r.uuid, r.health, r.processes, r.error]), [
      [uuid(0), 'ok', [], null],
      [uuid(1), 'unhealthy', null, null],
      [uuid(2), 'unhealthy', null, null],
    ]);
    t.equal(fake.calls().slice(before).filter((c) => c === PROCS).length, 1, 'processes asked of the available GPU only');
    fake.write([...gpus(3), 'state 0 7', 'fail mxSmlGetDeviceUnavailableReason 8 1']);
    t.same((await native.deviceProbe(h, [0, 1], 2000)).map((r) => [r.health, r.error]), [
      [null, 'mxSmlGetDeviceState: invalid answer (state 7)'],
      [null, 'mxSmlGetDeviceUnavailableReason: Permission denied (8)'],
    ]);
  });

  t.test('readings for samples: Xcore utilisation and VRAM (KB) where the library answers', async (t) => {
    const h = library(t);
    fake.write([...gpus(3), 'util 0 55', 'mem 0 67108864 1048576', 'util 1 -1', 'mem 1 1024 2048', 'util 2 12', 'unavailable 2 3 "PCIe link down"']);
    const before = fake.calls().length;
    t.same((await native.deviceProbe(h, [0, 1, 2], 2000)).map((r) => [r.error, r.utilization, r.memory_used, r.memory_total, r.memory_free]), [
      [null, 55, 2 ** 30, 64 * 2 ** 30, 63 * 2 ** 30], // the vram pair, KB → bytes (not vis or xtt)
      [null, undefined, undefined, undefined, undefined], // a negative percentage and more used than total: left out
      [null, undefined, undefined, undefined, undefined], // an unavailable GPU is not asked
    ]);
    const calls = fake.calls().slice(before);
    t.equal(calls.filter((c) => c === 'mxSmlGetDeviceIpUsage').length, 2, 'asked of the available GPUs only');
    fake.write([...gpus(3), 'util 0 55', 'mem 0 67108864 1048576', 'fail mxSmlGetDeviceIpUsage 1 0']);
    t.same(Object.keys((await native.deviceProbe(h, [0], 2000))[0]!).sort(),
      ['error', 'health', 'id', 'memory_free', 'memory_total', 'memory_used', 'processes', 'uuid'],
      'a failed utilisation query leaves it out (never 0) and is not the device\'s error');
  });

  t.test('identity: a changed UUID is reported as is; a failing info query is an error', async (t) => {
    const h = library(t);
    fake.write([`device 0 ${uuid(0)} a`, 'device 1 GPU-other b', `device 2 ${uuid(2)} c`, 'fail mxSmlGetDeviceInfo 1 2']);
    t.same((await native.deviceProbe(h, [0, 1, 2, 5], 2000)).map((r) => [r.uuid, r.error]), [
      [uuid(0), null],
      ['GPU-other', null],
      [null, 'mxSmlGetDeviceInfo: Failure (1)'],
      [null, 'mxSmlGetDeviceInfo: Invalid device id (6)'],
    ]);
  });

  t.test('a hung call: bounded, no second call until it returns; no shutdown symbol to call', async (t) => {
    fake.write(gpus(3));
    const before = fake.calls().length;
    const h = open();
    native.deviceDiscover(h, 2000);
    fake.write([...gpus(3), `hang ${PROCS} 30 1`]);
    const rows = await native.deviceProbe(h, [0, 1], 300);
    t.same(rows.map((r) => r.error), [`${PROCS} timed out after 300 ms`, `${PROCS} timed out after 300 ms`]);
    fake.write(gpus(3));
    await waitFor(async () => (await native.deviceProbe(h, [0, 1], 2000)).every((x) => x.error === null) || undefined,
      { timeout: 5000, what: 'recovery' });
    native.deviceClose(h, 2000);
    const calls = fake.calls().slice(before);
    t.notOk(calls.some((c) => c.startsWith('CONCURRENT')));
    t.equal(calls.filter((c) => c === 'mxSmlInit').length, 1);
  });
}
