// Per-job exclusion (`-x`, Submission.exclude_ids) in place(), the submission's feasibility check and a pass.
import t from 'tap';
import type { Device, JobRequest } from '@xlurm/protocol';
import { checkPlaceable, deviceKey, place } from '../../../../packages/daemon/src/scheduler/place';
import { schedule } from '../../../../packages/daemon/src/scheduler/schedule';

const dev = (kind: Device['kind'], id: number): Device => ({ kind, id, name: `${kind} ${id}`, visible: `${kind}-${id}`, npu: null, chip: null });
const inv = [dev('nvidia', 0), dev('nvidia', 1), dev('nvidia', 2), dev('ascend', 0), dev('ascend', 1)];
const keys = (ds: Device[] | null) => ds && ds.map(deviceKey);
const allocate = (r: Omit<JobRequest, 'timeLimit'>, i: readonly Device[], usable: (d: Device) => boolean) => place({ ...r, timeLimit: null }, i, usable);
const placeable = (r: Omit<JobRequest, 'timeLimit'>, i: readonly Device[], enabled: (d: Device) => boolean) =>
  checkPlaceable({ ...r, timeLimit: null }, i, enabled) === null;

t.test('excluded ids are skipped in every vendor', async (t) => {
  t.same(keys(allocate({ count: 2, kind: null, excludeIds: [0] }, inv, () => true)), ['nvidia:1', 'nvidia:2']);
  t.same(keys(allocate({ count: 2, kind: null, excludeIds: [1] }, inv, () => true)), ['nvidia:0', 'nvidia:2']);
  t.same(keys(allocate({ count: 2, kind: null, excludeIds: [0, 2] }, inv, () => true)), null,
    'no vendor has two devices left (ascend:0 is excluded too)');
  t.same(keys(allocate({ count: 1, kind: 'ascend', excludeIds: [0] }, inv, () => true)), ['ascend:1']);
  t.same(keys(allocate({ count: 1, kind: null, excludeIds: [] }, inv, () => true)), ['nvidia:0']);
  t.same(keys(allocate({ count: 0, kind: null, excludeIds: [0, 1, 2] }, inv, () => false)), []);
  t.same(keys(allocate({ count: 1, kind: null, deviceIds: [1], excludeIds: [1] }, inv, () => true)), null,
    'an excluded id is never allocated, even if named');
});

t.test('feasibility honours the exclusion', async (t) => {
  t.ok(placeable({ count: 2, kind: 'nvidia', excludeIds: [1] }, inv, () => true));
  t.notOk(placeable({ count: 3, kind: 'nvidia', excludeIds: [1] }, inv, () => true));
  t.notOk(placeable({ count: 2, kind: 'nvidia', excludeIds: [1] }, inv, (d) => d.id !== 0), 'with the enabled pool');
});

t.test('a pass gives an excluding job other devices, or lets it wait', async (t) => {
  const free = new Set(['nvidia:0', 'nvidia:2']);
  const d = schedule({
    pending: [
      { id: 1, count: 1, kind: 'nvidia', excludeIds: [0, 2], timeLimit: null }, { id: 2, count: 1, kind: null, excludeIds: [0], timeLimit: null },
      { id: 3, count: 1, kind: null, timeLimit: null },
    ],
    running: 0, maxRunning: 10, inventory: inv, free,
  }).decisions;
  t.same(d.map((x) => [x.id, keys(x.devices)]), [[2, ['nvidia:2']], [3, ['nvidia:0']]]);
});
