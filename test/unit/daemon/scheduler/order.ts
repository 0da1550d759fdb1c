// The order step (docs/behaviour.md §21.1): requested device count high first, then submission (id) order; lazily.
import t from 'tap';
import { compareJobs, order, pendingOrderBucket } from '../../../../packages/daemon/src/scheduler/order';
import type { PendingJob } from '../../../../packages/daemon/src/scheduler/pending-job';

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
