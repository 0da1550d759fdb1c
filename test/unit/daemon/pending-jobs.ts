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

t.test('a pending job reads its reason from the latest pass; null before any pass saw it and once it leaves', async (t) => {
  const full = (id: number) => ({
    id, owner: { uid: 1000, gid: 1000, name: 'alice' }, spec: { command: ['true'], cwd: '/', env: {}, name: 'x', count: 1 },
    state: 'PENDING', devices: [], submitted_at: 1, started_at: null, result: null, reason: null,
  }) as StoredJob;
  const p = new PendingJobs();
  const a = full(1);
  p.set(1, a);
  t.equal(a.reason, null, 'no pass has considered it yet');
  const asked: number[] = [];
  p.explain((j) => { asked.push(j.id); t.equal(j.owner, 'alice'); return { code: 'MaxRunning', message: '1 job running (limit 1)' }; });
  t.same(a.reason, { code: 'MaxRunning', message: '1 job running (limit 1)' });
  t.same(asked, [1], 'asked only when read');
  const b = full(2);
  p.set(2, b);
  t.equal(b.reason, null, 'queued after the latest pass');
  p.explain(() => ({ code: 'Resources', message: 'needs 1 nv device: nv:0 busy (not started by xlurm)' }));
  t.equal(b.reason?.code, 'Resources');
  t.equal(a.reason?.code, 'Resources', 'every pass replaces every reason');
  const queued = [...p.values()];
  p.clear();
  for (const q of queued) p.set(q.id, q);
  t.equal(a.reason?.code, 'Resources', 're-sorting the queue keeps the reasons');
  p.delete(1);
  a.state = 'RUNNING';
  t.equal(a.reason, null, 'not pending: no reason');
  a.state = 'PENDING';
  p.set(1, a);
  t.equal(a.reason, null, 'back in the queue (a start deferred): not considered since');
  t.same(JSON.parse(JSON.stringify(b)).reason, { code: 'Resources', message: 'needs 1 nv device: nv:0 busy (not started by xlurm)' },
    'the reason is an ordinary enumerable key');
});

t.test('PendingJobs walks its jobs in the scheduling order, kept through every change without a sort per walk', async (t) => {
  const p = new PendingJobs();
  for (const [id, n] of [[1, 1], [2, 8], [3, 0], [4, 4], [5, 1], [6, 8]] as const) p.set(id, job(id, n));
  const ids = () => [...p.ordered()].map((j) => j.id);
  t.same(ids(), [2, 6, 4, 1, 5, 3], 'count high first, then id');
  t.same([...p.keys()], [1, 2, 3, 4, 5, 6], 'the map itself stays in submission order');
  p.delete(4);
  t.same(ids(), [2, 6, 1, 5, 3], 'an emptied bucket is dropped');
  p.set(4, job(4, 1));
  t.same(ids(), [2, 6, 1, 4, 5, 3], 'a job back out of id order (a deferred start) takes its place by id');
  p.set(9, job(9, 2));
  t.same(ids(), [2, 6, 9, 1, 4, 5, 3]);
  p.clear();
  t.same(ids(), []);
});

// Fairness (docs/behaviour.md §22): each owner's jobs in their order, owners merged by priority, nice and usage.
const owned = (id: number, uid: number, count: number, extra: { priority?: number; nice?: number } = {}) => ({
  id, owner: { uid, gid: uid, name: `u${uid}` }, spec: { count, ...(extra.nice ? { nice: extra.nice } : {}) },
  ...(extra.priority ? { priority: extra.priority } : {}),
}) as unknown as StoredJob;

t.test('PendingJobs merges the owners\' queues by usage, and moves a job when its key changes', async (t) => {
  const p = new PendingJobs();
  for (const j of [owned(1, 1, 1), owned(2, 1, 1), owned(3, 2, 1), owned(4, 2, 4), owned(5, 3, 1, { nice: 5 })]) p.set(j.id, j);
  const ids = (u?: Map<string, number>) => [...p.ordered(u)].map((j) => j.id);
  t.same(ids(), [4, 1, 2, 3, 5], 'no usage: size, then id; nice 5 last');
  t.same(ids(new Map([['u2', 50], ['u1', 10]])), [1, 2, 4, 3, 5], 'u1 (less usage) before u2; the nice job still last');
  t.equal(p.countOf(1), 2);
  t.equal(p.countOf(9), 0);
  t.equal(p.countAtLeast(2), 1);
  const j3 = p.get(3)!;
  p.rekey(j3, () => { j3.priority = 10; });
  t.same(ids(new Map([['u2', 50]])), [3, 1, 2, 4, 5], 'priority 10 goes first, whatever the usage');
  p.setTop(p.get(2)!, 1);
  t.same(ids(new Map([['u2', 50]])), [3, 2, 1, 4, 5], 'a moved job goes first among its owner\'s');
  t.equal(p.topOf(p.get(2)!), 1);
  p.delete(3);
  p.delete(4);
  t.equal(p.countOf(2), 0, 'an owner with no jobs left is dropped');
  t.same(ids(), [2, 1, 5]);
});

t.test('a pass skips the rest of an owner at their running-jobs limit (docs/behaviour.md §22.4)', async (t) => {
  const p = new PendingJobs();
  for (let i = 1; i <= 6; i++) p.set(i, owned(i, i <= 4 ? 1 : 2, 1));
  const walk = p.ordered(new Map([['u1', 0], ['u2', 5]]));
  const seen: number[] = [];
  for (let r = walk.next(); !r.done; r = walk.next()) {
    seen.push(r.value.id);
    if (r.value.id === 2) walk.skipOwner();
  }
  t.same(seen, [1, 2, 5, 6], 'u1\'s jobs 3 and 4 are not walked');
  t.same([...p.ordered()].map((j) => j.id), [1, 2, 3, 4, 5, 6], 'the next walk sees every job again');
});

t.test('a pass skips an owner\'s jobs over their device room, and the rest of an array at its throttle, without walking them', async (t) => {
  const p = new PendingJobs();
  const of = (id: number, uid: number, count: number, array?: { id: number; count: number }) =>
    ({ id, owner: { uid, gid: uid, name: `u${uid}` }, spec: { count }, ...(array ? { array } : {}) }) as unknown as StoredJob;
  // u1: 4-device jobs 1-2, 2-device jobs 3-4, 1-device jobs 5-6 (walked larger first); u2: job 7.
  for (const [id, c] of [[1, 4], [2, 4], [3, 2], [4, 2], [5, 1], [6, 1]] as const) p.set(id, of(id, 1, c));
  p.set(7, of(7, 2, 1));
  const walk = p.ordered(new Map([['u1', 0], ['u2', 5]]));
  const seen: number[] = [];
  for (let r = walk.next(); !r.done; r = walk.next()) {
    seen.push(r.value.id);
    if (r.value.id === 1) walk.skipOwnerFrom(2); // room for 1 device left
  }
  t.same(seen, [1, 5, 6, 7], 'u1\'s jobs of 2 devices or more are not walked');
  // An array 10-19 (throttled), with another job of the same owner between its runs in id order.
  const q = new PendingJobs();
  const arr = { id: 10, count: 10 };
  for (let id = 10; id < 20; id++) q.set(id, of(id, 1, 1, arr));
  q.set(20, of(20, 1, 1));
  q.set(21, of(21, 1, 1, { id: 21, count: 2 }));
  q.set(22, of(22, 1, 1, { id: 21, count: 2 }));
  const w2 = q.ordered();
  const seen2: number[] = [];
  for (let r = w2.next(); !r.done; r = w2.next()) {
    seen2.push(r.value.id);
    if (r.value.id === 11) w2.skipArray(10);
  }
  t.same(seen2, [10, 11, 20, 21, 22], 'the rest of array 10 is skipped; other jobs and arrays are not');
  t.same([...q.ordered()].map((j) => j.id), [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22], 'the next walk sees every job again');
});
