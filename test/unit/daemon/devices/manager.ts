// DeviceManager (packages/daemon/src/devices/manager.ts) with a scripted in-memory backend:
// fail-closed availability, re-probe on release, statuses in views, logging on change only.
import t from 'tap';
import type { Device } from '@xlurm/protocol';
import type { Backend, ProbeResult } from '../../../../packages/daemon/src/devices/backend';
import { DeviceManager } from '../../../../packages/daemon/src/devices/manager';

const dev = (id: number): Device => ({ kind: 'nvidia', id, name: 'Fake', visible: `GPU-${id}`, npu: null, chip: null });

/** Each probe waits until the test answers it. */
class Scripted implements Backend {
  readonly kind = 'nvidia' as const;
  readonly devices = [dev(0), dev(1)];
  answers: Array<(r: Record<number, ProbeResult>) => void> = [];
  closed = false;
  probe(): Promise<Map<number, ProbeResult>> {
    return new Promise((resolve) => {
      this.answers.push((r) => resolve(new Map(Object.entries(r).map(([k, v]) => [Number(k), v]))));
    });
  }
  /** Answer the oldest outstanding probe. */
  async answer(r: Record<number, ProbeResult>): Promise<void> {
    const a = this.answers.shift();
    if (!a) throw new Error('no probe outstanding');
    a(r);
    await new Promise((res) => setImmediate(res));
  }
  close(): void { this.closed = true; }
}

const idle: ProbeResult = { status: 'idle' };
const busy: ProbeResult = { status: 'busy' };

async function started(): Promise<{ b: Scripted; m: DeviceManager; changes: () => number; logs: string[] }> {
  const b = new Scripted();
  let n = 0;
  const logs: string[] = [];
  const m = new DeviceManager([b], () => { n++; }, (s) => logs.push(s));
  const s = m.start();
  await b.answer({ 0: idle, 1: idle });
  await s;
  return { b, m, changes: () => n, logs };
}

t.test('only idle, enabled, unallocated devices are free', async (t) => {
  const { b, m } = await started();
  t.teardown(() => m.stop());
  t.same([...m.freeKeys()], ['nvidia:0', 'nvidia:1']);
  m.allocate(7, [dev(0)]);
  m.excluded.add(1);
  t.same([...m.freeKeys()], []);
  t.same(m.views().map((v) => [v.status, v.job]), [['allocated', 7], ['disabled', null]]);
  m.excluded.delete(1);
  (m as any).probeBackend(b);
  await b.answer({ 0: busy, 1: { status: 'unknown', error: 'nvmlDeviceGetUUID: GPU is lost (15)' } });
  t.same([...m.freeKeys()], []);
  const v = m.views();
  t.same(v[0], { device: dev(0), job: 7, status: 'allocated', nodes: [] });
  t.same(v[1], { device: dev(1), job: null, status: 'unknown', monitoring_error: 'nvmlDeviceGetUUID: GPU is lost (15)', nodes: [] });
});

t.test('a released device is re-probed at once and free only after a probe started since', async (t) => {
  const { b, m, changes } = await started();
  t.teardown(() => m.stop());
  m.allocate(1, [dev(0)]);
  (m as any).probeBackend(b); // a poll already in flight when the job ends
  m.release([dev(0)]);
  t.notOk(m.freeKeys().has('nvidia:0'), 'not free before the re-probe');
  const before = changes();
  await b.answer({ 0: idle, 1: idle });
  t.notOk(m.freeKeys().has('nvidia:0'), 'a probe started before the release does not count');
  t.equal(b.answers.length, 1, 'the re-probe follows the in-flight one');
  await b.answer({ 0: idle, 1: idle });
  t.ok(m.freeKeys().has('nvidia:0'), 'free after the re-probe');
  t.ok(changes() > before, 'the scheduler is told');

  m.allocate(2, [dev(1)]);
  m.release([dev(1)]);
  t.equal(b.answers.length, 1, 'release probes at once (no poll wait)');
  await b.answer({ 0: idle, 1: busy });
  t.notOk(m.freeKeys().has('nvidia:1'), 'a process left behind keeps it busy');
});

t.test('errors are logged on change and on recovery, not every poll', async (t) => {
  const { b, m, logs } = await started();
  t.teardown(() => m.stop());
  const err = { status: 'unknown' as const, error: 'nvmlDeviceGetComputeRunningProcesses: Unknown Error (999)' };
  for (let i = 0; i < 3; i++) {
    (m as any).probeBackend(b);
    await b.answer({ 0: err, 1: idle });
  }
  (m as any).probeBackend(b);
  await b.answer({ 0: idle, 1: idle });
  t.same(logs, ['device nv:0 unknown: nvmlDeviceGetComputeRunningProcesses: Unknown Error (999)', 'device nv:0 recovered: idle']);
});

t.test('a probe that rejects, or omits a device, makes it unknown', async (t) => {
  const b = new Scripted();
  b.probe = () => Promise.reject(new Error('boom'));
  const m = new DeviceManager([b], () => undefined, () => undefined);
  await m.start();
  m.stop();
  t.same(m.views().map((v) => [v.status, v.monitoring_error]), [['unknown', 'boom'], ['unknown', 'boom']]);
  t.ok(b.closed);
});

t.test('a busy device keeps the pids its probe named, out of the views; new pids are a change', async (t) => {
  const { b, m, changes } = await started();
  t.teardown(() => m.stop());
  (m as any).probeBackend(b);
  await b.answer({ 0: { status: 'busy', pids: [4242] }, 1: busy });
  t.same(m.busyPids(dev(0)), [4242]);
  t.equal(m.busyPids(dev(1)), undefined, 'busy, the library named no process');
  t.same(m.views()[0], { device: dev(0), job: null, status: 'busy', nodes: [] }, 'xinfo shows no pids');
  const before = changes();
  (m as any).probeBackend(b);
  await b.answer({ 0: { status: 'busy', pids: [4242] }, 1: busy });
  t.equal(changes(), before, 'the same pids again: no change');
  (m as any).probeBackend(b);
  await b.answer({ 0: { status: 'busy', pids: [4242, 4243] }, 1: busy });
  t.equal(changes(), before + 1, 'other pids: the scheduler is told (the reason names them)');
  t.same(m.busyPids(dev(0)), [4242, 4243]);
  (m as any).probeBackend(b);
  await b.answer({ 0: idle, 1: busy });
  t.equal(m.busyPids(dev(0)), undefined, 'idle again: no pids');
});
