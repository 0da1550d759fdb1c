// The reserve mode (docs/behaviour.md §21.3): which job reserves which devices, backfill, the kept slot, and their reasons.
import t from 'tap';
import type { Device } from '@xlurm/protocol';
import { deviceKey, makeTopology } from '../../../../packages/daemon/src/scheduler/place';
import { mayBackfill, reserveFor, type Hold } from '../../../../packages/daemon/src/scheduler/reserve';
import { schedule, type PendingJob, type SchedulerInput } from '../../../../packages/daemon/src/scheduler/schedule';

const dev = (kind: Device['kind'], id: number): Device => ({ kind, id, name: `${kind} ${id}`, visible: `${kind}-${id}`, npu: null, chip: null });
const nv = Array.from({ length: 4 }, (_, i) => dev('nvidia', i));
const job = (id: number, count: number, more: Partial<PendingJob> = {}): PendingJob => ({ id, count, kind: null, timeLimit: null, owner: 'bob', ...more });
const NOW = 1000;

/** nv:0 free; nv:1 held by job 100 until 1100, nv:2 by 101 until 1500, nv:3 by 102 without a limit. */
function input(pending: PendingJob[], more: Partial<SchedulerInput> = {}): SchedulerInput {
  const holds = new Map<string, Hold>([
    ['nvidia:1', { job: 100, owner: 'alice', end: 1100 }],
    ['nvidia:2', { job: 101, owner: 'alice', end: 1500 }],
    ['nvidia:3', { job: 102, owner: 'carol', end: null }],
  ]);
  const blocked = new Map([...holds].map(([k, h]) => [k, { state: 'held' as const, job: h.job, owner: h.owner! }]));
  return {
    pending, running: 3, maxRunning: 32, inventory: nv, free: new Set(['nvidia:0']), blocked,
    mode: 'reserve', reserveMinDevices: 2, holds, now: NOW, ...more,
  };
}

t.test('the first blocked job of at least reserve_min_devices reserves free devices first, then the soonest-ending held ones', async (t) => {
  const p = schedule(input([job(9, 2), job(10, 2), job(11, 1)]));
  t.equal(p.reservations.length, 1);
  const r = p.reservations[0]!;
  t.equal(r.job, 9, 'the first in the order, not a later one of the same size');
  t.same(r.devices.map(deviceKey), ['nvidia:0', 'nvidia:1'], 'nv:0 free, then nv:1 (ends at 1100, before nv:2)');
  t.equal(r.expectedStart, 1100);
  t.same(p.decisions, [], 'job 11 (no time limit) may not take the reserved free device');
  t.same(p.reasonOf(job(11, 1)), { code: 'Reservation', message: 'nv:0,nv:1 reserved for job 9 (bob, 2 devices)' });
  t.equal(p.reasonOf(job(9, 2))?.code, 'Resources', 'the reserving job waits for the held devices');
  t.match(p.reasonOf(job(9, 2))?.message, /nv:1 held by job 100 \(alice\)/);
});

t.test('holders without a limit come last, and make the expected start unknown', async (t) => {
  const p = schedule(input([job(9, 4)]));
  t.same(p.reservations[0]!.devices.map(deviceKey), ['nvidia:0', 'nvidia:1', 'nvidia:2', 'nvidia:3']);
  t.equal(p.reservations[0]!.expectedStart, null);
  const three = schedule(input([job(9, 3)]));
  t.same(three.reservations[0]!.devices.map(deviceKey), ['nvidia:0', 'nvidia:1', 'nvidia:2'], 'nv:3 (no limit) is avoided');
  t.equal(three.reservations[0]!.expectedStart, 1500, 'the latest end among its holders');
});

t.test('backfill: a job that ends by the expected start may use reserved devices; a longer or unlimited one may not', async (t) => {
  const short = schedule(input([job(9, 2), job(11, 1, { timeLimit: 100 })]));
  t.same(short.decisions.map((d) => [d.id, d.devices.map(deviceKey)]), [[11, ['nvidia:0']]], 'ends at 1100: backfilled');
  const long = schedule(input([job(9, 2), job(11, 1, { timeLimit: 101 })]));
  t.same(long.decisions, [], 'ends at 1101, after the expected start');
  t.equal(long.reasonOf(job(11, 1, { timeLimit: 101 }))?.code, 'Reservation');
  const unknown = schedule(input([job(9, 4), job(11, 1, { timeLimit: 1 })]));
  t.equal(unknown.reservations[0]!.expectedStart, null);
  t.same(unknown.decisions, [], 'unknown expected start: no backfill onto reserved devices');
});

t.test('unreserved devices stay usable by anyone', async (t) => {
  const five = [...nv, dev('nvidia', 4)];
  const p = schedule(input([job(9, 2), job(11, 1)], { inventory: five, free: new Set(['nvidia:0', 'nvidia:4']) }));
  // Free first: nv:0 and nv:4 are both free, so the reservation is exactly those and job 9... fits now.
  t.same(p.decisions.map((d) => d.id), [9], 'a job that fits is started, never reserved');
  const q = schedule(input([job(9, 3), job(11, 1)], { inventory: five, free: new Set(['nvidia:0', 'nvidia:4']) }));
  t.same(q.reservations[0]!.devices.map(deviceKey), ['nvidia:0', 'nvidia:1', 'nvidia:4']);
  t.same(q.decisions, [], 'every free device is reserved');
  const six = [...five, dev('nvidia', 5)];
  const r = schedule(input([job(9, 3), job(11, 1)], { inventory: six, free: new Set(['nvidia:0', 'nvidia:4', 'nvidia:5']) }));
  t.same(r.decisions.map((d) => d.id), [9]);
});

t.test('CPU-only jobs continue, but one max_running slot is kept for the reserving job', async (t) => {
  const p = schedule(input([job(9, 2), job(20, 0), job(21, 0), job(22, 0)], { running: 3, maxRunning: 6 }));
  t.same(p.decisions.map((d) => d.id), [20, 21], 'two of the three free slots; the third is kept');
  t.same(p.reasonOf(job(22, 0)), { code: 'MaxRunning', message: '5 jobs running (limit 6, 1 slot kept for reserving jobs)' });
});

t.test('an impossible request never reserves: busy or unknown devices are not waited for', async (t) => {
  const i = input([job(9, 2), job(11, 1)]);
  const holds = new Map(i.holds!);
  holds.delete('nvidia:1'); holds.delete('nvidia:2'); holds.delete('nvidia:3'); // busy by foreign processes
  const p = schedule({ ...i, holds });
  t.same(p.reservations, []);
  t.same(p.decisions.map((d) => d.id), [11], 'the small job takes the free device');
  const big = schedule(input([job(9, 5), job(11, 1)]));
  t.same(big.reservations, [], 'more than the pool has');
  t.same(big.decisions.map((d) => d.id), [11]);
});

t.test('below reserve_min_devices nobody reserves; greedy never does', async (t) => {
  t.same(schedule(input([job(9, 2), job(11, 1)], { reserveMinDevices: 3 })).decisions.map((d) => d.id), [11]);
  t.same(schedule(input([job(9, 2), job(11, 1)], { mode: 'greedy' })).reservations, []);
  t.same(schedule(input([job(9, 2), job(11, 1)], { mode: 'greedy' })).decisions.map((d) => d.id), [11]);
});

t.test('one reservation per vendor pool; a job of another pool reserves there', async (t) => {
  const inv = [...nv, dev('ascend', 0), dev('ascend', 1)];
  const i = input([job(9, 2, { kind: 'nvidia' }), job(10, 2, { kind: 'nvidia' }), job(12, 2, { kind: 'ascend' })], { inventory: inv });
  const holds = new Map(i.holds!);
  holds.set('ascend:0', { job: 103, end: 2000 }); holds.set('ascend:1', { job: 103, end: 2000 });
  const p = schedule({ ...i, holds });
  t.same(p.reservations.map((r) => [r.job, r.kind]), [[9, 'nvidia'], [12, 'ascend']]);
  t.equal(p.reasonOf(job(10, 2, { kind: 'nvidia' }))?.code, 'Resources', 'no room even without the reservation: its devices are held');
});

t.test('the reservation rule alone', async (t) => {
  const avail = (d: Device) => (d.id === 0 ? 'free' as const : { job: 100 + d.id, end: d.id === 3 ? null : 1000 + 100 * (4 - d.id) });
  // ends: nv:1 1300, nv:2 1200, nv:3 none
  const r = reserveFor({ id: 9 }, { count: 2, kind: null, timeLimit: null }, nv, avail, () => false, NOW);
  t.same(r?.devices.map(deviceKey), ['nvidia:0', 'nvidia:2'], 'free, then the soonest end');
  t.equal(r?.expectedStart, 1200);
  t.equal(reserveFor({ id: 9 }, { count: 2, kind: null, timeLimit: null }, nv, avail, () => true, NOW), null, 'a closed pool');
  const ids = reserveFor({ id: 9 }, { count: 2, kind: null, timeLimit: null, deviceIds: [3, 1] }, nv, avail, () => false, NOW);
  t.same(ids?.devices.map(deviceKey), ['nvidia:1', 'nvidia:3']);
  t.equal(ids?.expectedStart, null);
  t.ok(mayBackfill(200, r!, NOW));
  t.notOk(mayBackfill(201, r!, NOW));
  t.notOk(mayBackfill(null, r!, NOW));
});

t.test('a device just released (settling) counts as free for the reservation, and is given to nobody meanwhile', async (t) => {
  const i = input([job(9, 4), job(11, 1)]);
  const holds = new Map(i.holds!);
  holds.delete('nvidia:2');
  const blocked = new Map(i.blocked!);
  blocked.set('nvidia:2', { state: 'settling' });
  const p = schedule({ ...i, holds, blocked });
  t.same(p.reservations[0]?.devices.map(deviceKey), ['nvidia:0', 'nvidia:1', 'nvidia:2', 'nvidia:3']);
  t.same(p.decisions, []);
});

t.test('a reservation within one device group (docs/behaviour.md §21.5)', async (t) => {
  const avail = (d: Device) => (d.id === 0 ? 'free' as const : { job: 100 + d.id, end: d.id === 3 ? null : 1000 + 100 * (4 - d.id) });
  // ends: nv:0 free, nv:1 1300, nv:2 1200, nv:3 none; groups 0-1 and 2-3.
  const groups = new Map([['nvidia' as const, [[0, 1], [2, 3]]]]);
  const req = { count: 2, kind: null, timeLimit: null };
  const require = reserveFor({ id: 9 }, req, nv, avail, () => false, NOW, makeTopology('require', groups));
  t.same(require?.devices.map(deviceKey), ['nvidia:0', 'nvidia:1'], 'require: the group that comes free soonest');
  t.equal(require?.expectedStart, 1300);
  const prefer = reserveFor({ id: 9 }, req, nv, avail, () => false, NOW, makeTopology('prefer', groups));
  t.same(prefer?.devices.map(deviceKey), ['nvidia:0', 'nvidia:2'], 'prefer: any devices when a group would start later');
  const same = reserveFor({ id: 9 }, req, nv, avail, () => false, NOW, makeTopology('prefer', new Map([['nvidia' as const, [[0, 2], [1, 3]]]])));
  t.same(same?.devices.map(deviceKey), ['nvidia:0', 'nvidia:2'], 'prefer: the group when it starts as soon');
  t.equal(reserveFor({ id: 9 }, { count: 3, kind: null, timeLimit: null }, nv, avail, () => false, NOW, makeTopology('require', groups)), null,
    'require: no group large enough');
  t.equal(reserveFor({ id: 9 }, req, nv, avail, () => false, NOW, makeTopology('require', new Map())), null, 'require: unknown topology');
});
