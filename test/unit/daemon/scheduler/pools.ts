// scheduler/pools.ts: the figures of `xinfo --pools` from the device views and the policy.
import t from 'tap';
import type { DeviceKind, DeviceStatus, DeviceView } from '@xlurm/protocol';
import { pools } from '../../../../packages/daemon/src/scheduler/pools';

const view = (kind: DeviceKind, id: number, status: DeviceStatus, job: number | null = null): DeviceView => ({
  device: { kind, id, name: 'Fake', visible: `${kind}-${id}`, npu: null, chip: null }, job, status, nodes: [],
});
const freeOf = (views: DeviceView[]) => new Set(views.filter((v) => v.status === 'idle').map((v) => `${v.device.kind}:${v.device.id}`));

// 8 nv devices: 0 held, 3 busy by a foreign process, 4 excluded, 7 unknown; 1,2,5,6 free.
const nv: DeviceView[] = [
  view('nvidia', 0, 'allocated', 12), view('nvidia', 1, 'idle'), view('nvidia', 2, 'idle'), view('nvidia', 3, 'busy'),
  view('nvidia', 4, 'disabled'), view('nvidia', 5, 'idle'), view('nvidia', 6, 'idle'), view('nvidia', 7, 'unknown'),
];
const groups = new Map([['nvidia', [[0, 1, 2, 3], [4, 5, 6, 7]]]]);

t.test('counts, and without groups: every usable device, topology unknown', async (t) => {
  t.same(pools({ views: nv, free: freeOf(nv), kinds: ['nvidia'], slotFree: true }), [{
    kind: 'nvidia', label: 'nv', total: 8, free: 4, excluded: 1, unknown: 1, groups: [],
    largest_now: 4, largest_ever: 7, reservation: null,
  }]);
});

t.test('groups with their free devices; require limits the largest requests to one group', async (t) => {
  const [p] = pools({ views: nv, free: freeOf(nv), kinds: ['nvidia'], groups, affinity: 'require', slotFree: true });
  t.same(p!.groups, [{ devices: [0, 1, 2, 3], free: [1, 2] }, { devices: [4, 5, 6, 7], free: [5, 6] }]);
  t.equal(p!.largest_now, 2);
  t.equal(p!.largest_ever, 4, 'group 0-3: every device usable (held and busy ones free up); 4-7 has one excluded');
  const prefer = pools({ views: nv, free: freeOf(nv), kinds: ['nvidia'], groups, affinity: 'prefer', slotFree: true })[0]!;
  t.equal(prefer.largest_now, 4, 'prefer: any devices when no group can hold it');
  t.equal(prefer.largest_ever, 7);
});

t.test('require with unknown topology: only single devices fit', async (t) => {
  const [p] = pools({ views: nv, free: freeOf(nv), kinds: ['nvidia'], affinity: 'require', slotFree: true });
  t.equal(p!.largest_now, 1);
  t.equal(p!.largest_ever, 1);
});

t.test('no slot free: nothing starts now; a reservation holds its devices back', async (t) => {
  t.equal(pools({ views: nv, free: freeOf(nv), kinds: ['nvidia'], slotFree: false })[0]!.largest_now, 0);
  const [p] = pools({
    views: nv, free: freeOf(nv), kinds: ['nvidia'], slotFree: true,
    reservations: new Map([['nvidia', { job: 9, devices: [1, 2], expectedStart: null }]]),
  });
  t.equal(p!.largest_now, 2, 'only 5 and 6 are free and unreserved');
  t.same(p!.reservation, { job: 9, devices: [1, 2], expected_start: null });
});

t.test('one element per vendor in discovery order, key order as documented', async (t) => {
  const views = [view('ascend', 0, 'idle'), view('nvidia', 0, 'idle')];
  const out = pools({ views, free: freeOf(views), kinds: ['nvidia', 'ascend', 'metax'], slotFree: true });
  t.same(out.map((p) => p.label), ['nv', 'asc', 'mx']);
  t.same(Object.keys(out[0]!), ['kind', 'label', 'total', 'free', 'excluded', 'unknown', 'groups', 'largest_now', 'largest_ever', 'reservation']);
  t.match(out[2], { total: 0, free: 0, largest_now: 0, largest_ever: 0 });
});
