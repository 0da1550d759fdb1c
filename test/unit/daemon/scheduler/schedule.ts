import t from 'tap';
import type { Device } from '@xlurm/protocol';
import { allocate, deviceKey } from '../../../../packages/daemon/src/scheduler/allocate';
import { schedule } from '../../../../packages/daemon/src/scheduler/schedule';

const dev = (kind: Device['kind'], id: number): Device => ({ kind, id, name: `${kind} ${id}`, visible: `${kind}-${id}`, npu: null, chip: null });
const inv = [dev('nvidia', 0), dev('nvidia', 1), dev('nvidia', 2), dev('nvidia', 3), dev('ascend', 0), dev('ascend', 1), dev('metax', 3)];
const allFree = new Set(inv.map(deviceKey));

t.test('allocation takes the first free devices of the first vendor that fits, never mixing', async (t) => {
  t.same(allocate({ count: 2, kind: null }, inv, () => true)!.map(deviceKey), ['nvidia:0', 'nvidia:1']);
  t.same(allocate({ count: 2, kind: null }, inv, (d) => !(d.kind === 'nvidia' && d.id < 3))!.map(deviceKey), ['ascend:0', 'ascend:1']);
  t.equal(allocate({ count: 3, kind: null }, inv, (d) => d.kind !== 'nvidia' || d.id > 1), null, 'no mixing of vendors');
  t.same(allocate({ count: 1, kind: 'ascend' }, inv, () => true)!.map(deviceKey), ['ascend:0']);
  t.same(allocate({ count: 0, kind: null }, inv, () => false), []);
  t.equal(allocate({ count: 5, kind: null }, inv, () => true), null);
});

t.test('-i takes exactly the ids in the given order, within one pool', async (t) => {
  t.same(allocate({ count: 2, kind: null, deviceIds: [3, 2] }, inv, () => true)!.map(deviceKey), ['nvidia:3', 'nvidia:2']);
  t.equal(allocate({ count: 2, kind: null, deviceIds: [3, 2] }, inv, (d) => d.id !== 2), null, 'waits for every id');
  t.same(allocate({ count: 1, kind: 'metax', deviceIds: [3] }, inv, () => true)!.map(deviceKey), ['metax:3']);
  t.equal(allocate({ count: 1, kind: 'ascend', deviceIds: [3] }, inv, () => true), null);
});

t.test('a pass respects max-running, submission order, and lets small jobs overtake a blocked one', async (t) => {
  const free = new Set(['nvidia:0', 'nvidia:1']);
  const d = schedule({
    pending: [{ id: 1, count: 4, kind: null }, { id: 2, count: 1, kind: null }, { id: 3, count: 0, kind: null }, { id: 4, count: 1, kind: null }, { id: 5, count: 1, kind: null }],
    running: 0, maxRunning: 10, inventory: inv, free,
  });
  t.same(d.map((x) => [x.id, x.devices.map(deviceKey)]), [[2, ['nvidia:0']], [3, []], [4, ['nvidia:1']]]);
  const limited = schedule({ pending: [{ id: 1, count: 0, kind: null }, { id: 2, count: 0, kind: null }], running: 1, maxRunning: 2, inventory: inv, free: allFree });
  t.same(limited.map((x) => x.id), [1]);
  t.same(schedule({ pending: [{ id: 1, count: 0, kind: null }], running: 2, maxRunning: 2, inventory: inv, free: allFree }), []);
});

t.test('a pass over 10k pending jobs with 8 devices stays linear', async (t) => {
  const gpus = Array.from({ length: 8 }, (_, i) => dev('nvidia', i));
  const pending = Array.from({ length: 10000 }, (_, i) => ({ id: i + 1, count: 1 + (i % 3), kind: null }));
  const d = schedule({ pending, running: 0, maxRunning: 32, inventory: gpus, free: new Set(gpus.map(deviceKey)) });
  t.ok(d.length > 0 && d.length <= 8);
  const used = d.flatMap((x) => x.devices.map(deviceKey));
  t.equal(new Set(used).size, used.length, 'no device twice');
});

t.test('jobs larger than any pool has free are skipped, per vendor, as devices are taken', async (t) => {
  // free: nvidia 0,1 and ascend 0,1,  metax 3
  const free = new Set(['nvidia:0', 'nvidia:1', 'ascend:0', 'ascend:1', 'metax:3']);
  const d = schedule({
    pending: [
      { id: 1, count: 3, kind: null },          // no pool has 3 free
      { id: 2, count: 2, kind: 'ascend' },      // ascend has 2
      { id: 3, count: 1, kind: 'ascend' },      // ascend now has 0
      { id: 4, count: 2, kind: null },          // nvidia still has 2
      { id: 5, count: 1, kind: null },          // only metax is left
      { id: 6, count: 2, kind: 'nvidia', deviceIds: [0, 1] }, // taken meanwhile
    ],
    running: 0, maxRunning: 10, inventory: inv, free,
  });
  t.same(d.map((x) => [x.id, x.devices.map(deviceKey)]), [[2, ['ascend:0', 'ascend:1']], [4, ['nvidia:0', 'nvidia:1']], [5, ['metax:3']]]);
});

t.test('a pass stops walking the queue once no device is free and no CPU-only job is left', async (t) => {
  const two = new Set(['nvidia:0', 'nvidia:1']);
  const counting = (jobs: Array<{ id: number; count: number; kind: null }>) => {
    let pulled = 0;
    return { pulled: () => pulled, iter: { *[Symbol.iterator]() { for (const j of jobs) { pulled++; yield j; } } } };
  };
  const gpuJobs = Array.from({ length: 1000 }, (_, i) => ({ id: i + 1, count: 1, kind: null }));
  const a = counting(gpuJobs);
  const d1 = schedule({ pending: a.iter, cpuOnlyPending: 0, running: 0, maxRunning: 32, inventory: inv, free: two });
  t.same(d1.map((d) => d.id), [1, 2]);
  t.equal(a.pulled(), 3, 'two started, the third shows nothing more can fit: the other 997 are not visited');

  const withCpu = [...gpuJobs, { id: 1001, count: 0, kind: null }];
  const b = counting(withCpu);
  const d2 = schedule({ pending: b.iter, cpuOnlyPending: 1, running: 0, maxRunning: 32, inventory: inv, free: two });
  t.same(d2.map((d) => d.id), [1, 2, 1001], 'a CPU-only job further down still starts');
  t.equal(b.pulled(), 1001);

  const c = counting(gpuJobs);
  schedule({ pending: c.iter, running: 0, maxRunning: 32, inventory: inv, free: two });
  t.equal(c.pulled(), 1000, 'without the count the whole queue is walked (it may hold CPU-only jobs)');
});
