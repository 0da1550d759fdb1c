// The vendor-neutral device API of the addon (native/src/addon/device.cc) with the NVML backend
// (nvml.cc) against the fake NVML (test/fixtures/fake-nvml), loaded into this test process.
// The fake reads its state file from this process's environment on every call.
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
  const fake = fakeLibrary(t, 'nvidia', [
    'device 0 GPU-0000 "Fake H100"',
    'device 1 GPU-1111 Fake H100 80GB HBM3',
  ]);
  Object.assign(process.env, fake.env);
  const open = () => native.deviceOpen('nvidia', [fake.library], 2000);

  t.test('vendors and open failures say why', async (t) => {
    t.throws(() => native.deviceOpen('nope', ['/x'], 100), /no nope support in this build/);
    t.throws(() => native.deviceOpen('nvidia', ['/nonexistent/libnvidia-ml.so.1'], 2000),
      /^cannot load library: \/nonexistent\/libnvidia-ml\.so\.1: cannot open shared object file/,
      'nvidia is compiled in: the open fails at the library, not at the kind');
    t.throws(() => native.deviceOpen('nvidia', ['libc.so.6'], 2000), /libc\.so\.6 does not export nvmlInit_v2 \(not an NVML library\?\)/);
    t.throws(() => native.deviceOpen('nvidia', [], 2000), TypeError);
    t.throws(() => native.deviceProbe(123456 as native.DeviceHandle, [0], 100), /invalid or closed device handle/);
    fake.write(['device 0 GPU-0000 x', 'fail nvmlInit 9']);
    t.throws(open, /^nvmlInit_v2: Driver Not Loaded \(9\)$/);
    fake.write(['device 0 GPU-0000 x', 'fail nvmlDeviceGetCount 999']);
    const h = open();
    t.throws(() => native.deviceDiscover(h, 2000), /^nvmlDeviceGetCount: Unknown Error \(999\)$/);
    native.deviceClose(h, 2000);
  });

  t.test('discovery and probes', async (t) => {
    fake.write(['device 0 GPU-0000 "Fake H100"', 'device 1 GPU-1111 Fake H100 80GB HBM3', 'fail nvmlDeviceGetUUID 15 2', 'device 2 GPU-2222 lost']);
    const h = open();
    t.teardown(() => native.deviceClose(h, 2000));
    t.same(native.deviceDiscover(h, 2000), [
      { id: 0, uuid: 'GPU-0000', name: 'Fake H100', npu: null, chip: null, error: null },
      { id: 1, uuid: 'GPU-1111', name: 'Fake H100 80GB HBM3', npu: null, chip: null, error: null },
      { id: 2, uuid: '', name: '', npu: null, chip: null, error: 'nvmlDeviceGetUUID: GPU is lost (15)' },
    ]);
    fake.write(['device 0 GPU-0000 a', 'device 1 GPU-1111 b', 'procs 1 4242 77']);
    t.same(await native.deviceProbe(h, [1, 0, 9], 2000), [
      { id: 1, uuid: 'GPU-1111', processes: [4242, 77], health: null, error: null },
      { id: 0, uuid: 'GPU-0000', processes: [], health: null, error: null },
      { id: 9, uuid: null, processes: null, health: null, error: 'nvmlDeviceGetHandleByIndex: Invalid Argument (2)' },
    ]);
    fake.write(['device 0 GPU-0000 a', 'device 1 GPU-9999 b', 'fail nvmlDeviceGetComputeRunningProcesses 999 0']);
    t.same(await native.deviceProbe(h, [0, 1], 2000), [
      { id: 0, uuid: 'GPU-0000', processes: null, health: null, error: 'nvmlDeviceGetComputeRunningProcesses: Unknown Error (999)' },
      { id: 1, uuid: 'GPU-9999', processes: [], health: null, error: null },
    ], 'a failure is per device; a changed UUID is reported as is');
  });

  t.test('process rows are decoded whatever stride the driver wrote (the _v3 pitfall)', async (t) => {
    const h = open();
    t.teardown(() => native.deviceClose(h, 2000));
    for (const stride of [24, 32, 16]) {
      for (const pids of [[1234], [1234, 99], [3, 4194303, 17, 65536, 2]]) {
        fake.write(['device 0 GPU-0000 a', `procs 0 ${pids.join(' ')}`, `stride ${stride}`]);
        const [row] = await native.deviceProbe(h, [0], 2000);
        t.same(row!.processes, pids, `stride ${stride}, ${pids.length} row(s)`);
      }
    }
    // 0 is never a valid PID: no layout fits
    fake.write(['device 0 GPU-0000 a', 'procs 0 0 5']);
    const [row] = await native.deviceProbe(h, [0], 2000);
    t.equal(row!.error, 'nvmlDeviceGetComputeRunningProcesses: invalid answer (the rows match no known layout)');
  });

  t.test('a hung call: the probe resolves by its deadline, no second call starts until it returns', async (t) => {
    const h = open();
    t.teardown(() => native.deviceClose(h, 2000));
    native.deviceDiscover(h, 2000);
    fake.write(['device 0 GPU-0000 a', 'device 1 GPU-1111 b', 'hang nvmlDeviceGetComputeRunningProcesses 30 1']);
    const before = fake.calls().length;
    let t0 = Date.now();
    const rows = await native.deviceProbe(h, [0, 1], 300);
    const took = Date.now() - t0;
    t.ok(took >= 290 && took < 1500, `resolved at the deadline (${took} ms)`);
    const why = 'nvmlDeviceGetComputeRunningProcesses timed out after 300 ms';
    t.same(rows.map((r) => r.error), [why, why], 'every device unknown');
    t0 = Date.now();
    t.same((await native.deviceProbe(h, [0], 5000)).map((r) => r.error), [why], 'still hung: same answer');
    t.ok(Date.now() - t0 < 200, 'answered at once');
    const during = fake.calls().slice(before);
    t.notOk(during.some((c) => c.startsWith('CONCURRENT')), 'no concurrent call into the library');
    // the call returns (the fake stops hanging once the line is gone): probes work again
    fake.write(['device 0 GPU-0000 a', 'device 1 GPU-1111 b', 'procs 1 555']);
    const back = await waitFor(async () => {
      const r = await native.deviceProbe(h, [0, 1], 2000);
      return r.every((x) => x.error === null) ? r : undefined;
    }, { timeout: 5000, what: 'recovery' });
    t.same(back.map((r) => r.processes), [[], [555]]);
    t.notOk(fake.calls().some((c) => c.startsWith('CONCURRENT')));
  });

  t.test('a hang during open or discovery is bounded too', async (t) => {
    fake.write(['device 0 GPU-0000 a', 'hang nvmlDeviceGetCount 30']);
    const h = open();
    const t0 = Date.now();
    t.throws(() => native.deviceDiscover(h, 300), /^nvmlDeviceGetCount timed out after 300 ms$/);
    t.ok(Date.now() - t0 < 1500);
    t.throws(() => native.deviceDiscover(h, 300), /nvmlDeviceGetCount timed out after 300 ms/, 'no second call while hung');
    native.deviceClose(h, 300); // skips nvmlShutdown while hung; must not block
    t.throws(() => native.deviceDiscover(h, 300), /invalid or closed device handle/);
    fake.write(['device 0 GPU-0000 a']);
  });

  t.test('init and shutdown are balanced', async (t) => {
    fake.write(['device 0 GPU-0000 a']);
    const before = fake.calls().length;
    const h = open();
    native.deviceDiscover(h, 2000);
    await native.deviceProbe(h, [0], 2000);
    native.deviceClose(h, 2000);
    const calls = fake.calls().slice(before);
    t.equal(calls.filter((c) => c === 'nvmlInit_v2').length, 1);
    t.equal(calls.filter((c) => c === 'nvmlShutdown').length, 1);
    t.equal(calls.at(-1), 'nvmlShutdown');
    t.ok(calls.includes('nvmlDeviceGetComputeRunningProcesses_v3'), 'the _v3 symbol is preferred');
  });
}
