// The order step: greedy mode considers jobs in submission (id) order, lazily.
import t from 'tap';
import { order } from '../../../../packages/daemon/src/scheduler/order';
import type { PendingJob } from '../../../../packages/daemon/src/scheduler/pending-job';

const job = (id: number, count: number): PendingJob => ({ id, count, kind: null, timeLimit: null });

t.test('submission order, whatever the sizes', async (t) => {
  const jobs = [job(1, 8), job(2, 1), job(5, 0), job(9, 4)];
  t.same([...order(jobs)].map((j) => j.id), [1, 2, 5, 9], 'the older job first, even when it asks for more');
});

t.test('the queue is walked lazily: a pass that stops early pulls no more', async (t) => {
  let pulled = 0;
  const queue = { *[Symbol.iterator]() { for (let i = 1; i <= 1000; i++) { pulled++; yield job(i, 1); } } };
  for (const j of order(queue)) if (j.id === 3) break;
  t.equal(pulled, 3);
});
