import t from 'tap';
import { PendingJobs } from '../../../packages/daemon/src/pending-jobs';
import type { StoredJob } from '../../../packages/daemon/src/store/store';

const job = (id: number, count: number) => ({ id, spec: { count } }) as unknown as StoredJob;

t.test('PendingJobs counts the CPU-only jobs through every change', async (t) => {
  const p = new PendingJobs();
  p.set(1, job(1, 0)).set(2, job(2, 1)).set(3, job(3, 0));
  t.equal(p.cpuOnly, 2);
  p.set(3, job(3, 0));
  t.equal(p.cpuOnly, 2, 'setting the same job again counts it once');
  p.delete(1);
  p.delete(42);
  t.equal(p.cpuOnly, 1, 'deleting a missing id changes nothing');
  p.delete(2);
  t.equal(p.cpuOnly, 1);
  p.clear();
  t.equal(p.cpuOnly, 0);
  t.same([...p.keys()], []);
});
