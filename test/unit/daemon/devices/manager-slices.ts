// DeviceManager's slices (docs/behaviour.md §25.2): a sliced card is `shared` with its slices, never
// free for whole-device jobs, offered to slices with its room while idle or busy, and whole
// again (after a re-probe) once its last slice ends.
import t from 'tap';
import type { Device } from '@xlurm/protocol';
import type { Backend, DeviceReading, ProbeResult } from '../../../../packages/daemon/src/devices/backend';
import { DeviceManager } from '../../../../packages/daemon/src/devices/manager';
import { waitFor } from '../../../helpers/wait';

const G = 1024 ** 3;
const dev = (id: number): Device => ({ kind: 'nvidia', id, name: 'Fake', visible: `GPU-${id}`, npu: null, chip: null });

class Fixed implements Backend {
  readonly kind = 'nvidia' as const;
  readonly devices = [dev(0), dev(1), dev(2)];
  status: Record<number, ProbeResult> = { 0: { status: 'idle' }, 1: { status: 'idle' }, 2: { status: 'unknown', error: 'x' } };
  mem = new Map<number, DeviceReading>([[0, { memoryTotal: 16 * G, memoryFree: 16 * G }], [1, { memoryTotal: 16 * G, memoryFree: 10 * G }], [2, { memoryTotal: 16 * G, memoryFree: 16 * G }]]);
  probes = 0;
  async probe(ids: readonly number[]): Promise<Map<number, ProbeResult>> { this.probes++; return new Map(ids.map((id) => [id, this.status[id]!])); }
  readings(): ReadonlyMap<number, DeviceReading> { return this.mem; }
  close(): void {}
}

t.test('slices: shared in views, not free, room offered; whole again after the last slice and a probe', async (t) => {
  const b = new Fixed();
  const m = new DeviceManager([b], () => {}, () => {});
  await m.start();
  t.teardown(() => m.stop());
  const kinds = new Set(['nvidia'] as const);
  t.same([...m.sliceCards(kinds).keys()], ['nvidia:0', 'nvidia:1'], 'an unknown card takes no slice');
  m.allocate(5, [dev(0)], { mem: 4 * G, compute: 30 });
  m.allocate(6, [dev(0)], { mem: 2 * G, compute: 20 });
  m.allocate(7, [dev(1)]); // whole
  t.notOk(m.freeKeys().has('nvidia:0'), 'a sliced card is not free for whole jobs');
  const v = m.views();
  t.equal(v[0]!.status, 'shared');
  t.same(v[0]!.slices, [{ job: 5, mem: 4 * G, compute: 30 }, { job: 6, mem: 2 * G, compute: 20 }]);
  t.equal(v[0]!.job, null);
  t.equal(v[1]!.status, 'allocated');
  t.equal(v[1]!.slices, undefined);
  // Slices allocated since the latest probe are not in the library's free figure yet: counted there too.
  t.same(m.sliceCards(kinds).get('nvidia:0'), { total: 16 * G, free: 10 * G, sliced: 6 * G, compute: 50, slices: 2 });
  t.notOk(m.sliceCards(kinds).has('nvidia:1'), 'a card held whole takes no slice');
  // Its own slices' processes make the card busy; it still takes slices.
  b.status[0] = { status: 'busy', pids: [4242] };
  m.release([dev(1)], 7);
  await waitFor(async () => m.views()[0]!.status === 'shared' && m.sliceCards(kinds).has('nvidia:1'), { what: 'nvidia:1 re-probed' });
  t.same(m.sliceCards(kinds).get('nvidia:0'), { total: 16 * G, free: 16 * G, sliced: 6 * G, compute: 50, slices: 2 }, 'a probe since: its own figure');
  t.same(m.sliceCards(kinds).get('nvidia:1'), { total: 16 * G, free: 10 * G, sliced: 0, compute: 0, slices: 0 }, 'foreign memory counts');
  m.release([dev(0)], 5);
  t.equal(m.views()[0]!.status, 'shared', 'still shared while a slice runs');
  t.same(m.slicesOf(dev(0)).map((s) => s.job), [6]);
  b.status[0] = { status: 'idle' };
  const before = b.probes;
  m.release([dev(0)], 6);
  await waitFor(async () => m.freeKeys().has('nvidia:0'), { what: 'nvidia:0 re-probed' });
  t.ok(b.probes > before, 're-probed once the last slice ended');
  t.equal(m.views()[0]!.status, 'idle');
  t.ok(m.freeKeys().has('nvidia:0'), 'whole again');
  t.equal(m.memoryTotal(dev(0)), 16 * G);
  t.same(m.sliceCards(new Set()), new Map(), 'sharing off: no card');
});
