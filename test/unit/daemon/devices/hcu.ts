// HCU statuses from the rocm_smi answer and the hy-smi healthcheck together (devices/hcu.ts).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Device } from '@xlurm/protocol';
import { HealthCheckedBackend, hcu, withHealth } from '../../../../packages/daemon/src/devices/hcu';
import { loadedFrom, mappedFiles } from '../../../../packages/daemon/src/devices/native-backend';
import { fakeLibrary } from '../../../helpers/fixtures';
import { ADDON_BUILT } from '../../../helpers/backend-library';
import type { Backend, ProbeResult } from '../../../../packages/daemon/src/devices/backend';
import type { HealthReport } from '../../../../packages/daemon/src/devices/hy-smi';

const healthy: HealthReport = { ok: true, health: new Map([[0, 'ok'], [1, 'unhealthy']]) };

t.test('withHealth: unknown wins, then a failed or incomplete check, then unhealthy, then the library', async (t) => {
  const unknown: ProbeResult = { status: 'unknown', error: 'rsmi_compute_process_info_get: RSMI_STATUS_BUSY (16)' };
  t.same(withHealth(1, unknown, healthy), unknown);
  t.same(withHealth(0, { status: 'busy' }, { ok: false, error: 'hy-smi --healthcheck timed out after 3000 ms' }),
    { status: 'unknown', error: 'hy-smi --healthcheck timed out after 3000 ms' });
  t.same(withHealth(2, { status: 'idle' }, healthy), { status: 'unknown', error: 'hy-smi --healthcheck: no row for HCU[2]' });
  t.same(withHealth(1, { status: 'busy' }, healthy), { status: 'unhealthy' });
  t.same(withHealth(0, { status: 'busy' }, healthy), { status: 'busy' });
  t.same(withHealth(0, { status: 'idle' }, healthy), { status: 'idle' });
});

t.test('the backend asks both at once and closes the library', async (t) => {
  const devices: Device[] = [0, 1].map((id) => ({ kind: 'hcu', id, name: 'x', visible: `0x${id + 1}`, npu: null, chip: null }));
  let closed = 0;
  let inFlight = 0;
  let overlap = false;
  // Each call answers only after the current turn: calls made at once are both in flight by then.
  const slow = <T>(v: T) => {
    inFlight++;
    overlap ||= inFlight === 2;
    return new Promise<T>((r) => setImmediate(() => { inFlight--; r(v); }));
  };
  const inner: Backend = {
    kind: 'hcu', devices,
    probe: (ids) => slow(new Map(ids.map((id) => [id, { status: 'idle' as const }]))),
    close: () => { closed++; },
  };
  const b = new HealthCheckedBackend(inner, () => slow(healthy));
  t.equal(b.kind, 'hcu');
  t.equal(b.devices, devices);
  t.same([...b.readings()], [], 'a library without readings: none');
  t.same([...await b.probe([1, 0])], [[1, { status: 'unhealthy' }], [0, { status: 'idle' }]]);
  t.ok(overlap, 'library probe and healthcheck run concurrently');
  b.close();
  t.equal(closed, 1);
});

t.test('the readings of the library pass through the health check (samples)', async (t) => {
  const devices: Device[] = [{ kind: 'hcu', id: 0, name: 'x', visible: '0x1', npu: null, chip: null }];
  const readings = new Map([[0, { utilization: 0.5, memoryUsed: 1024 }]]);
  const inner: Backend = { kind: 'hcu', devices, probe: async () => new Map(), readings: () => readings, close: () => undefined };
  t.equal(new HealthCheckedBackend(inner, async () => healthy).readings(), readings);
});

t.test('the library that was loaded: the file the loader mapped, links resolved', async (t) => {
  const dir = t.testdir({ 'librocm_smi64.so': 'x', other: 'y' });
  const lib = path.join(dir, 'librocm_smi64.so');
  fs.symlinkSync(lib, path.join(dir, 'link.so'));
  const mapped = new Set([lib, '/usr/lib/x86_64-linux-gnu/libc.so.6']);
  t.equal(loadedFrom([lib], mapped), lib);
  t.equal(loadedFrom([path.join(dir, 'link.so')], mapped), lib, 'an override that is a link: the file itself');
  t.equal(loadedFrom(['/nonexistent/librocm_smi64.so', lib], mapped), lib, 'the first entry that is mapped');
  t.equal(loadedFrom([path.join(dir, 'other')], mapped), undefined, 'an entry that exists but was not loaded');
  t.equal(loadedFrom(['librocm_smi64.so'], mapped), lib, "a bare name: the loader's one match");
  t.equal(loadedFrom(['librocm_smi64.so'], new Set(['/opt/a/librocm_smi64.so.2', '/opt/b/librocm_smi64.so'])), undefined, 'two matches: unknown');
  t.ok(mappedFiles().has(fs.realpathSync(process.execPath)), 'this process maps its own executable');
});

if (ADDON_BUILT) {
  t.test('through the fake rocm_smi: busy percent and VRAM reach the readings; the tool gets the library directory', async (t) => {
    const fake = fakeLibrary(t, 'hcu', ['device 0 0x1a2b "Hygon K100"', 'device 1 0x1a2c "Hygon K100"', 'util 0 66', 'mem 0 65536 512']);
    Object.assign(process.env, fake.env);
    const logs: string[] = [];
    const b = hcu({ env: fake.env, log: (m) => logs.push(m) });
    t.teardown(() => b.close());
    await b.probe([0, 1]);
    t.same([...b.readings!()], [[0, { utilization: 0.66, memoryUsed: 512 * 2 ** 20, memoryTotal: 65536 * 2 ** 20, memoryFree: 65024 * 2 ** 20 }]],
      'HCU 1 reports nothing: no reading, never 0');
    t.ok(fake.calls().includes('rsmi_dev_busy_percent_get'));
    t.match(logs, [`hcu: health from ${fake.env.XLURM_HCU_HEALTH_TOOL} --healthcheck (LD_LIBRARY_PATH=${path.dirname(fs.realpathSync(fake.library))})`]);
  });
}
