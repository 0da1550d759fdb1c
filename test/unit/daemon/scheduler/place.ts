// The place step: which devices a job gets, whether the host can ever hold a
// request, and the Resources / DevicesUnavailable reasons of a job that gets none.
import t from 'tap';
import type { Device, JobRequest } from '@xlurm/protocol';
import {
  affinityOf, checkPlaceable, deviceKey, deviceLabel, explainPlace, formatIds, makeTopology, place, poolsWithIds,
  type DeviceBlock, type DeviceSituation, type GroupAffinity,
} from '../../../../packages/daemon/src/scheduler/place';

const dev = (kind: Device['kind'], id: number): Device => ({ kind, id, name: `${kind} ${id}`, visible: `${kind}-${id}`, npu: null, chip: null });
const inv = [dev('nvidia', 0), dev('nvidia', 1), dev('nvidia', 2), dev('nvidia', 3), dev('ascend', 0), dev('ascend', 1), dev('metax', 3)];
const req = (r: Partial<JobRequest> & { count: number }): JobRequest => ({ kind: null, timeLimit: null, ...r });

t.test('device keys and labels', async (t) => {
  t.equal(deviceKey(dev('ascend', 3)), 'ascend:3');
  t.equal(deviceLabel(dev('ascend', 3)), 'asc:3');
  t.equal(deviceLabel(dev('nvidia', 0)), 'nv:0');
});

t.test('placement takes the first free devices of the first vendor that fits, never mixing', async (t) => {
  t.same(place(req({ count: 2 }), inv, () => true)!.map(deviceKey), ['nvidia:0', 'nvidia:1']);
  t.same(place(req({ count: 2 }), inv, (d) => !(d.kind === 'nvidia' && d.id < 3))!.map(deviceKey), ['ascend:0', 'ascend:1']);
  t.equal(place(req({ count: 3 }), inv, (d) => d.kind !== 'nvidia' || d.id > 1), null, 'no mixing of vendors');
  t.same(place(req({ count: 1, kind: 'ascend' }), inv, () => true)!.map(deviceKey), ['ascend:0']);
  t.same(place(req({ count: 0 }), inv, () => false), []);
  t.equal(place(req({ count: 5 }), inv, () => true), null);
});

t.test('-i takes exactly the ids in the given order, within one pool', async (t) => {
  t.same(place(req({ count: 2, deviceIds: [3, 2] }), inv, () => true)!.map(deviceKey), ['nvidia:3', 'nvidia:2']);
  t.equal(place(req({ count: 2, deviceIds: [3, 2] }), inv, (d) => d.id !== 2), null, 'waits for every id');
  t.same(place(req({ count: 1, kind: 'metax', deviceIds: [3] }), inv, () => true)!.map(deviceKey), ['metax:3']);
  t.equal(place(req({ count: 1, kind: 'ascend', deviceIds: [3] }), inv, () => true), null);
});

t.test('pools holding every id of a -i list', async (t) => {
  t.same(poolsWithIds([3], inv), ['nvidia', 'metax']);
  t.same(poolsWithIds([0, 1], inv), ['nvidia', 'ascend']);
  t.same(poolsWithIds([2], inv), ['nvidia']);
  t.same(poolsWithIds([9], inv), []);
});

t.test('the submission checks that need the inventory', async (t) => {
  const all = () => true;
  t.equal(checkPlaceable(req({ count: 0 }), inv, () => false), null, 'a CPU-only job always fits');
  t.equal(checkPlaceable(req({ count: 4 }), inv, all), null);
  t.same(checkPlaceable(req({ count: 5 }), inv, all),
    { code: 'INFEASIBLE', message: 'requested 5 device(s), but no matching pool has enough devices' });
  t.same(checkPlaceable(req({ count: 4 }), inv, (d) => d.id !== 0),
    { code: 'INFEASIBLE', message: 'requested 4 device(s), but no matching pool has enough devices' }, 'excluded devices do not count');
  t.same(checkPlaceable(req({ count: 1, deviceIds: [3] }), inv, all), {
    code: 'INVALID_ARGUMENT', message: 'device ID 3 exists in several vendors (nv, mx); choose one with --device, e.g. --device nv',
  });
  t.same(checkPlaceable(req({ count: 2, deviceIds: [0, 1] }), inv, all), {
    code: 'INVALID_ARGUMENT', message: 'device IDs 0,1 exist in several vendors (nv, asc); choose one with --device, e.g. --device nv',
  });
  t.equal(checkPlaceable(req({ count: 1, kind: 'metax', deviceIds: [3] }), inv, all), null, '--device resolves it');
  t.same(checkPlaceable(req({ count: 1, kind: 'ascend', deviceIds: [3] }), inv, all),
    { code: 'INFEASIBLE', message: 'requested 1 device(s), but no matching pool has enough devices' });
});

/** A situation: `free` devices by key, `blocked` by key. */
const sit = (free: string[], blocked: Array<[string, DeviceBlock]> = [], inventory: Device[] = inv): DeviceSituation =>
  ({ inventory, free: new Set(free), blocked: new Map(blocked) });

t.test('a request that fits has no reason', async (t) => {
  t.equal(explainPlace(req({ count: 0 }), sit([])), null);
  t.equal(explainPlace(req({ count: 1 }), sit(['nvidia:2'])), null);
  t.equal(explainPlace(req({ count: 2, deviceIds: [1, 0] }), sit(['nvidia:0', 'nvidia:1'])), null);
});

t.test('Resources names each device it may use that is not free, and why', async (t) => {
  const two = [dev('nvidia', 0), dev('nvidia', 1)];
  t.same(explainPlace(req({ count: 2 }), sit([], [['nvidia:0', { state: 'held', job: 12, owner: 'alice' }], ['nvidia:1', { state: 'busy' }]], two)), {
    code: 'Resources', message: 'needs 2 nv devices: nv:0 held by job 12 (alice), nv:1 busy (not started by xlurm)',
  });
  t.same(explainPlace(req({ count: 1 }), sit([], [['nvidia:0', { state: 'held', job: 3 }], ['nvidia:1', { state: 'settling' }]], two)), {
    code: 'Resources', message: 'needs 1 nv device: nv:0 held by job 3, nv:1 released, not yet probed again',
  }, 'a holder whose owner is not known; a device being probed again');
  t.same(explainPlace(req({ count: 2 }), sit(['nvidia:1'], [['nvidia:0', { state: 'unknown' }]], two)), {
    code: 'Resources', message: 'needs 2 nv devices: nv:0 state unknown, nv:1 free',
  }, 'a free device counts as available: not DevicesUnavailable');
  t.same(explainPlace(req({ count: 2 }), sit([], [], two)), { code: 'Resources', message: 'needs 2 nv devices: nv:0,nv:1 not free' },
    'devices without a known cause read as not free');
  const four = inv.slice(0, 4);
  const byJob: Array<[string, DeviceBlock]> = [
    ['nvidia:0', { state: 'held', job: 7, owner: 'bob' }], ['nvidia:1', { state: 'unhealthy' }],
    ['nvidia:2', { state: 'held', job: 7, owner: 'bob' }], ['nvidia:3', { state: 'excluded' }],
  ];
  t.same(explainPlace(req({ count: 2 }), sit([], byJob, four)), {
    code: 'Resources', message: 'needs 2 nv devices: nv:0,nv:2 held by job 7 (bob), nv:1 unhealthy, nv:3 excluded by the administrator',
  }, 'devices grouped by what blocks them, in inventory order');
});

t.test('the pools a request could use are named; other vendors are not', async (t) => {
  const blocked: Array<[string, DeviceBlock]> = [
    ['nvidia:0', { state: 'held', job: 1, owner: 'a' }], ['nvidia:1', { state: 'held', job: 1, owner: 'a' }],
    ['nvidia:2', { state: 'busy' }], ['nvidia:3', { state: 'busy' }],
    ['ascend:0', { state: 'busy' }], ['ascend:1', { state: 'unknown' }], ['metax:3', { state: 'busy' }],
  ];
  t.same(explainPlace(req({ count: 3 }), sit([], blocked)), {
    code: 'Resources', message: 'needs 3 nv devices: nv:0,nv:1 held by job 1 (a), nv:2,nv:3 busy (not started by xlurm)',
  }, 'only nvidia has 3 devices');
  t.same(explainPlace(req({ count: 2 }), sit([], blocked)), {
    code: 'Resources',
    message: 'needs 2 devices of one vendor: nv:0,nv:1 held by job 1 (a), nv:2,nv:3,asc:0 busy (not started by xlurm), asc:1 state unknown',
  });
  t.same(explainPlace(req({ count: 1, kind: 'ascend' }), sit([], blocked)), {
    code: 'Resources', message: 'needs 1 asc device: asc:0 busy (not started by xlurm), asc:1 state unknown',
  });
  t.same(explainPlace(req({ count: 2, excludeIds: [0] }), sit([], blocked)), {
    code: 'Resources', message: 'needs 2 nv devices: nv:1 held by job 1 (a), nv:2,nv:3 busy (not started by xlurm)',
  }, '-x: the excluded ids are not among those it may use');
});

t.test('a busy device names the foreign processes on it when the library reported them', async (t) => {
  const three = [dev('nvidia', 0), dev('nvidia', 1), dev('nvidia', 2)];
  t.same(explainPlace(req({ count: 2 }), sit([], [['nvidia:0', { state: 'held', job: 12, owner: 'alice' }], ['nvidia:1', { state: 'busy', pids: [4242] }]], three.slice(0, 2))), {
    code: 'Resources', message: 'needs 2 nv devices: nv:0 held by job 12 (alice), nv:1 busy (pid 4242, not started by xlurm)',
  }, 'one pid');
  t.same(explainPlace(req({ count: 1, deviceIds: [1] }), sit([], [['nvidia:1', { state: 'busy', pids: [4242, 4243] }]], three)), {
    code: 'Resources', message: 'needs nv:1: nv:1 busy (pids 4242,4243, not started by xlurm)',
  }, 'several pids');
  t.same(explainPlace(req({ count: 3 }), sit([], [
    ['nvidia:0', { state: 'busy', pids: [7] }], ['nvidia:1', { state: 'busy', pids: [7] }], ['nvidia:2', { state: 'busy', pids: [] }],
  ], three)), {
    code: 'Resources', message: 'needs 3 nv devices: nv:0,nv:1 busy (pid 7, not started by xlurm), nv:2 busy (not started by xlurm)',
  }, 'devices busy with the same processes are named together; no pids reads as before');
});

t.test('-i names exactly its devices', async (t) => {
  t.same(explainPlace(req({ count: 2, deviceIds: [2, 0] }), sit(['nvidia:0'], [['nvidia:2', { state: 'held', job: 4, owner: 'carol' }]])), {
    code: 'Resources', message: 'needs nv:2,nv:0: nv:2 held by job 4 (carol), nv:0 free',
  });
  t.same(explainPlace(req({ count: 1, kind: 'metax', deviceIds: [3] }), sit([], [['metax:3', { state: 'unhealthy' }]])), {
    code: 'DevicesUnavailable', message: 'needs mx:3: mx:3 unhealthy',
  });
  t.same(explainPlace(req({ count: 1, deviceIds: [9] }), sit([])), { code: 'DevicesUnavailable', message: 'no pool has device ID 9' });
  t.same(explainPlace(req({ count: 2, kind: 'ascend', deviceIds: [0, 5] }), sit([])),
    { code: 'DevicesUnavailable', message: 'no asc pool has device IDs 0,5' });
  t.same(explainPlace(req({ count: 1, deviceIds: [1], excludeIds: [1] }), sit(['nvidia:1'])),
    { code: 'DevicesUnavailable', message: 'needs nv:1, some of them excluded for this job' });
});

t.test('DevicesUnavailable: every device it may use is unknown, unhealthy or excluded', async (t) => {
  const two = [dev('nvidia', 0), dev('nvidia', 1)];
  t.same(explainPlace(req({ count: 1 }), sit([], [['nvidia:0', { state: 'excluded' }], ['nvidia:1', { state: 'unknown' }]], two)), {
    code: 'DevicesUnavailable', message: 'needs 1 nv device: nv:0 excluded by the administrator, nv:1 state unknown',
  });
  t.same(explainPlace(req({ count: 2 }), sit([], [['nvidia:0', { state: 'unhealthy' }], ['nvidia:1', { state: 'unhealthy' }]], two)), {
    code: 'DevicesUnavailable', message: 'needs 2 nv devices: nv:0,nv:1 unhealthy',
  });
  t.same(explainPlace(req({ count: 3 }), sit([], [], two)), { code: 'DevicesUnavailable', message: 'needs 3 devices; no pool has that many' },
    'more than any pool holds (a queue kept from a larger host)');
  t.same(explainPlace(req({ count: 2, kind: 'nvidia' }), sit([], [], two)), { code: 'Resources', message: 'needs 2 nv devices: nv:0,nv:1 not free' });
  t.same(explainPlace(req({ count: 2, excludeIds: [1] }), sit([], [], two)),
    { code: 'DevicesUnavailable', message: 'needs 2 devices; no pool has that many it may use' });
  t.same(explainPlace(req({ count: 3, kind: 'ascend' }), sit([])),
    { code: 'DevicesUnavailable', message: 'needs 3 asc devices; no pool has that many' });
});

// Device groups and affinity (docs/behaviour.md §21.5).
const nv8 = Array.from({ length: 8 }, (_, i) => dev('nvidia', i));
const groups = (...gs: number[][]) => new Map([['nvidia' as const, gs]]);
const topo = (affinity: GroupAffinity, g = groups([0, 1, 2, 3], [4, 5, 6, 7])) => makeTopology(affinity, g);
const freeOnly = (...ids: number[]) => (d: Device) => ids.includes(d.id);
const ids = (ds: Device[] | null) => ds && ds.map((d) => d.id);

t.test('formatIds writes ids as ranges', async (t) => {
  t.equal(formatIds([0, 1, 2, 3]), '0-3');
  t.equal(formatIds([5, 0, 2, 3]), '0,2-3,5');
  t.equal(formatIds([7]), '7');
});

t.test('prefer: all devices from one group when one can hold the job, best fit', async (t) => {
  // First fit would take 2,3,4 (across groups); group 4-7 holds 3.
  t.same(ids(place(req({ count: 3 }), nv8, freeOnly(2, 3, 4, 5, 6), topo('prefer'))), [4, 5, 6]);
  // Both groups can hold 2: the one with fewer free (0-3: 3 free) keeps 4-7's 4 whole.
  t.same(ids(place(req({ count: 2 }), nv8, freeOnly(1, 2, 3, 4, 5, 6, 7), topo('prefer'))), [1, 2]);
  t.same(ids(place(req({ count: 2 }), nv8, freeOnly(0, 1, 2, 3, 5, 6), topo('prefer'))), [5, 6]);
  // Ties: the first group.
  t.same(ids(place(req({ count: 2 }), nv8, () => true, topo('prefer'))), [0, 1]);
  // No group can: any devices (first fit).
  t.same(ids(place(req({ count: 4 }), nv8, freeOnly(2, 3, 4, 5), topo('prefer'))), [2, 3, 4, 5]);
  // One device: first fit, groups do not matter.
  t.same(ids(place(req({ count: 1 }), nv8, freeOnly(3, 4), topo('prefer'))), [3]);
  // Unknown topology (no groups for the vendor): first fit.
  t.same(ids(place(req({ count: 3 }), nv8, freeOnly(2, 3, 4, 5, 6), makeTopology('prefer', new Map()))), [2, 3, 4]);
});

t.test('require: all devices from one group, else nothing', async (t) => {
  t.equal(place(req({ count: 4 }), nv8, freeOnly(2, 3, 4, 5, 6), topo('require')), null);
  t.same(ids(place(req({ count: 3 }), nv8, freeOnly(2, 3, 4, 5, 6), topo('require'))), [4, 5, 6]);
  t.equal(place(req({ count: 2 }), nv8, () => true, makeTopology('require', new Map())), null, 'unknown topology is not fully connected');
  t.same(ids(place(req({ count: 1 }), nv8, freeOnly(3), topo('require'))), [3], 'one device needs no group');
  t.same(ids(place(req({ count: 2, deviceIds: [1, 0] }), nv8, () => true, topo('require'))), [1, 0], '-i is checked at submission');
  // Devices in no declared group are not used under require.
  t.equal(place(req({ count: 2 }), nv8, freeOnly(6, 7), topo('require', groups([0, 1, 2, 3]))), null);
});

t.test('off, and the per-job overrides', async (t) => {
  t.same(ids(place(req({ count: 3 }), nv8, freeOnly(2, 3, 4, 5, 6), topo('off'))), [2, 3, 4]);
  t.same(ids(place(req({ count: 3, groupAffinity: 'off' }), nv8, freeOnly(2, 3, 4, 5, 6), topo('require'))), [2, 3, 4]);
  t.equal(place(req({ count: 4, groupAffinity: 'require' }), nv8, freeOnly(2, 3, 4, 5, 6), topo('prefer')), null);
  t.equal(affinityOf(req({ count: 2 }), undefined), 'off', 'no topology: first fit');
  t.equal(affinityOf(req({ count: 2 }), topo('prefer')), 'prefer');
  t.equal(affinityOf(req({ count: 2, groupAffinity: 'require' }), topo('off')), 'require');
});

t.test('require: the submission refusals name the groups', async (t) => {
  const all = () => true;
  t.equal(checkPlaceable(req({ count: 2, deviceIds: [1, 2] }), nv8, all, topo('require')), null);
  t.same(checkPlaceable(req({ count: 2, deviceIds: [1, 2] }), nv8, all, topo('require', groups([0, 1], [2, 3]))),
    { code: 'INVALID_ARGUMENT', message: 'device ids 1,2 span groups 0-1 and 2-3 (group affinity is required)' });
  t.same(checkPlaceable(req({ count: 3, deviceIds: [0, 2, 5] }), nv8, all, topo('require', groups([0, 1], [2, 3]))),
    { code: 'INVALID_ARGUMENT', message: 'device ids 0,2,5 span groups 0-1, 2-3 and 5 (in no group) (group affinity is required)' });
  t.equal(checkPlaceable(req({ count: 2, deviceIds: [1, 2] }), nv8, all, topo('prefer', groups([0, 1], [2, 3]))), null, 'prefer: allowed');
  t.same(checkPlaceable(req({ count: 5 }), nv8, all, topo('require')), {
    code: 'INFEASIBLE', message: 'requested 5 devices within one group, but the largest group of nv (0-3) has 4 devices (group affinity is required)',
  });
  t.same(checkPlaceable(req({ count: 4 }), nv8, (d) => d.id !== 0 && d.id !== 5, topo('require')), {
    code: 'INFEASIBLE', message: 'requested 4 devices within one group, but the largest group of nv (0-3) has 3 devices it may use (group affinity is required)',
  });
  t.equal(checkPlaceable(req({ count: 5, groupAffinity: 'off' }), nv8, all, topo('require')), null, '--ignore-group-affinity');
  t.equal(checkPlaceable(req({ count: 5 }), nv8, all, topo('prefer')), null);
  const unknown = { code: 'INFEASIBLE', message: 'device topology of nv is unknown; the administrator must declare [devices.groups]' };
  t.same(checkPlaceable(req({ count: 2 }), nv8, all, makeTopology('require', new Map())), unknown);
  t.same(checkPlaceable(req({ count: 2, deviceIds: [0, 1] }), nv8, all, makeTopology('require', new Map())), unknown);
  t.same(checkPlaceable(req({ count: 2, groupAffinity: 'require' }), nv8, all, makeTopology('prefer', new Map())), unknown);
  t.equal(checkPlaceable(req({ count: 1 }), nv8, all, makeTopology('require', new Map())), null, 'one device needs no topology');
  t.equal(checkPlaceable(req({ count: 9 }), nv8, all, topo('require'))!.message,
    'requested 9 device(s), but no matching pool has enough devices', 'the pool check comes first');
});

t.test('Topology: enough free devices, but not within one group', async (t) => {
  const s = (affinity: GroupAffinity, free: number[]): DeviceSituation => ({
    inventory: nv8, free: new Set(free.map((i) => `nvidia:${i}`)),
    blocked: new Map(nv8.filter((d) => !free.includes(d.id)).map((d) => [deviceKey(d), { state: 'held', job: 7 } as DeviceBlock])),
    topology: topo(affinity, groups([0, 1, 2, 3], [4, 5, 6, 7])),
  });
  t.same(explainPlace(req({ count: 3 }), s('require', [2, 3, 4, 5])), {
    code: 'Topology', message: 'needs 3 nv devices within one group: group 0-3 has nv:2,nv:3 free, group 4-7 has nv:4,nv:5 free',
  });
  t.same(explainPlace(req({ count: 3 }), s('require', [2, 3, 4])), {
    code: 'Topology', message: 'needs 3 nv devices within one group: group 0-3 has nv:2,nv:3 free, group 4-7 has nv:4 free',
  });
  t.equal(explainPlace(req({ count: 3 }), s('require', [2, 3]))!.code, 'Resources', 'too few free: Resources');
  t.equal(explainPlace(req({ count: 3 }), s('prefer', [2, 3, 4, 5])), null, 'prefer places it');
  t.same(explainPlace(req({ count: 5 }), s('require', [0, 1, 2, 4, 5])), {
    code: 'Topology', message: 'needs 5 nv devices within one group: group 0-3 has nv:0,nv:1,nv:2 free, group 4-7 has nv:4,nv:5 free',
  });
});
