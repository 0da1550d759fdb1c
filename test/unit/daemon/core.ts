// Core (packages/daemon/src/core.ts): every job transition as one method, with a real Store,
// an always-idle device backend and a fake runner (test/helpers/core.ts).
import t from 'tap';
import type { Job } from '@xlurm/protocol';
import { XlurmError } from '@xlurm/protocol';
import { alice, aliceCaller, bobCaller, makeCore, nvidia, rootCaller, spec, startedBy } from '../../helpers/core';
import { waitFor } from '../../helpers/wait';

t.test('submit: inserted PENDING, acknowledged once durable, then started by a pass', async (t) => {
  const tc = await makeCore(t, { devices: 2 });
  const reply = await tc.core.submit(alice, spec({ count: 1 }));
  t.equal(reply.state, 'PENDING', 'the reply is the job as submitted');
  t.same(reply.devices, []);
  t.same(reply.owner, alice);
  t.equal(tc.store.get(reply.id)?.spec.count, 1, 'on disk');
  await startedBy(tc, reply.id);
  const now = tc.core.current(reply.id)!;
  t.equal(now.state, 'RUNNING');
  t.same(now.devices, [nvidia(0)]);
  t.same(tc.core.runningIds(), [reply.id]);
  t.same(tc.runner.calls.filter((c) => c[0] !== 'adopt'), [['prepare', reply.id], ['start', reply.id]], 'files first, then the supervisor');
  t.equal(tc.core.devices.views()[0]!.status, 'allocated');
});

t.test('submit: an insert that cannot be committed never existed', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const realCommit = tc.store.commit.bind(tc.store);
  // The group commit fails (as on a full disk): SQLite rolls the transaction back.
  tc.store.commit = () => { tc.store.rollback(); throw new XlurmError('STORAGE', 'cannot write the job database: disk full'); };
  const p = tc.core.submit(alice, spec());
  const id = tc.core.activeJobs()[0]!.id;
  await t.rejects(p, { code: 'STORAGE' });
  t.same(tc.core.activeJobs(), [], 'not queued');
  t.equal(tc.store.get(id), undefined, 'not stored');
  t.same(tc.runner.started(), [], 'never started');
  tc.store.commit = realCommit;
  const next = await tc.core.submit(alice, spec());
  await startedBy(tc, next.id);
  t.same(tc.core.runningIds(), [next.id], 'the queue works again');
});

t.test('submit: a job that cannot be inserted throws and changes nothing', async (t) => {
  const tc = await makeCore(t);
  tc.store.insert = () => { throw new XlurmError('JOB_ID_EXHAUSTED', 'job ID exhausted'); };
  t.throws(() => tc.core.submit(alice, spec()), { code: 'JOB_ID_EXHAUSTED', message: 'job ID exhausted' });
  t.same(tc.core.activeJobs(), []);
});

t.test('jobs beyond max-running or without a free device wait', async (t) => {
  const tc = await makeCore(t, { devices: 1, maxRunning: 2 });
  const a = await tc.core.submit(alice, spec({ count: 1 }));
  const b = await tc.core.submit(alice, spec({ count: 1 }));
  const c = await tc.core.submit(alice, spec());
  const d = await tc.core.submit(alice, spec());
  await startedBy(tc, a.id);
  await startedBy(tc, c.id);
  t.same(tc.core.runningIds(), [a.id, c.id]);
  t.same(tc.core.activeJobs().map((j) => [j.id, j.state]), [[a.id, 'RUNNING'], [b.id, 'PENDING'], [c.id, 'RUNNING'], [d.id, 'PENDING']]);
  t.same(tc.core.counts(), { PENDING: 2, RUNNING: 2 });
});

t.test('cancel: a pending job is cancelled at once and durably', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const a = await tc.core.submit(alice, spec({ count: 2 })); // cannot fit: stays pending
  const seen: Job[] = [];
  tc.core.listen(a.id, (j) => seen.push(j));
  await tc.core.cancel(a.id);
  const stored = tc.store.get(a.id)!;
  t.equal(stored.state, 'CANCELLED');
  t.match(stored.result, { state: 'CANCELLED', exit_code: 130, error: null });
  t.same(tc.core.activeJobs(), []);
  await waitFor(() => seen.length > 0, { what: 'listener told' });
  t.equal(seen[0]!.state, 'CANCELLED');
  await tc.core.cancel(a.id); // finished: nothing to do
  t.equal(tc.store.get(a.id)!.state, 'CANCELLED');
  t.same(tc.runner.calls.filter((c) => c[0] === 'cancel'), [], 'the runner is not involved');
  t.throws(() => tc.core.cancel(999), { code: 'JOB_NOT_FOUND', message: 'job not found' });
});

t.test('cancel: a running job is handed to its supervisor; a marker that cannot be written is STORAGE', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec());
  await startedBy(tc, a.id);
  await tc.core.cancel(a.id);
  t.same(tc.runner.calls.filter((c) => c[0] === 'cancel'), [['cancel', a.id]]);
  t.equal(tc.core.current(a.id)!.state, 'RUNNING', 'until the supervisor reports');
  tc.runner.cancelError = Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
  t.throws(() => tc.core.cancel(a.id), {
    code: 'STORAGE', message: `cannot cancel job ${a.id}: cannot write its cancel marker: disk is full; free space under XLURM_HOME and retry`,
  });
  tc.runner.cancelError = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
  t.throws(() => tc.core.cancel(a.id), { message: `cannot cancel job ${a.id}: cannot write its cancel marker: EACCES: permission denied` });
});

t.test('exclude and include: the whole list is checked first, logged, and scheduling follows', async (t) => {
  const tc = await makeCore(t, { devices: 2 });
  t.throws(() => tc.core.exclude([1, 7, 9]), { code: 'UNKNOWN_DEVICE', message: 'unknown device ID(s): 7, 9' });
  t.same(tc.core.excludedIds(), [], 'nothing changed');
  t.same(tc.core.exclude([1, 0]), [0, 1]);
  t.same(tc.core.exclude([1]), [0, 1], 'repeating is harmless');
  t.same(tc.logs, ['excluded device IDs 1,0', 'excluded device IDs 1']);
  t.same(tc.core.devices.views().map((v) => v.status), ['disabled', 'disabled']);
  const a = await tc.core.submit(alice, spec({ count: 1 }));
  t.throws(() => tc.core.include([0, 5]), { code: 'UNKNOWN_DEVICE', message: 'unknown device ID(s): 5' });
  t.same(tc.core.include([1]), [0]);
  t.equal(tc.logs.at(-1), 'included device IDs 1');
  await startedBy(tc, a.id);
  t.same(tc.core.current(a.id)!.devices, [nvidia(1)], 'the included device is used');
  t.same(tc.core.include([1, 0]), []);
  t.same(tc.core.exclude([0]), [0], 'a running job keeps its device');
  t.equal(tc.core.current(a.id)!.state, 'RUNNING');
});

t.test('complete: persisted, devices released, listeners told, no end before the start', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const a = await tc.core.submit(alice, spec({ count: 1 }));
  const b = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, a.id);
  const seen: Job[] = [];
  tc.core.listen(a.id, (j) => seen.push(j));
  const startedAt = tc.core.current(a.id)!.started_at!;
  t.equal(tc.core.complete(a.id, { state: 'COMPLETED', exit_code: 0, finished_at: startedAt - 100, error: null }), undefined);
  const done = tc.store.get(a.id)!;
  t.equal(done.state, 'COMPLETED');
  t.equal(done.result!.finished_at, startedAt, 'a clock set back does not end a job before it started');
  await waitFor(() => seen.some((j) => j.state === 'COMPLETED'), { what: 'listener told' });
  // The released device is re-probed, then the next job gets it.
  await startedBy(tc, b.id);
  t.same(tc.core.current(b.id)!.devices, [nvidia(0)]);
  t.equal(tc.core.complete(a.id, { state: 'FAILED', exit_code: 1, finished_at: startedAt, error: null }), undefined, 'a finished job is left alone');
  t.equal(tc.store.get(a.id)!.state, 'COMPLETED');
});

t.test('complete: a result that cannot be stored keeps the job as it was', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec());
  await startedBy(tc, a.id);
  tc.store.finish = () => { throw new XlurmError('STORAGE', 'cannot write the job database: disk full'); };
  const err = tc.core.complete(a.id, { state: 'COMPLETED', exit_code: 0, finished_at: tc.core.now(), error: null });
  t.match(err, { code: 'STORAGE', message: 'cannot write the job database: disk full' });
  t.equal(tc.core.current(a.id)!.state, 'RUNNING');
  t.same(tc.core.runningIds(), [a.id]);
  t.match(tc.logs, [`job ${a.id}: cannot persist result: cannot write the job database: disk full; will retry`]);
});

t.test('deferStart: back to PENDING in submission order; a requeue that cannot be written fails the job', async (t) => {
  const tc = await makeCore(t, { devices: 1, maxRunning: 1 });
  const a = await tc.core.submit(alice, spec({ count: 1 }));
  const b = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, a.id);
  tc.core.deferStart(a.id, 'EMFILE: too many open files');
  t.same(tc.core.activeJobs().map((j) => [j.id, j.state]), [[a.id, 'PENDING'], [b.id, 'PENDING']]);
  const back = tc.core.current(a.id)!;
  t.same([back.devices, back.started_at], [[], null]);
  t.equal(tc.store.get(a.id)!.state, 'PENDING', 'on disk too');
  t.equal(tc.logs.at(-1), `job ${a.id}: cannot start its supervisor yet (EMFILE: too many open files); back in the queue`);
  tc.core.deferStart(12345, 'nothing'); // unknown: ignored
  // Tried again shortly: the first in the queue starts first.
  await waitFor(() => tc.runner.started().filter((id) => id === a.id).length === 2, { what: 'second start of a', timeout: 5000 });
  tc.store.unstart = () => { throw new XlurmError('STORAGE', 'disk full'); };
  tc.core.deferStart(a.id, 'EMFILE');
  const failed = tc.store.get(a.id)!;
  t.equal(failed.state, 'FAILED');
  t.equal(failed.result!.error, 'cannot start process executor worker: EMFILE');
});

t.test('recover: a restarted Core queues the pending jobs and adopts the running ones with their devices', async (t) => {
  const tc = await makeCore(t, { devices: 2, maxRunning: 1 });
  const a = await tc.core.submit(alice, spec({ count: 1 }));
  const b = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, a.id);
  const next = await tc.restart();
  t.same(next.runner.calls[0], ['adopt', [a.id]]);
  t.equal(next.runner.adoptedAfterRestart, true);
  t.same(next.core.runningIds(), [a.id]);
  t.same(next.core.activeJobs().map((j) => [j.id, j.state]), [[a.id, 'RUNNING'], [b.id, 'PENDING']]);
  t.same(next.core.current(a.id)!.devices, [nvidia(0)]);
  t.equal(next.core.devices.views()[0]!.job, a.id, 'its device stays allocated');
});

t.test('jobFor: unknown for everyone, the owner and root only', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec());
  t.equal(tc.core.jobFor(aliceCaller, a.id).id, a.id);
  t.equal(tc.core.jobFor(rootCaller, a.id).id, a.id);
  t.throws(() => tc.core.jobFor(bobCaller, a.id), { code: 'PERMISSION_DENIED', message: 'permission denied: job belongs to alice (UID 1000)' });
  t.throws(() => tc.core.jobFor(bobCaller, a.id + 1), { code: 'JOB_NOT_FOUND', message: 'job not found' });
  t.ok(tc.core.isAdmin(rootCaller));
  t.notOk(tc.core.isAdmin(aliceCaller));
});

t.test('isAdmin: a non-root daemon is administered by its own account', async (t) => {
  const tc = await makeCore(t, { euid: 1000 });
  t.ok(tc.core.isAdmin(aliceCaller));
  t.ok(tc.core.isAdmin(rootCaller));
  t.notOk(tc.core.isAdmin(bobCaller));
});

t.test('history: summaries, expiry and removal never touch active jobs', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const a = await tc.core.submit(alice, spec());
  const b = await tc.core.submit(alice, spec({ count: 1 }));
  const c = await tc.core.submit(alice, spec({ count: 5 })); // cannot fit: pending
  await startedBy(tc, a.id);
  await startedBy(tc, b.id);
  t.equal(tc.core.complete(a.id, { state: 'COMPLETED', exit_code: 0, finished_at: 10, error: null }), undefined);
  t.same(tc.core.summaries().map((s) => s.id), [a.id, b.id, c.id]);
  t.same(tc.core.summaries(2).map((s) => s.id), [b.id, c.id], 'the newest only');
  const far = tc.core.now() + 86400;
  t.same(tc.core.expiredIds(far), [a.id]);
  tc.core.removeJobs([a.id, b.id, c.id]);
  t.equal(tc.store.get(a.id), undefined, 'finished: removed');
  t.equal(tc.store.get(b.id)?.state, 'RUNNING', 'running: kept');
  t.equal(tc.store.get(c.id)?.state, 'PENDING', 'pending: kept');
});

t.test('pass: every pending job gets the reason of the latest pass (Resources, MaxRunning), in get and the summaries', async (t) => {
  const tc = await makeCore(t, { devices: 2, maxRunning: 2 });
  const reasonOf = (id: number) => tc.core.current(id)?.reason ?? null;
  const a = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, a.id);
  const b = await tc.core.submit(alice, spec({ count: 2 }));
  t.equal(b.reason, null, 'the submit reply: no pass has considered it yet');
  await waitFor(() => reasonOf(b.id), { what: 'a reason for the 2-device job' });
  t.same(reasonOf(b.id), { code: 'Resources', message: `needs 2 nv devices: nv:0 held by job ${a.id} (alice), nv:1 free` });
  t.same(tc.core.summaries().find((s) => s.id === b.id)!.reason, reasonOf(b.id), 'summaries read from the store carry it too');
  t.equal(tc.core.summaries().find((s) => s.id === a.id)!.reason, null, 'a running job has none');

  tc.core.exclude([1]);
  await waitFor(() => reasonOf(b.id)?.message.includes('excluded'), { what: 'the exclusion in the reason' });
  t.same(reasonOf(b.id), { code: 'Resources', message: `needs 2 nv devices: nv:0 held by job ${a.id} (alice), nv:1 excluded by the administrator` });

  const c = await tc.core.submit(alice, spec());
  await startedBy(tc, c.id);
  const d = await tc.core.submit(alice, spec());
  await waitFor(() => reasonOf(d.id)?.code === 'MaxRunning', { what: 'MaxRunning' });
  t.same(reasonOf(d.id), { code: 'MaxRunning', message: '2 jobs running (limit 2)' });
  t.same(reasonOf(b.id), { code: 'MaxRunning', message: '2 jobs running (limit 2)' }, 'a pass that starts nothing still explains every job');

  tc.core.include([1]);
  t.equal(tc.core.complete(c.id, { state: 'COMPLETED', exit_code: 0, finished_at: tc.core.now(), error: null }), undefined);
  await startedBy(tc, d.id);
  t.equal(reasonOf(d.id), null, 'started: no reason');
  t.same(reasonOf(b.id), { code: 'MaxRunning', message: '2 jobs running (limit 2)' }, 'the pass that started d filled the slot again');
  t.equal(tc.core.complete(a.id, { state: 'COMPLETED', exit_code: 0, finished_at: tc.core.now(), error: null }), undefined);
  await startedBy(tc, b.id);
  t.equal(reasonOf(b.id), null);
});

t.test('listeners of a pending job are told when its reason code changes, not when only the message does', async (t) => {
  const tc = await makeCore(t, { devices: 2, maxRunning: 2 });
  const reasonOf = (id: number) => tc.core.current(id)?.reason ?? null;
  const a = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, a.id);
  const b = await tc.core.submit(alice, spec({ count: 2 }));
  await waitFor(() => reasonOf(b.id), { what: 'a reason for the 2-device job' });
  const seen: Job[] = [];
  tc.core.listen(b.id, (j) => seen.push(j));
  tc.core.exclude([1]);
  await waitFor(() => reasonOf(b.id)?.message.includes('excluded'), { what: 'the exclusion in the reason' });
  t.same(seen, [], 'a new message under the same code is not pushed');
  const c = await tc.core.submit(alice, spec());
  await startedBy(tc, c.id);
  await tc.core.submit(alice, spec());
  await waitFor(() => seen.length > 0, { what: 'the change to MaxRunning pushed' });
  t.same(seen.map((j) => [j.state, j.reason?.code]), [['PENDING', 'MaxRunning']]);
  tc.core.include([1]);
  t.equal(tc.core.complete(a.id, { state: 'COMPLETED', exit_code: 0, finished_at: tc.core.now(), error: null }), undefined);
  await waitFor(() => seen.some((j) => j.state === 'RUNNING'), { what: 'the start pushed' });
  t.same(seen.map((j) => [j.state, j.reason?.code ?? null]), [['PENDING', 'MaxRunning'], ['RUNNING', null]], 'one event per change');
});
