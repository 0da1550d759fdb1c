// Core with fairness (docs/behaviour.md §22, §23.3): priority, nice and top as transitions that move a
// job in the queue; fair share from the usage of jobs that ran (kept across a restart); per-user
// limits holding jobs with UserLimit and refusing submissions over pending_jobs; root exempt.
import t from 'tap';
import type { JobSummary, Owner } from '@xlurm/protocol';
import { userLimitsFromFile } from '../../../packages/daemon/src/scheduler/user-limits';
import { sizeBytes } from '@xlurm/protocol';
import { alice, aliceCaller, ctxOf, makeCore, spec, startedBy } from '../../helpers/core';
import { queue } from '../../../packages/daemon/src/handlers/queue';
import { waitFor } from '../../helpers/wait';

const bob: Owner = { uid: 1001, gid: 1001, name: 'bob' };
const root: Owner = { uid: 0, gid: 0, name: 'root' };

t.test('priority, nice and top reorder a pending job; the JSON carries priority and nice', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const holder = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, holder.id);
  const a = await tc.core.submit(alice, spec({ count: 1 }));
  const b = await tc.core.submit(alice, spec({ count: 1, nice: 10 }));
  const c = await tc.core.submit(alice, spec({ count: 1 }));
  t.match(a, { priority: 0, nice: 0 });
  t.match(b, { priority: 0, nice: 10 });
  const done = (id: number) => tc.core.complete(id, { state: 'COMPLETED', exit_code: 0, finished_at: tc.core.now(), error: null });
  const p = await tc.core.setPriority(c.id, 5);
  t.equal(p.priority, 5);
  t.throws(() => tc.core.setNice(b.id, 3, false), { code: 'PERMISSION_DENIED' }, 'a user cannot lower their nice');
  t.equal((await tc.core.setNice(a.id, 20, false)).nice, 20, 'but may raise it');
  t.equal((await tc.core.setNice(a.id, 0, true)).nice, 0, 'root may lower it');
  await tc.core.top(b.id);
  t.throws(() => tc.core.setPriority(holder.id, 1), { code: 'INVALID_ARGUMENT', message: `job ${holder.id} is not pending` });
  // Order now: c (priority 5), then b (moved), then a.
  done(holder.id);
  await startedBy(tc, c.id);
  done(c.id);
  await startedBy(tc, b.id);
  done(b.id);
  await startedBy(tc, a.id);
  const restarted = await tc.restart();
  t.match(restarted.core.current(a.id), { priority: 0 });
});

t.test('fair share: the user who used less goes first; usage kept across a restart', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const heavy = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, heavy.id);
  const started = tc.core.current(heavy.id)!.started_at!;
  const a2 = await tc.core.submit(alice, spec({ count: 1 }));
  const b1 = await tc.core.submit(bob, spec({ count: 1 }));
  // It ran 100 s (by its own end time): alice has used 100 device-seconds, bob none.
  tc.core.complete(heavy.id, { state: 'COMPLETED', exit_code: 0, finished_at: started + 100, error: null });
  await startedBy(tc, b1.id);
  t.notOk(tc.runner.started().includes(a2.id), 'alice\'s next job waits behind bob\'s');
  await waitFor(() => tc.core.current(a2.id)?.reason !== null, { what: 'a pass over alice\'s job' });
  const shares = tc.core.shares();
  t.same(shares.map((r) => [r.rank, r.user, r.uid]), [[1, 'bob', 1001], [2, 'alice', 1000]]);
  t.ok(shares[1]!.usage >= 100 && shares[1]!.decayed > 99, 'alice: 100 device-seconds');
  tc.core.persistUsage();
  tc.store.commit();
  const again = await tc.restart();
  const after = again.core.shares().find((r) => r.user === 'alice')!;
  t.ok(after.usage >= 100, 'alice\'s usage survived the restart');
});

t.test('usage that cannot be written (a full disk) is logged once per spell, not at every timer', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const j = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, j.id);
  const full = () => tc.store.db.exec(`CREATE TRIGGER full BEFORE INSERT ON usage BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`);
  const told = () => tc.logs.filter((l) => l.startsWith('cannot write fair-share usage:'));
  full();
  tc.core.persistUsage();
  tc.core.persistUsage();
  t.same(told(), ['cannot write fair-share usage: cannot write the job database: database or disk is full; will retry'], 'once');
  tc.store.db.exec('DROP TRIGGER full');
  tc.core.persistUsage();
  t.equal(told().length, 1, 'written again quietly');
  full();
  tc.core.persistUsage();
  t.equal(told().length, 2, 'a new spell is said again');
});

t.test('fair share off: submission order again', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  tc.core.applyConfig({ ...tc.core.cfg, fairShare: false });
  const heavy = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, heavy.id);
  const a2 = await tc.core.submit(alice, spec({ count: 1 }));
  await tc.core.submit(bob, spec({ count: 1 }));
  tc.core.complete(heavy.id, { state: 'COMPLETED', exit_code: 0, finished_at: tc.core.current(heavy.id)!.started_at! + 100, error: null });
  await startedBy(tc, a2.id);
});

t.test('per-user limits: UserLimit while over, released as jobs end; pending_jobs refused; root exempt', async (t) => {
  const tc = await makeCore(t, { devices: 4 });
  const userLimits = userLimitsFromFile({ default: { running_jobs: 1, pending_jobs: 2 }, bob: { devices: 1 } }, sizeBytes);
  t.same(tc.core.applyConfig({ ...tc.core.cfg, userLimits }), ['limits.users']);
  const a1 = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, a1.id);
  const a2 = await tc.core.submit(alice, spec({ count: 1 }));
  const a3 = await tc.core.submit(alice, spec({ count: 1 }));
  t.throws(() => tc.core.submit(alice, spec({ count: 1 })), { code: 'USER_LIMIT', message: 'alice already has 2 pending jobs (limit 2)' });
  await waitFor(() => tc.core.current(a2.id)?.reason?.code === 'UserLimit', { what: 'alice held' });
  t.same(tc.core.current(a2.id)!.reason, { code: 'UserLimit', message: 'alice runs 1 job (limit 1)' });
  const r1 = await tc.core.submit(root, spec({ count: 1 }));
  const r2 = await tc.core.submit(root, spec({ count: 1 }));
  await startedBy(tc, r1.id);
  await startedBy(tc, r2.id);
  const b1 = await tc.core.submit(bob, spec({ count: 2 }));
  await waitFor(() => tc.core.current(b1.id)?.reason?.code === 'UserLimit', { what: 'bob held' });
  t.equal(tc.core.current(b1.id)!.reason!.message, 'bob runs 0 devices (limit 1)', 'bob\'s own devices key counts first (his running_jobs is default\'s, §28.2)');
  tc.core.complete(a1.id, { state: 'COMPLETED', exit_code: 0, finished_at: tc.core.now(), error: null });
  await startedBy(tc, a2.id);
  t.notOk(tc.runner.started().includes(a3.id));
  t.equal((await tc.core.submit(alice, spec({ count: 1 }))).state, 'PENDING', 'room for one more pending job');
});

t.test('xqueue -l: the pending rows last, in the order they would start', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const holder = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, holder.id);
  const a = await tc.core.submit(alice, spec({ count: 1, nice: 5 }));
  const b = await tc.core.submit(bob, spec({ count: 1 }));
  const c = await tc.core.submit(alice, spec({ count: 1 }));
  await tc.core.setPriority(c.id, 1);
  t.same(tc.core.pendingOrder(), [c.id, b.id, a.id]);
  const rows = queue(ctxOf(tc.core, aliceCaller), { all: false, order: 'schedule' }) as JobSummary[];
  t.same(rows.map((r) => r.id), [holder.id, c.id, b.id, a.id]);
  t.same((queue(ctxOf(tc.core, aliceCaller), { all: false }) as JobSummary[]).map((r) => r.id), [holder.id, a.id, b.id, c.id], 'without it: id order');
});
