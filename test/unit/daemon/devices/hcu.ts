// HCU statuses from the rocm_smi answer and the hy-smi healthcheck together (devices/hcu.ts).
import t from 'tap';
import type { Device } from '@xlurm/protocol';
import { HealthCheckedBackend, withHealth } from '../../../../packages/daemon/src/devices/hcu';
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
  t.same([...await b.probe([1, 0])], [[1, { status: 'unhealthy' }], [0, { status: 'idle' }]]);
  t.ok(overlap, 'library probe and healthcheck run concurrently');
  b.close();
  t.equal(closed, 1);
});
