// Time policy end to end (docs/behaviour.md §21.6): durations in -t, the administrator's default
// and maximum time limits, --timeout and EXPIRED (exit 75), xrun --immediate (75 and 69), and a
// queue-wait timeout that survives a daemon restart. The real daemon and the real CLIs.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { waitFor } from '../helpers/wait';
import { waitMarker } from '../helpers/devices';
import type { Scope as Tap } from '../helpers/tap';


function tempDir(t: Tap): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-time-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A daemon reading `toml` as its configuration file. */
async function withConfig(t: Tap, toml: string, maxRunning = 32): Promise<Daemon> {
  const file = path.join(tempDir(t), 'xlurm.toml');
  fs.writeFileSync(file, toml);
  return startDaemon(t, { maxRunning, args: ['--config', file] });
}

/**
 * A CPU job that holds the only slot until `release()`, which resolves once
 * the job has ended: a supervisor still finishing (its result, its cgroup)
 * while the teardown removes XLURM_HOME would race it.
 */
async function holdSlot(t: Tap, d: Daemon): Promise<{ id: number; release(): Promise<void> }> {
  const marker = path.join(tempDir(t), 'go');
  const open = () => fs.writeFileSync(marker, '');
  t.teardown(open);
  const id = await d.batch(waitMarker(marker), ['-g', '0']);
  await d.waitState(id, 'RUNNING');
  return { id, release: async () => { open(); await d.waitState(id, 'COMPLETED'); } };
}

t.test('-t durations; default and maximum time limits from [limits]', async (t) => {
  const d = await withConfig(t, '[limits]\ndefault_time_limit = "2h"\nmax_time_limit = "1d"\n');
  const limitOf = async (args: string[]) => (await d.job(await d.batch('true', ['-g', '0', ...args]))).spec.time_limit;
  t.equal(await limitOf([]), 7200, 'no -t: the default');
  t.equal(await limitOf(['-t', '90']), 90);
  t.equal(await limitOf(['-t', '15m']), 900);
  t.equal(await limitOf(['-t', '1:30']), 90, 'MM:SS');
  t.equal(await limitOf(['-t', '01:00:00']), 3600, 'HH:MM:SS');
  t.equal(await limitOf(['--time-limit', '1-00:00:00']), 86400, 'D-HH:MM:SS, at the cap');
  const over = await d.run('xbatch', ['-g', '0', '-t', '2d', '--wrap', 'true']);
  t.same([over.code, over.stderr], [1, 'xlurm: time limit 2d exceeds the maximum of 1d set by the administrator\n']);
  const run = await d.run('xrun', ['-g', '0', '-t', '25h', 'true']);
  t.same([run.code, run.stderr], [1, 'xlurm: time limit 25h exceeds the maximum of 1d set by the administrator\n'], 'xrun too');
  const bad = await d.run('xbatch', ['-g', '0', '-t', '2x', '--wrap', 'true']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^error: invalid duration '2x': use seconds, or a number with s, m, h or d\n/);
  const zero = await d.run('xbatch', ['-g', '0', '-t', '0', '--wrap', 'true']);
  t.same([zero.code, zero.stderr], [1, 'xlurm: time-limit must be positive\n'], "zero keeps the core's words");
});

t.test('under a cap alone, a job without -t gets the cap', async (t) => {
  const d = await withConfig(t, '[limits]\nmax_time_limit = "1h"\n');
  t.equal((await d.job(await d.batch('true', ['-g', '0']))).spec.time_limit, 3600);
});

t.test('--timeout: a job still pending then ends EXPIRED; xrun exits 75 with the error line', async (t) => {
  const d = await startDaemon(t, { maxRunning: 1 });
  const holder = await holdSlot(t, d);
  const r = await d.run('xrun', ['-g', '0', '--timeout', '1', 'true']);
  t.equal(r.code, 75);
  t.match(r.stderr, /xlurm: not started within the queue-wait timeout of 1s\n$/);
  const id = await d.batch('true', ['-g', '0', '--timeout', '1s']);
  const j = await d.waitState(id, 'EXPIRED');
  t.same([j.queue_timeout, j.result.exit_code, j.result.error, j.started_at], [1, 75, 'not started within the queue-wait timeout of 1s', null]);
  const detail = await d.run('xqueue', [String(id)]);
  t.match(detail.stdout, /Expired/, 'the detail text names the state');
  const table = await d.run('xqueue', ['--all']);
  t.match(table.stdout, new RegExp(`^ *${id} .* EXPIRED `, 'm'), 'the table shows EXPIRED');
  t.equal((await d.job(holder.id)).state, 'RUNNING', 'the running job is untouched');
  await holder.release();
});

t.test('default_queue_timeout applies to jobs without --timeout', async (t) => {
  const d = await withConfig(t, '[limits]\ndefault_queue_timeout = "1s"\n', 1);
  await holdSlot(t, d);
  const id = await d.batch('true', ['-g', '0']);
  t.equal((await d.job(id)).queue_timeout, 1);
  t.equal((await d.waitState(id, 'EXPIRED')).result.error, 'not started within the queue-wait timeout of 1s');
  const own = await d.batch('true', ['-g', '0', '--timeout', '1h']);
  t.equal((await d.job(own)).queue_timeout, 3600, 'its own --timeout wins');
});

t.test('xrun --immediate: starts now, or 75 with the reason, or 69 when it can never fit', async (t) => {
  const d = await startDaemon(t, { maxRunning: 1 });
  const ok = await d.run('xrun', ['--immediate', '-g', '0', 'echo', 'hi']);
  t.same([ok.code, ok.stdout], [0, 'hi\n'], 'a job that can start just runs');
  const holder = await holdSlot(t, d);
  const busy = await d.run('xrun', ['--immediate', '-g', '0', 'true']);
  t.equal(busy.code, 75);
  t.match(busy.stderr, /xlurm: could not start immediately: \S.*\n$/);
  const before = (await d.jobs()).length;
  const never = await d.run('xrun', ['--immediate', '-g', '2', 'true']);
  const plain = await d.run('xrun', ['-g', '2', 'true']);
  t.equal(never.code, 69);
  t.equal(plain.code, 1, 'without --immediate the same refusal exits 1');
  t.equal(never.stderr, plain.stderr, "the core's message, unchanged");
  t.match(never.stderr, /^xlurm: /);
  t.equal((await d.jobs()).length, before, 'refused at submission: no job');
  await holder.release();
});

t.test('a queue-wait timeout survives a daemon restart (deadline = submission + timeout)', async (t) => {
  const d = await startDaemon(t, { maxRunning: 1 });
  const holder = await holdSlot(t, d);
  const id = await d.batch('true', ['-g', '0', '--timeout', '3']);
  await d.kill();
  await d.start();
  const j = await d.waitState(id, 'EXPIRED');
  t.equal(j.result.error, 'not started within the queue-wait timeout of 3s');
  t.ok(j.result.finished_at - j.submitted_at >= 3, 'not before its timeout');
  t.equal((await d.job(holder.id)).state, 'RUNNING', 'the adopted running job is untouched');
  await holder.release();
});

t.test('kill_grace: a job that traps SIGTERM lives on through the configured grace, then is killed', async (t) => {
  const d = await withConfig(t, '[limits]\nkill_grace = "2s"\n');
  const dir = tempDir(t);
  const started = path.join(dir, 'started');
  // The trap records SIGTERM and the loop goes on; only SIGKILL ends it before `survived`.
  const script = `trap "echo term" TERM; touch ${started}; while :; do sleep 0.05; done; echo survived`;
  const id = await d.batch(script, ['-g', '0']);
  await d.waitState(id, 'RUNNING');
  await waitFor(() => fs.existsSync(started), { what: 'job start' });
  const cancelAt = Date.now();
  t.equal((await d.run('xcancel', [String(id)])).code, 0);
  const j = await d.waitState(id, 'CANCELLED');
  const waited = Date.now() - cancelAt;
  const log = fs.readFileSync(path.join(d.jobsDir, `${id}.log`), 'utf8');
  t.match(log, /^term$/m, 'it got SIGTERM and kept running');
  t.notMatch(log, /survived/, 'killed inside its loop');
  t.equal(j.result.exit_code, 130);
  t.ok(waited >= 2000, `SIGKILL not before the 2 s grace (${waited} ms)`);

  // A time-out takes the same path, with the grace of the configuration in force at launch.
  const tl = await d.batch(`trap "echo term" TERM; while :; do sleep 0.05; done; echo survived`, ['-g', '0', '-t', '1']);
  const out = await d.waitState(tl, 'TIMED_OUT');
  const tlog = fs.readFileSync(path.join(d.jobsDir, `${tl}.log`), 'utf8');
  t.match(tlog, /^term$/m);
  t.notMatch(tlog, /survived/);
  t.ok(out.result.finished_at - out.started_at >= 3, 'time limit plus grace');
});
