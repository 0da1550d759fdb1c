// The order step (docs/behaviour.md §21.1, §22): priority, nice, fair share, then requested device count high first, then submission (id) order; lazily.
import t from 'tap';
import { compareJobs, compareWithinOwner, merge, order, pendingOrderBucket } from '../../../../packages/daemon/src/scheduler/order';
import type { PendingJob } from '../../../../packages/daemon/src/scheduler/pending-job';
import { schedule } from '../../../../packages/daemon/src/scheduler/schedule';

const job = (id: number, count: number): PendingJob => ({ id, count, kind: null, timeLimit: null });

t.test('larger requests first, then submission order for equal counts', async (t) => {
  const jobs = [job(1, 8), job(2, 1), job(5, 0), job(9, 4), job(10, 1), job(11, 8)];
  t.same([...order(jobs)].map((j) => j.id), [1, 11, 9, 2, 10, 5]);
  t.same(jobs.map((j) => j.id), [1, 2, 5, 9, 10, 11], 'the input array is left as given');
});

t.test('an array already in order is returned as it is (no copy, no sort)', async (t) => {
  const jobs = [job(3, 4), job(1, 2), job(2, 2), job(4, 0)];
  t.equal(order(jobs), jobs);
});

t.test('compareJobs and the queue bucket key agree', async (t) => {
  t.ok(compareJobs(job(7, 4), job(1, 2)) < 0, 'more devices first');
  t.ok(compareJobs(job(1, 2), job(7, 2)) < 0, 'then the older');
  t.ok(pendingOrderBucket(4) < pendingOrderBucket(2), 'buckets are walked in ascending key: larger counts first');
});

t.test('the queue is walked lazily: a pass that stops early pulls no more', async (t) => {
  let pulled = 0;
  const queue = { *[Symbol.iterator]() { for (let i = 1; i <= 1000; i++) { pulled++; yield job(i, 1); } } };
  for (const j of order(queue)) if (j.id === 3) break;
  t.equal(pulled, 3);
});

// Fairness (docs/behaviour.md §21.1, §22): priority, nice, usage, then size and id; `xlurm top` within an owner.
const of = (id: number, owner: string, count: number, extra: Partial<PendingJob> = {}): PendingJob =>
  ({ id, owner, count, kind: null, timeLimit: null, ...extra });

t.test('priority high first, then nice low first, then usage low first, then size, then id', async (t) => {
  const usage = new Map([['heavy', 5000], ['light', 10]]);
  const jobs = [
    of(1, 'heavy', 8), of(2, 'light', 1), of(3, 'heavy', 1, { priority: 5 }), of(4, 'light', 1, { nice: 10 }),
    of(5, 'light', 4), of(6, 'heavy', 2, { nice: 10 }), of(7, 'nobody', 1), of(8, 'light', 4, { priority: -1 }),
  ];
  t.same([...order(jobs, usage)].map((j) => j.id), [3, 7, 5, 2, 1, 4, 6, 8],
    'priority 5; then nice 0 by usage (nobody 0, light 10, heavy 5000) and size; then nice 10; priority -1 last');
  t.same([...order(jobs)].map((j) => j.id), [3, 1, 5, 2, 7, 6, 4, 8], 'fair share off: no usage key');
  t.ok(compareJobs(of(1, 'a', 1), of(2, 'b', 1), new Map([['a', 1]])) > 0, 'more usage goes later');
  t.ok(compareJobs(of(9, 'a', 1, { priority: 1 }), of(2, 'b', 8, { nice: 0 })) < 0, 'priority beats size and id');
});

t.test('xlurm top: first among the owner\'s jobs, never ahead of another owner\'s job it was behind', async (t) => {
  const usage = new Map([['alice', 0], ['bob', 100]]);
  const jobs = [of(1, 'alice', 4), of(2, 'alice', 1), of(3, 'alice', 1, { top: 1 }), of(4, 'bob', 2), of(5, 'alice', 1, { top: 2 })];
  const ids = [...order(jobs, usage)].map((j) => j.id);
  t.same(ids, [5, 3, 1, 2, 4], 'latest moved first, then the earlier move, then the rest in order; bob (more usage) after');
  t.same([...order(jobs, new Map([['alice', 100], ['bob', 0]]))].map((j) => j.id), [4, 5, 3, 1, 2], 'a moved job passes no other owner');
  t.ok(compareWithinOwner(of(1, 'a', 1, { priority: 1 }), of(2, 'a', 1, { top: 9 })) < 0, 'a move stays within the priority');
});

t.test('merge: heads by the cross-user key, each source in its own order, lazily', async (t) => {
  let pulled = 0;
  const src = (owner: string, usage: number, ids: number[]) => ({
    usage, jobs: (function* () { for (const id of ids) { pulled++; yield of(id, owner, 1); } })(),
  });
  const cmp = (a: PendingJob, ua: number, b: PendingJob, ub: number) => ua - ub || a.id - b.id;
  const out: number[] = [];
  for (const j of merge([src('a', 2, [1, 4, 6]), src('b', 1, [2, 3]), src('c', 2, [5])], cmp)) {
    out.push(j.id);
    if (out.length === 3) break;
  }
  t.same(out, [2, 3, 1]);
  t.ok(pulled <= 6, 'no source is read ahead of its head');
  t.same([...merge([src('a', 0, [1, 3]), src('b', 0, [2])], cmp)].map((j) => j.id), [1, 2, 3]);
  t.same([...merge([], cmp)], []);
});

t.test('Priority: a job behind jobs ahead by priority, nice or fair share that wait for the same devices names them', async (t) => {
  const gpus = [0, 1].map((id) => ({ kind: 'nvidia' as const, id, name: 'G', visible: `GPU-${id}`, npu: null, chip: null }));
  const blocked = new Map(gpus.map((d) => [`nvidia:${d.id}`, { state: 'held' as const, job: 90 + d.id, owner: 'carol' }]));
  const usage = new Map([['alice', 0], ['bob', 100]]);
  const pending = [of(1, 'alice', 1), of(2, 'bob', 1), of(3, 'alice', 2), of(4, 'bob', 1, { priority: 1 }), of(5, 'bob', 0)];
  const pass = schedule({ pending, running: 2, maxRunning: 32, inventory: gpus, free: new Set(), blocked, usage });
  t.same(pass.decisions.map((d) => d.id), [5], 'the CPU-only job starts');
  t.equal(pass.reasonOf(pending[3]!)?.code, 'Resources', 'the first in the order waits for the devices themselves');
  t.same(pass.reasonOf(pending[2]!), { code: 'Priority', message: 'job 4 (bob) is ahead and waits for the same devices' }, 'behind by priority');
  t.same(pass.reasonOf(pending[0]!), { code: 'Priority', message: 'job 4 (bob) is ahead and waits for the same devices' }, 'job 3 is ahead of it by size only: not named');
  t.same(pass.reasonOf(pending[1]!), { code: 'Priority', message: 'jobs 4 (bob), 3 (alice), 1 (alice) are ahead and wait for the same devices' });
  const plain = schedule({ pending: [of(1, 'alice', 1), of(2, 'alice', 1)], running: 2, maxRunning: 32, inventory: gpus, free: new Set(), blocked });
  t.equal(plain.reasonOf(of(2, 'alice', 1))?.code, 'Resources', 'ahead only by submission order: the reference\'s Resources');
});

t.test('with the counts of the queue, a pass stops once no job left could fit, whatever the order put first', async (t) => {
  const gpus = [0, 1, 2].map((id) => ({ kind: 'nvidia' as const, id, name: 'G', visible: `GPU-${id}`, npu: null, chip: null }));
  let pulled = 0;
  const jobs = [of(1, 'a', 4), of(2, 'b', 1), ...Array.from({ length: 100 }, (_, i) => of(10 + i, 'c', 4))];
  const queue = { *[Symbol.iterator]() { for (const j of jobs) { pulled++; yield j; } } };
  const pass = schedule({
    pending: queue, pendingCounts: new Map([[4, 101], [1, 1]]), running: 0, maxRunning: 32, inventory: gpus,
    free: new Set(gpus.map((d) => `nvidia:${d.id}`)),
  });
  t.same(pass.decisions.map((d) => d.id), [2]);
  t.equal(pulled, 3, 'after the 1-device job only 4-device jobs are left, and 2 devices are free');
});
