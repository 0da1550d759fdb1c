// Core with the workflow gates (docs/behaviour.md §23.1, §23.3-§23.5): dependencies and their
// cascade in one commit, hold and release, begin times on their own timer, retries, and all of
// it after a restart. A fake runner: the test plays the supervisor (core.complete).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Outcome } from '@xlurm/protocol';
import { alice, makeCore, spec, startedBy, type TestCore } from '../../helpers/core';
import { waitFor } from '../../helpers/wait';
import { formatUtc } from '../../../packages/daemon/src/workflow';

const now = () => Math.floor(Date.now() / 1000);
const ended = (state: Outcome['state'], exit_code = state === 'COMPLETED' ? 0 : 1): Outcome => ({ state, exit_code, finished_at: now(), error: null });
const reasonOf = (tc: TestCore, id: number) => tc.core.current(id)?.reason;
const waitReason = (tc: TestCore, id: number, code: string) =>
  waitFor(() => reasonOf(tc, id)?.code === code, { what: `job ${id} pending for ${code}`, timeout: 5000 });

t.test('afterok: the dependent waits with its reason, then starts once the parent COMPLETED', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec());
  await startedBy(tc, a.id);
  const b = await tc.core.submit(alice, spec({ dependency: `afterok:${a.id}` }));
  await waitReason(tc, b.id, 'Dependency');
  t.same(reasonOf(tc, b.id), { code: 'Dependency', message: `after job ${a.id} completes` });
  t.equal(tc.core.complete(a.id, ended('COMPLETED')), undefined);
  await startedBy(tc, b.id);
});

t.test('a FAILED parent cancels a chain of three at once, in one commit', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec());
  await startedBy(tc, a.id);
  const b = await tc.core.submit(alice, spec({ dependency: `afterok:${a.id}` }));
  const c = await tc.core.submit(alice, spec({ dependency: `afterok:${b.id}` }));
  const d = await tc.core.submit(alice, spec({ dependency: `afterany:${c.id}` }));
  const e = await tc.core.submit(alice, spec({ dependency: `afternotok:${b.id}` }));
  await waitReason(tc, d.id, 'Dependency');
  tc.core.complete(a.id, ended('FAILED'));
  for (const [id, parent, state] of [[b.id, a.id, 'FAILED'], [c.id, b.id, 'CANCELLED']] as const) {
    const j = tc.store.get(id)!;
    t.same([j.state, j.result?.exit_code, j.result?.error], ['CANCELLED', 130, `dependency never satisfied: job ${parent} ended ${state}`], `job ${id}, on disk`);
  }
  t.equal(tc.store.get(d.id)!.state, 'PENDING', 'afterany is satisfied by a cancelled parent');
  await startedBy(tc, d.id);
  await startedBy(tc, e.id);
});

t.test('a parent cancelled or expired while pending cascades too; unknown or impossible dependencies', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec({ hold: true }));
  const b = await tc.core.submit(alice, spec({ dependency: `afterok:${a.id}` }));
  await tc.core.cancel(a.id);
  t.match(tc.core.current(b.id), { state: 'CANCELLED', result: { error: `dependency never satisfied: job ${a.id} ended CANCELLED` } });
  // A parent already ended badly: the dependent is cancelled as soon as it is queued.
  const c = await tc.core.submit(alice, spec({ dependency: `afterok:${a.id}` }));
  t.match(tc.core.current(c.id), { state: 'CANCELLED', result: { error: `dependency never satisfied: job ${a.id} ended CANCELLED` } });
});

t.test('after: starts once the parent started; singleton: one at a time per owner and name', async (t) => {
  const tc = await makeCore(t, { maxRunning: 8 });
  const a = await tc.core.submit(alice, spec({ hold: true }));
  const b = await tc.core.submit(alice, spec({ dependency: `after:${a.id}` }));
  await waitReason(tc, b.id, 'Dependency');
  t.same(reasonOf(tc, b.id), { code: 'Dependency', message: `after job ${a.id} starts` });
  await tc.core.setHeld([a.id], false);
  await startedBy(tc, a.id);
  await startedBy(tc, b.id);

  const s1 = await tc.core.submit(alice, spec({ name: 'one', dependency: 'singleton' }));
  await startedBy(tc, s1.id);
  const s2 = await tc.core.submit(alice, spec({ name: 'one', dependency: 'singleton' }));
  const s3 = await tc.core.submit(alice, spec({ name: 'one', dependency: 'singleton' }));
  await waitReason(tc, s3.id, 'Dependency');
  t.same(reasonOf(tc, s2.id), { code: 'Dependency', message: `singleton: job ${s1.id} of the same name has not ended` });
  t.same(reasonOf(tc, s3.id)?.message, `singleton: job ${s1.id} of the same name has not ended`);
  tc.core.complete(s1.id, ended('COMPLETED'));
  await startedBy(tc, s2.id);
  await waitReason(tc, s3.id, 'Dependency');
  t.same(reasonOf(tc, s3.id)?.message, `singleton: job ${s2.id} of the same name has not ended`);
  t.notOk(tc.runner.started().includes(s3.id));
});

t.test('hold and release: reason Held, nothing changes for a list with a non-pending job, the queue wait restarts', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec({ hold: true, queue_timeout: 1 }));
  await waitReason(tc, a.id, 'Held');
  t.same(reasonOf(tc, a.id), { code: 'Held', message: `held until released (xlurm release ${a.id})` });
  const r = await tc.core.submit(alice, spec());
  await startedBy(tc, r.id);
  const b = await tc.core.submit(alice, spec({ dependency: `afterok:${r.id}` }));
  t.throws(() => tc.core.setHeld([b.id, r.id], true), { message: `cannot hold job ${r.id}: it is RUNNING` });
  t.notOk(tc.core.current(b.id)!.spec.hold, 'the list was refused as a whole');
  // Held past its queue-wait timeout: not expired. The witness has the same
  // timeout, was submitted later and is not held: once it has expired, the
  // expiry check has run past a's deadline too.
  const witness = await tc.core.submit(alice, spec({ dependency: `afterok:${r.id}`, queue_timeout: 1 }));
  await waitFor(() => tc.core.current(witness.id)!.state === 'EXPIRED', { what: 'the witness to expire', timeout: 5000 });
  t.equal(tc.core.current(a.id)!.state, 'PENDING');
  await tc.core.setHeld([a.id], true); // no change
  tc.core.setHeld([b.id], true);
  await tc.core.setHeld([a.id], false);
  t.equal(tc.store.get(a.id)!.spec.hold, undefined, 'released on disk');
  t.ok(tc.core.current(a.id)!.queued_at! >= now() - 1, 'waits from now');
  await startedBy(tc, a.id);
  tc.core.complete(r.id, ended('COMPLETED'));
  await waitReason(tc, b.id, 'Held');
});

t.test('begin time: BeginTime until then, started by its own timer', async (t) => {
  const tc = await makeCore(t);
  const at = now() + 2;
  const a = await tc.core.submit(alice, spec({ begin_at: at }));
  await waitReason(tc, a.id, 'BeginTime');
  t.match(reasonOf(tc, a.id)!.message, /^begins at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
  await startedBy(tc, a.id);
  t.ok(tc.core.current(a.id)!.started_at! >= at);
  t.same([tc.core.current(a.id)!.spec.begin_at, (await tc.core.submit(alice, spec())).begin_at], [at, null]);
});

t.test('the queue wait of a job with a begin time counts from then', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec({ begin_at: now() + 3, queue_timeout: 1 }));
  await startedBy(tc, a.id);
  t.equal(tc.core.current(a.id)!.state, 'RUNNING', 'not expired while waiting for its begin time');
});

t.test('update: a pending job gets a new limit, name, timeout and begin time; a running one is refused', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec({ hold: true }));
  const j = await tc.core.update(a.id, { time_limit: 120, name: 'renamed', queue_timeout: 600, begin_at: now() + 3600 }, false);
  t.match(j, { spec: { time_limit: 120, name: 'renamed', queue_timeout: 600 }, queue_timeout: 600 });
  t.match(tc.store.get(a.id), { spec: { time_limit: 120, name: 'renamed' } }, 'on disk');
  t.equal(tc.store.allSummaries().find((s) => s.id === a.id)!.name, 'renamed', 'the summary column too');
  await tc.core.setHeld([a.id], false);
  await waitReason(tc, a.id, 'BeginTime');
  await tc.core.update(a.id, { begin_at: null }, false);
  await startedBy(tc, a.id);
  // Running: only its limit; the owner lowers it, root raises it; the supervisor is told through the limit file.
  t.throws(() => tc.core.update(a.id, { name: 'x' }, false), { message: `cannot update job ${a.id}: it is RUNNING (only its time limit can be changed)` });
  const limitFile = path.join(tc.dir, 'jobs', `${a.id}.limit`);
  t.match(await tc.core.update(a.id, { time_limit: 60 }, false), { spec: { time_limit: 60 } });
  t.equal(fs.readFileSync(limitFile, 'utf8'), '60\n');
  t.throws(() => tc.core.update(a.id, { time_limit: 90 }, false), { code: 'PERMISSION_DENIED', message: `permission denied: only root may raise the time limit of a running job (job ${a.id} has 1m)` });
  t.match(await tc.core.update(a.id, { time_limit: 90 }, true), { spec: { time_limit: 90 } });
  t.equal(fs.readFileSync(limitFile, 'utf8'), '90\n');
  t.equal(tc.store.get(a.id)!.spec.time_limit, 90, 'on disk');

  const b = await tc.core.submit(alice, spec({ hold: true }));
  t.match(await tc.core.update(b.id, { nice: 7 }, false), { nice: 7 });
  t.throws(() => tc.core.update(b.id, { nice: 2, name: 'other' }, false), { code: 'PERMISSION_DENIED' }, 'only root lowers a nice');
  t.equal(tc.core.current(b.id)!.spec.name, 'true', 'and nothing else changed');
  t.match(await tc.core.update(b.id, { nice: 2, name: 'other' }, true), { nice: 2, spec: { name: 'other', nice: 2 } });
});

t.test('retry: a FAILED run goes back with the same id and the next attempt, the log gets its line; other ends are final', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec({ retry: 2 }));
  t.equal(a.attempt, 1);
  const log = path.join(tc.dir, 'jobs', `${a.id}.log`);
  fs.writeFileSync(log, 'run 1\n');
  fs.writeFileSync(path.join(tc.dir, 'jobs', `${a.id}.result`), '{}');
  await startedBy(tc, a.id);
  t.equal(tc.core.complete(a.id, ended('FAILED', 3)), undefined);
  t.match(tc.core.current(a.id), { state: 'PENDING', attempt: 2, started_at: null, result: null });
  t.match(tc.store.get(a.id), { state: 'PENDING', attempt: 2 });
  t.notOk(fs.existsSync(path.join(tc.dir, 'jobs', `${a.id}.result`)), "the last run's result is gone");
  await waitFor(() => tc.runner.started().filter((id) => id === a.id).length === 2, { what: 'the second start' });
  tc.core.complete(a.id, ended('FAILED', 4));
  await waitFor(() => tc.runner.started().filter((id) => id === a.id).length === 3, { what: 'the third start' });
  tc.core.complete(a.id, ended('FAILED', 5));
  t.match(tc.core.current(a.id), { state: 'FAILED', attempt: 3, result: { exit_code: 5 } }, 'no retries left');
  t.equal(fs.readFileSync(log, 'utf8'), 'run 1\n[xlurm] retry 1 of 2 after exit 3\n[xlurm] retry 2 of 2 after exit 4\n');

  const b = await tc.core.submit(alice, spec({ retry: 3 }));
  await startedBy(tc, b.id);
  tc.core.complete(b.id, ended('TIMED_OUT'));
  t.match(tc.core.current(b.id), { state: 'TIMED_OUT', attempt: 1 }, 'only FAILED is retried');
});

t.test('the retry line never follows a link planted as the log', async (t) => {
  const tc = await makeCore(t);
  const target = path.join(tc.dir, 'elsewhere');
  fs.writeFileSync(target, 'untouched\n');
  const a = await tc.core.submit(alice, spec({ retry: 1 }));
  fs.symlinkSync(target, path.join(tc.dir, 'jobs', `${a.id}.log`));
  await startedBy(tc, a.id);
  tc.core.complete(a.id, ended('FAILED'));
  t.equal(tc.core.current(a.id)!.state, 'PENDING', 'retried all the same');
  t.equal(fs.readFileSync(target, 'utf8'), 'untouched\n');
  t.ok(tc.logs.some((l) => l.includes('before its retry')), 'the failure is logged');
});

t.test('after a restart: gates and the cascade from the store', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec());
  await startedBy(tc, a.id);
  const b = await tc.core.submit(alice, spec({ dependency: `afterok:${a.id}` }));
  const c = await tc.core.submit(alice, spec({ dependency: `afterok:${b.id}` }));
  const h = await tc.core.submit(alice, spec({ hold: true }));
  const r = await tc.core.submit(alice, spec({ retry: 1 }));
  await startedBy(tc, r.id);
  tc.core.complete(r.id, ended('FAILED'));
  await tc.store.durable();
  const tc2 = await tc.restart();
  await waitReason(tc2, c.id, 'Dependency');
  t.same(reasonOf(tc2, b.id), { code: 'Dependency', message: `after job ${a.id} completes` });
  t.equal(reasonOf(tc2, h.id)?.code, 'Held');
  t.equal(tc2.core.current(r.id)!.attempt, 2);
  tc2.core.complete(a.id, ended('FAILED'));
  t.equal(tc2.core.current(c.id)!.state, 'CANCELLED');
});

// docs/behaviour.md §28.4: an internal error never leaves a change half applied. The store
// throws in the middle of a change (after its first write): nothing of it stays, on disk or in
// memory, and the next change goes through.
t.test('update and hold are one unit: a store that throws mid-way leaves nothing changed', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec({ hold: true, name: 'before' }));
  const store = tc.store as unknown as Record<string, (...args: unknown[]) => unknown>;
  const real = { setOrderKeys: store.setOrderKeys!, updateSpec: store.updateSpec! };
  store.setOrderKeys = () => { throw new Error('injected: disk I/O error'); };
  t.throws(() => tc.core.update(a.id, { name: 'after', time_limit: 99, nice: 5 }, false), /injected: disk I\/O error/);
  store.setOrderKeys = real.setOrderKeys;
  // The group commit of this turn carries on: wait for it, then look at disk and memory.
  await tc.store.durable();
  t.match(tc.store.get(a.id)!.spec, { name: 'before' }, 'the name written before the failure is not on disk');
  t.notOk(tc.store.get(a.id)!.spec.nice, 'nor the nice');
  t.equal(tc.core.current(a.id)!.spec.name, 'before', 'nor in memory');
  t.equal(tc.core.current(a.id)!.spec.time_limit ?? null, null);
  // The spec's write fails after a new nice was checked: the nice is not applied alone.
  store.updateSpec = () => { throw new Error('injected: disk I/O error'); };
  t.throws(() => tc.core.update(a.id, { name: 'after', nice: 7 }, false), /injected/);
  store.updateSpec = real.updateSpec;
  await tc.store.durable();
  t.notOk(tc.store.get(a.id)!.spec.nice, 'no nice on disk');
  t.notOk(tc.core.current(a.id)!.spec.nice, 'no nice in memory');
  t.match(await tc.core.update(a.id, { name: 'after', nice: 5 }, false), { spec: { name: 'after', nice: 5 } }, 'the same change goes through later');

  // hold of two jobs (pending for their begin time): the second write fails, so neither is held.
  const c = await tc.core.submit(alice, spec({ begin_at: now() + 3600 }));
  const e = await tc.core.submit(alice, spec({ begin_at: now() + 3600 }));
  let calls = 0;
  store.updateSpec = function (this: unknown, ...args: unknown[]) {
    if (++calls === 2) throw new Error('injected: disk I/O error');
    return real.updateSpec.apply(this, args);
  };
  t.throws(() => tc.core.setHeld([c.id, e.id], true), /injected/);
  store.updateSpec = real.updateSpec;
  await tc.store.durable();
  t.notOk(tc.store.get(c.id)!.spec.hold, 'the first job\'s hold was undone on disk');
  t.notOk(tc.core.current(c.id)!.spec.hold, 'and is not in memory');
  t.equal(tc.core.current(c.id)!.reason?.code, 'BeginTime', 'it still waits for its begin time, not Held');
  t.notOk(tc.store.get(e.id)!.spec.hold);
  await tc.core.setHeld([c.id, e.id], true);
  t.ok(tc.store.get(c.id)!.spec.hold && tc.store.get(e.id)!.spec.hold, 'the same hold goes through later');
});

t.test('formatUtc: a time no Date holds (stored before §28.4\'s check) is shown, not thrown over', async (t) => {
  t.equal(formatUtc(0), '1970-01-01 00:00:00 UTC');
  t.equal(formatUtc(Number.MAX_SAFE_INTEGER), `${Number.MAX_SAFE_INTEGER} (Unix seconds)`);
});
