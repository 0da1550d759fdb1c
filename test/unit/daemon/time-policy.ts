// The time policy at submission (daemon/src/time-policy.ts) and through Core.submit.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { effectiveQueueTimeout, effectiveTimeLimit } from '../../../packages/daemon/src/time-policy';
import { parseDaemonArgs } from '../../../packages/daemon/src/config/args';
import { loadDaemonConfig } from '../../../packages/daemon/src/config/daemon';
import type { JobRunner } from '../../../packages/daemon/src/core';
import { alice, makeCore, spec, startedBy } from '../../helpers/core';
import { waitFor } from '../../helpers/wait';

const none = { defaultTimeLimit: null, maxTimeLimit: null, defaultQueueTimeout: null };

t.test('time limit: own -t, else the default, never above the cap', async (t) => {
  t.equal(effectiveTimeLimit(null, none), null, 'no policy: no limit');
  t.equal(effectiveTimeLimit(60, none), 60);
  t.equal(effectiveTimeLimit(null, { ...none, defaultTimeLimit: 3600 }), 3600, 'the default for a job without -t');
  t.equal(effectiveTimeLimit(60, { ...none, defaultTimeLimit: 3600 }), 60, '-t wins over the default');
  t.equal(effectiveTimeLimit(null, { ...none, defaultTimeLimit: 7200, maxTimeLimit: 3600 }), 3600, 'min(default, cap)');
  t.equal(effectiveTimeLimit(null, { ...none, defaultTimeLimit: 60, maxTimeLimit: 3600 }), 60);
  t.equal(effectiveTimeLimit(null, { ...none, maxTimeLimit: 3600 }), 3600, 'a cap without a default still bounds the job');
  t.equal(effectiveTimeLimit(86400, { ...none, maxTimeLimit: 86400 }), 86400, 'the cap itself is allowed');
  t.throws(() => effectiveTimeLimit(2 * 86400, { ...none, maxTimeLimit: 86400 }),
    { code: 'INVALID_ARGUMENT', message: 'time limit 2d exceeds the maximum of 1d set by the administrator' });
  t.throws(() => effectiveTimeLimit(5401, { ...none, maxTimeLimit: 5400 }),
    { message: 'time limit 5401s exceeds the maximum of 90m set by the administrator' });
});

t.test('queue timeout: own --timeout, else the default', async (t) => {
  t.equal(effectiveQueueTimeout(null, none), null);
  t.equal(effectiveQueueTimeout(null, { ...none, defaultQueueTimeout: 600 }), 600);
  t.equal(effectiveQueueTimeout(30, { ...none, defaultQueueTimeout: 600 }), 30);
});

function withLimits(dir: string, toml: string) {
  const file = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(file, toml);
  return loadDaemonConfig(parseDaemonArgs(['--backend', 'none']), { file, named: true });
}

t.test('[limits] from the file, as seconds; kill_grace defaults to 1s', async (t) => {
  const tc = await makeCore(t);
  t.same([tc.core.cfg.defaultTimeLimit, tc.core.cfg.maxTimeLimit, tc.core.cfg.killGrace, tc.core.cfg.defaultQueueTimeout], [null, null, 1, null]);
  const c = withLimits(tc.dir, '[limits]\ndefault_time_limit = "2h"\nmax_time_limit = "1d"\nkill_grace = 5\ndefault_queue_timeout = "10m"\n');
  t.same([c.defaultTimeLimit, c.maxTimeLimit, c.killGrace, c.defaultQueueTimeout], [7200, 86400, 5, 600]);
  t.throws(() => withLimits(tc.dir, '[limits]\nmax_time_limit = "0h"\n'), /limits\.max_time_limit: invalid duration '0h'/, 'zero is no limit');
  t.throws(() => withLimits(tc.dir, '[limits]\nmax_time = "1h"\n'), /limits/, 'unknown keys are errors');
});

t.test('Core.submit: the job spec holds the effective limit; a reload changes later submissions only', async (t) => {
  const tc = await makeCore(t);
  tc.core.applyConfig(withLimits(tc.dir, '[limits]\ndefault_time_limit = "2h"\nmax_time_limit = "1d"\n'));
  const a = await tc.core.submit(alice, spec());
  t.equal(a.spec.time_limit, 7200, 'the default');
  const b = await tc.core.submit(alice, spec({ time_limit: 60 }));
  t.equal(b.spec.time_limit, 60);
  t.throws(() => tc.core.submit(alice, spec({ time_limit: 2 * 86400 })),
    { code: 'INVALID_ARGUMENT', message: 'time limit 2d exceeds the maximum of 1d set by the administrator' });
  t.equal(tc.core.activeJobs().length, 2, 'a refused submission leaves no job');
  tc.core.applyConfig(withLimits(tc.dir, '[limits]\nmax_time_limit = "1h"\n'));
  const c = await tc.core.submit(alice, spec());
  t.equal(c.spec.time_limit, 3600, 'under a cap without a default: the cap');
  t.equal(tc.core.current(a.id)!.spec.time_limit, 7200, 'earlier jobs keep theirs');
});

t.test('Core: a job pending past its queue-wait timeout ends EXPIRED (75) through complete', async (t) => {
  const tc = await makeCore(t, { maxRunning: 1 });
  const a = await tc.core.submit(alice, spec());
  await startedBy(tc, a.id);
  const b = await tc.core.submit(alice, spec({ queue_timeout: 1 }));
  t.equal(b.queue_timeout, 1, 'the Job carries its queue_timeout');
  t.equal(a.queue_timeout, null, 'null when unlimited');
  const done = new Promise<string>((resolve) => tc.core.listen(b.id, (j) => { if (j.state !== 'PENDING') resolve(j.state); }));
  const ended = await waitFor(() => (tc.core.current(b.id)!.state === 'EXPIRED' ? tc.core.current(b.id) : undefined), { what: 'expiry', timeout: 5000 });
  t.same(ended.result && [ended.result.state, ended.result.exit_code, ended.result.error],
    ['EXPIRED', 75, 'not started within the queue-wait timeout of 1s']);
  t.ok(ended.result!.finished_at - ended.submitted_at >= 1, 'not before its timeout');
  t.equal(await done, 'EXPIRED', 'followers are told');
  t.equal(tc.core.current(a.id)!.state, 'RUNNING', 'a running job is never affected');
  t.equal(tc.store.get(b.id)!.state, 'EXPIRED', 'on disk');
});

t.test('Core: default_queue_timeout for jobs without one; the deadline survives a restart', async (t) => {
  const tc = await makeCore(t, { maxRunning: 1 });
  tc.core.applyConfig(withLimits(tc.dir, '[limits]\ndefault_queue_timeout = "1h"\n'));
  const a = await tc.core.submit(alice, spec());
  t.equal(a.spec.queue_timeout, 3600, 'the effective timeout is stored with the job');
  const b = await tc.core.submit(alice, spec({ queue_timeout: 60 }));
  t.equal(b.queue_timeout, 60, 'its own --timeout wins');
  // A job that has waited past its deadline while the daemon was down: submitted 2 min ago.
  const old = tc.store.insert(alice, spec({ queue_timeout: 60 }), tc.core.now() - 120);
  await tc.store.durable();
  const after = await tc.restart();
  const j = await waitFor(() => (after.core.current(old.id)!.state === 'EXPIRED' ? after.core.current(old.id) : undefined), { what: 'expiry after restart', timeout: 5000 });
  t.equal(j.result!.error, 'not started within the queue-wait timeout of 1m');
  t.not(after.core.current(b.id)!.state, 'EXPIRED', 'a job within its timeout is not expired');
});

t.test('Core: --immediate ends at the first pass that cannot start it, with that pass\'s reason', async (t) => {
  const tc = await makeCore(t, { maxRunning: 1 });
  const a = await tc.core.submit(alice, spec({ immediate: true }));
  await startedBy(tc, a.id);
  t.equal(tc.core.current(a.id)!.state, 'RUNNING', 'one that can start just starts');
  const b = await tc.core.submit(alice, spec({ immediate: true }));
  const j = await waitFor(() => (tc.core.current(b.id)!.state === 'EXPIRED' ? tc.core.current(b.id) : undefined), { what: 'immediate end', timeout: 5000 });
  t.equal(j.result!.exit_code, 75);
  t.match(j.result!.error, /^could not start immediately: \S/);
  t.notOk(tc.runner.started().includes(b.id), 'never started');
});

t.test('a reload names the [limits] keys it changed and hands the runner the new kill grace', async (t) => {
  const tc = await makeCore(t);
  t.equal((tc.runner as JobRunner).killGrace, 1, 'the default, from the start');
  const changed = tc.core.applyConfig(withLimits(tc.dir, '[limits]\nkill_grace = "5s"\nmax_time_limit = "1d"\n'));
  t.same(changed.filter((k) => k.startsWith('limits.')), ['limits.max_time_limit', 'limits.kill_grace']);
  t.equal((tc.runner as JobRunner).killGrace, 5);
  t.same(tc.core.applyConfig(withLimits(tc.dir, '[limits]\nkill_grace = "5s"\nmax_time_limit = "1d"\n')).filter((k) => k.startsWith('limits.')), [], 'nothing changed');
});
