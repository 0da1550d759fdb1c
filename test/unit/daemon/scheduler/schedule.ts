// The pipeline: decisions of a pass (order → admit → place) and the reason of every job it did not start.
import t from 'tap';
import type { Device } from '@xlurm/protocol';
import { deviceKey, type DeviceBlock } from '../../../../packages/daemon/src/scheduler/place';
import { schedule, type PendingJob } from '../../../../packages/daemon/src/scheduler/schedule';
import { PendingJobs, pendingJob } from '../../../../packages/daemon/src/pending-jobs';
import { userLimitsFromFile } from '../../../../packages/daemon/src/scheduler/user-limits';
import type { StoredJob as Stored } from '../../../../packages/daemon/src/store/store';

const dev = (kind: Device['kind'], id: number): Device => ({ kind, id, name: `${kind} ${id}`, visible: `${kind}-${id}`, npu: null, chip: null });
const inv = [dev('nvidia', 0), dev('nvidia', 1), dev('nvidia', 2), dev('nvidia', 3), dev('ascend', 0), dev('ascend', 1), dev('metax', 3)];
const allFree = new Set(inv.map(deviceKey));
/** A pending job asking for `count` devices (any vendor unless given). */
const job = (id: number, count: number, more: Partial<PendingJob> = {}): PendingJob => ({ id, count, kind: null, timeLimit: null, ...more });

t.test('a pass respects max-running, the order (larger first, then submission), and lets small jobs overtake a blocked one', async (t) => {
  const free = new Set(['nvidia:0', 'nvidia:1']);
  const d = schedule({
    pending: [job(1, 4), job(2, 1), job(3, 0), job(4, 1), job(5, 1)],
    running: 0, maxRunning: 10, inventory: inv, free,
  }).decisions;
  // The CPU-only job 3 asks for fewer devices than 4 and 5: it comes after them (docs/behaviour.md §21.1).
  t.same(d.map((x) => [x.id, x.devices.map(deviceKey)]), [[2, ['nvidia:0']], [4, ['nvidia:1']], [3, []]]);
  const limited = schedule({ pending: [job(1, 0), job(2, 0)], running: 1, maxRunning: 2, inventory: inv, free: allFree }).decisions;
  t.same(limited.map((x) => x.id), [1]);
  t.same(schedule({ pending: [job(1, 0)], running: 2, maxRunning: 2, inventory: inv, free: allFree }).decisions, []);
});

t.test('a pass over 10k pending jobs with 8 devices stays linear', async (t) => {
  const gpus = Array.from({ length: 8 }, (_, i) => dev('nvidia', i));
  const pending = Array.from({ length: 10000 }, (_, i) => job(i + 1, 1 + (i % 3)));
  const d = schedule({ pending, running: 0, maxRunning: 32, inventory: gpus, free: new Set(gpus.map(deviceKey)) }).decisions;
  t.ok(d.length > 0 && d.length <= 8);
  const used = d.flatMap((x) => x.devices.map(deviceKey));
  t.equal(new Set(used).size, used.length, 'no device twice');
});

t.test('jobs larger than any pool has free are skipped, per vendor, as devices are taken', async (t) => {
  // free: nvidia 0,1 and ascend 0,1,  metax 3
  const free = new Set(['nvidia:0', 'nvidia:1', 'ascend:0', 'ascend:1', 'metax:3']);
  const d = schedule({
    pending: [
      job(1, 3),                                          // no pool has 3 free
      job(2, 2, { kind: 'ascend' }),                      // ascend has 2
      job(3, 1, { kind: 'ascend' }),                      // ascend now has 0
      job(4, 2),                                          // nvidia still has 2
      job(5, 1),                                          // only metax is left
      job(6, 2, { kind: 'nvidia', deviceIds: [0, 1] }),   // taken meanwhile
    ],
    running: 0, maxRunning: 10, inventory: inv, free,
  }).decisions;
  t.same(d.map((x) => [x.id, x.devices.map(deviceKey)]), [[2, ['ascend:0', 'ascend:1']], [4, ['nvidia:0', 'nvidia:1']], [5, ['metax:3']]]);
});

t.test('a pass stops walking the queue once no device is free and no CPU-only job is left', async (t) => {
  const two = new Set(['nvidia:0', 'nvidia:1']);
  const counting = (jobs: PendingJob[]) => {
    let pulled = 0;
    return { pulled: () => pulled, iter: { *[Symbol.iterator]() { for (const j of jobs) { pulled++; yield j; } } } };
  };
  const gpuJobs = Array.from({ length: 1000 }, (_, i) => job(i + 1, 1));
  const a = counting(gpuJobs);
  const d1 = schedule({ pending: a.iter, cpuOnlyPending: 0, running: 0, maxRunning: 32, inventory: inv, free: two }).decisions;
  t.same(d1.map((d) => d.id), [1, 2]);
  t.equal(a.pulled(), 3, 'two started, the third shows nothing more can fit: the other 997 are not visited');

  const withCpu = [...gpuJobs, job(1001, 0)];
  const b = counting(withCpu);
  const d2 = schedule({ pending: b.iter, cpuOnlyPending: 1, running: 0, maxRunning: 32, inventory: inv, free: two }).decisions;
  t.same(d2.map((d) => d.id), [1, 2, 1001], 'a CPU-only job further down still starts');
  t.equal(b.pulled(), 1001);

  const c = counting(gpuJobs);
  schedule({ pending: c.iter, running: 0, maxRunning: 32, inventory: inv, free: two });
  t.equal(c.pulled(), 1000, 'without the count the whole queue is walked (it may hold CPU-only jobs)');

  const e = counting(gpuJobs);
  const full = schedule({ pending: e.iter, running: 4, maxRunning: 4, inventory: inv, free: two });
  t.same(full.decisions, []);
  t.equal(e.pulled(), 0, 'every slot taken: no job is looked at');
  t.same(full.reasonOf(gpuJobs[999]!), { code: 'MaxRunning', message: '4 jobs running (limit 4)' }, 'yet each has its reason');
});

t.test('reasons: a started job has none; the others are explained by the state the pass leaves', async (t) => {
  const two = [dev('nvidia', 0), dev('nvidia', 1)];
  const blocked = new Map<string, DeviceBlock>([['nvidia:1', { state: 'held', job: 12, owner: 'alice' }]]);
  const jobs = [job(13, 2, { owner: 'bob' }), job(14, 1, { owner: 'carol' }), job(15, 1, { owner: 'dave' })];
  const p = schedule({ pending: jobs, running: 1, maxRunning: 8, inventory: two, free: new Set(['nvidia:0']), blocked });
  t.same(p.decisions.map((d) => d.id), [14]);
  t.equal(p.reasonOf(jobs[1]!), null, 'started in this pass');
  t.same(p.reasonOf(jobs[0]!), { code: 'Resources', message: 'needs 2 nv devices: nv:0 held by job 14 (carol), nv:1 held by job 12 (alice)' },
    'the devices this pass gave away are named with their new holder');
  t.same(p.reasonOf(jobs[2]!), { code: 'Resources', message: 'needs 1 nv device: nv:0 held by job 14 (carol), nv:1 held by job 12 (alice)' },
    'a job the pass never reached');
  t.equal(p.reasonOf(job(16, 1)), p.reasonOf(jobs[2]!), 'one reason object per request shape');
});

t.test('reasons: MaxRunning once the pass has filled the last slot, for every job it did not start', async (t) => {
  const jobs = [job(1, 8), job(2, 1), job(3, 0), job(4, 1)];
  const p = schedule({ pending: jobs, running: 0, maxRunning: 1, inventory: inv, free: allFree });
  t.same(p.decisions.map((d) => d.id), [2]);
  for (const j of [jobs[0]!, jobs[2]!, jobs[3]!]) t.same(p.reasonOf(j), { code: 'MaxRunning', message: '1 job running (limit 1)' }, `job ${j.id}`);
});

t.test('reasons: DevicesUnavailable when nothing it may use can be given', async (t) => {
  const blocked = new Map<string, DeviceBlock>([
    ['ascend:0', { state: 'excluded' }], ['ascend:1', { state: 'unknown' }],
  ]);
  const p = schedule({
    pending: [job(1, 1, { kind: 'ascend' })], running: 0, maxRunning: 8, inventory: inv,
    free: new Set(['nvidia:0']), blocked,
  });
  t.same(p.decisions, []);
  t.same(p.reasonOf(job(1, 1, { kind: 'ascend' })), {
    code: 'DevicesUnavailable', message: 'needs 1 asc device: asc:0 excluded by the administrator, asc:1 state unknown',
  });
});

t.test('reasons are built only when asked, and never change the input', async (t) => {
  let reads = 0;
  const blocked = new Map<string, DeviceBlock>([['nvidia:1', { state: 'busy' }]]);
  const counted = new Proxy(blocked, {
    get(target, prop) { if (prop === 'get' || prop === Symbol.iterator || prop === 'entries') reads++; const v = Reflect.get(target, prop, target) as unknown; return typeof v === 'function' ? v.bind(target) : v; },
  });
  const free = new Set(['nvidia:0']);
  const pending = Array.from({ length: 1000 }, (_, i) => job(i + 1, 2));
  const p = schedule({ pending, cpuOnlyPending: 0, running: 0, maxRunning: 8, inventory: inv.slice(0, 2), free, blocked: counted });
  t.equal(reads, 0, 'a pass reads no device causes');
  const first = p.reasonOf(pending[0]!);
  t.same(first, { code: 'Resources', message: 'needs 2 nv devices: nv:0 free, nv:1 busy (not started by xlurm)' });
  const after = reads;
  t.ok(pending.every((j) => p.reasonOf(j) === first), 'every job with that request shares it');
  t.equal(reads, after, 'the same request is explained once');
  t.same([...free], ['nvidia:0'], 'the free set is left as given');
  t.same([...blocked.keys()], ['nvidia:1']);
});

t.test('size caps: a capped size waits with SizeLimit while smaller jobs keep being scheduled', async (t) => {
  const gpus = Array.from({ length: 8 }, (_, i) => dev('nvidia', i));
  const free = new Set(gpus.map(deviceKey));
  const caps = new Map([[2, 1]]);
  const p = schedule({
    pending: [job(1, 2), job(2, 2), job(3, 1), job(4, 1)],
    running: 0, maxRunning: 32, inventory: gpus, free, sizeLimits: caps, runningBySize: new Map(),
  });
  t.same(p.decisions.map((d) => d.id), [1, 3, 4], 'the second 2-device job waits; the 1-device jobs start');
  t.same(p.reasonOf(job(2, 2)), { code: 'SizeLimit', message: '1 job of 2 devices running (limit 1)' });
  const already = schedule({
    pending: [job(5, 2), job(6, 1)], running: 1, maxRunning: 32, inventory: gpus, free, sizeLimits: caps, runningBySize: new Map([[2, 1]]),
  });
  t.same(already.decisions.map((d) => d.id), [6], 'counted among the jobs already running');
});

t.test('array throttles in a pass: each array starts up to its own %N, counting its running tasks; each says so', async (t) => {
  const a = (id: number) => job(id, 0, { arrayId: 10, throttle: 2 });
  const b = (id: number) => job(id, 0, { arrayId: 20, throttle: 1 });
  const pending = [a(10), a(11), a(12), a(13), b(20), b(21), job(30, 0)];
  const pass = schedule({ pending, running: 1, maxRunning: 32, inventory: inv, free: allFree, arrayRunning: new Map([[10, 1]]) });
  t.same(pass.decisions.map((d) => d.id), [10, 20, 30], 'array 10 had one running: one more; array 20 one; the plain job');
  t.same(pass.reasonOf(a(12)), { code: 'MaxRunning', message: 'array 10 runs 2 tasks (limit 2)' });
  t.same(pass.reasonOf(b(21)), { code: 'MaxRunning', message: 'array 20 runs 1 task (limit 1)' }, 'the message is per array');
});

t.test('jobs the daemon\'s queue skips (owner over a device limit, array at its throttle) are not walked and keep their reasons', async (t) => {
  const stored = (id: number, uid: number, count: number, array?: { id: number; count: number; throttle: number }) => ({
    id, owner: { uid, gid: uid, name: `u${uid}` }, spec: { command: ['true'], cwd: '/', env: {}, name: 'x', count },
    state: 'PENDING', devices: [], submitted_at: 1, started_at: null, result: null, reason: null,
    ...(array ? { array: { ...array, index: id - array.id, min: 0, max: array.count - 1, params: null } } : {}),
  }) as unknown as Stored;
  const counting = (p: PendingJobs) => {
    const walk = p.requests();
    let n = 0;
    const next = walk.next.bind(walk);
    walk.next = () => { const r = next(); if (!r.done) n++; return r; };
    return { walk, walked: () => n };
  };
  // u1 may hold 1 device: 100 jobs of 2 devices, then one of 1; u2 one job of 1.
  const p = new PendingJobs();
  for (let id = 1; id <= 100; id++) p.set(id, stored(id, 1001, 2));
  p.set(101, stored(101, 1001, 1));
  p.set(102, stored(102, 1002, 1));
  const userLimits = userLimitsFromFile({ default: { devices: 1 } }, () => 0);
  const a = counting(p);
  const pass = schedule({ pending: a.walk, running: 0, maxRunning: 32, inventory: inv, free: allFree, userLimits, byUser: new Map() });
  t.same(pass.decisions.map((d) => d.id).sort((x, y) => x - y), [101, 102], 'the small jobs of both users start');
  t.ok(a.walked() <= 4, `u1's 2-device jobs after the first are skipped (walked ${a.walked()})`);
  for (const id of [1, 2, 50, 100]) t.same(pass.reasonOf(pendingJob(p.get(id)!)), { code: 'UserLimit', message: 'u1001 runs 1 device (limit 1)' }, `job ${id}`);
  // An array of 50 tasks throttled to 2, and a job of the same owner after it.
  const q = new PendingJobs();
  const arr = { id: 1, count: 50, throttle: 2 };
  for (let id = 1; id <= 50; id++) q.set(id, stored(id, 1001, 1, arr));
  q.set(51, stored(51, 1001, 1));
  const b = counting(q);
  const pass2 = schedule({ pending: b.walk, running: 0, maxRunning: 32, inventory: inv, free: allFree });
  t.same(pass2.decisions.map((d) => d.id), [1, 2, 51], 'two tasks start, then the next job');
  t.ok(b.walked() <= 4, `the array's tasks past its throttle are skipped (walked ${b.walked()})`);
  for (const id of [3, 4, 50]) t.same(pass2.reasonOf(pendingJob(q.get(id)!)), { code: 'MaxRunning', message: 'array 1 runs 2 tasks (limit 2)' }, `task ${id}`);
});
