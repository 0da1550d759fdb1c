// Workflows end to end (docs/behaviour.md §23.1, §23.3-§23.5) with the real daemon and CLIs:
// the user guide's pipeline recipe run as written, dependencies and their cascade, unknown and
// malformed lists, a dependency across a daemon SIGKILL and restart, hold/release, update,
// --begin and --retry.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runProcess, startDaemon, type Daemon } from '../helpers/daemon';
import { CLI_BIN, ROOT } from '../helpers/env';
import { waitMarker } from '../helpers/devices';
import { fakeLibrary } from '../helpers/fixtures';
import { waitFor } from '../helpers/wait';
import type { Scope as Tap } from '../helpers/tap';

function tempDir(t: Tap): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-flow-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A CPU job that runs until the returned function is called. */
async function blocker(t: Tap, d: Daemon, args: string[] = []): Promise<{ id: number; release(): void }> {
  const marker = path.join(tempDir(t), 'go');
  const release = () => fs.writeFileSync(marker, '');
  t.teardown(release);
  const id = await d.batch(waitMarker(marker), ['-g', '0', ...args]);
  await d.waitState(id, 'RUNNING');
  return { id, release };
}

const reasonOf = async (d: Daemon, id: number) => (await d.job(id)).reason as { code: string; message: string } | null;
const waitReason = (d: Daemon, id: number, code: string) =>
  waitFor(async () => (await reasonOf(d, id))?.code === code, { what: `job ${id} pending for ${code}`, timeout: 10000 });

t.test("the user guide's pipeline recipe, as written", async (t) => {
  const guide = fs.readFileSync(path.join(ROOT, 'docs', 'user-guide.md'), 'utf8');
  const m = /<!-- recipe: pipeline [^>]*-->\n```sh\n([\s\S]*?)```/.exec(guide);
  t.ok(m, 'the recipe is in the guide');
  const recipe = m![1]!;
  const fake = fakeLibrary(t, 'nvidia', ['device 0 GPU-7e57c0de-0000-4000-8000-000000000000 "Fake H100 80GB"']);
  const d = await startDaemon(t, { backend: 'nvidia', env: fake.env });
  const dir = tempDir(t);
  // The recipe's lines, then what the test reads back: the three ids.
  const script = `set -e\n${recipe}echo "ids $prep $train $eval"\n`;
  const r = await runProcess('bash', ['-c', script], { cwd: dir, env: { ...d.env, PATH: `${CLI_BIN}:${process.env.PATH}` } });
  t.equal(r.code, 0, r.stderr);
  const [prep, train, evaluate] = /ids (\d+) (\d+) (\d+)/.exec(r.stdout)!.slice(1).map(Number) as [number, number, number];
  t.match(r.stdout, new RegExp(`^afterok:${train}$`, 'm'), 'the dependency as submitted');
  const j = await d.waitState(evaluate, ['COMPLETED', 'FAILED', 'CANCELLED'], 30000);
  t.equal(j.state, 'COMPLETED');
  for (const id of [prep, train]) t.equal((await d.job(id)).state, 'COMPLETED');
  t.equal((await d.run('xqueue', [String(evaluate), '--log'])).stdout, '3 rows\ntrained\n', 'each step saw the one before');
  const times = await Promise.all([prep, train, evaluate].map((id) => d.job(id)));
  t.ok(times[1].started_at >= times[0].result.finished_at && times[2].started_at >= times[1].result.finished_at, 'in order');
});

t.test('a FAILED parent cancels a chain of three at once; the reason while waiting; JSON keys', async (t) => {
  const d = await startDaemon(t, { maxRunning: 4 });
  const dir = tempDir(t);
  const marker = path.join(dir, 'go');
  const a = await d.batch(`${waitMarker(marker)}; exit 3`, ['-g', '0']);
  await d.waitState(a, 'RUNNING');
  const b = await d.batch('true', ['-g', '0', '-d', `afterok:${a}`]);
  const c = await d.batch('true', ['-g', '0', '--dependency', `afterok:${b}`]);
  const e = await d.batch('true', ['-g', '0', '-d', `afterok:${c}`, '--notify', 'echo "notified $XLURM_JOB_STATE"']);
  const cleanup = await d.batch('echo cleaning', ['-g', '0', '-d', `afternotok:${a}`]);
  await waitReason(d, e, 'Dependency');
  t.same(await reasonOf(d, b), { code: 'Dependency', message: `after job ${a} completes` });
  t.match((await d.run('xqueue', [String(b)])).stdout, new RegExp(`Reason: Dependency: after job ${a} completes\n$`));
  const pending = await d.job(b);
  t.same([pending.dependency, pending.begin_at, pending.attempt], [`afterok:${a}`, null, 1]);
  t.same([(await d.job(a)).dependency, (await d.job(a)).begin_at], [null, null], 'always present');
  fs.writeFileSync(marker, '');
  await d.waitState(a, 'FAILED');
  const parents: Record<number, [number, string]> = { [b]: [a, 'FAILED'], [c]: [b, 'CANCELLED'], [e]: [c, 'CANCELLED'] };
  for (const id of [b, c, e]) {
    const j = await d.job(id);
    const [p, s] = parents[id]!;
    t.same([j.state, j.result.exit_code, j.result.error, j.started_at], ['CANCELLED', 130, `dependency never satisfied: job ${p} ended ${s}`, null], `job ${id}`);
  }
  t.match((await d.run('xqueue', [String(c)])).stdout, new RegExp(`Error: dependency never satisfied: job ${b} ended CANCELLED\n`));
  await waitFor(async () => /notified CANCELLED/.test((await d.run('xqueue', [String(e), '--log'])).stdout), { what: "the cancelled dependent's --notify", timeout: 15000 });
  t.equal((await d.waitState(cleanup, 'COMPLETED')).state, 'COMPLETED', 'afternotok ran');
});

t.test('unknown ids and malformed lists are refused, by xbatch and xrun alike', async (t) => {
  const d = await startDaemon(t);
  const unknown = await d.run('xbatch', ['-g', '0', '-d', 'afterok:77', '--wrap', 'true']);
  t.same([unknown.code, unknown.stderr], [1, 'xlurm: dependency on unknown job 77\n']);
  const run = await d.run('xrun', ['-g', '0', '-d', 'afterany:77', 'true']);
  t.same([run.code, run.stderr], [1, 'xlurm: dependency on unknown job 77\n']);
  const bad = await d.run('xbatch', ['-g', '0', '-d', 'afterok:7?afterok:8', '--wrap', 'true']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^error: invalid dependency 'afterok:7\?afterok:8': use afterok, afterany, afternotok or after with :ID\[:ID\.\.\.\], or singleton, joined by ','\n/);
  const raw = await d.request('submit', { command: ['true'], cwd: '/', env: {}, name: 'x', count: 0, dependency: 'later:3' }) as { ok: boolean; error: { code: string; message: string } };
  t.same(raw.error, { code: 'INVALID_ARGUMENT', message: "invalid dependency 'later:3': use afterok, afterany, afternotok or after with :ID[:ID...], or singleton, joined by ','" }, 'the daemon checks it too, in the same words');
  t.equal((await d.jobs()).length, 0, 'nothing was queued');
});

t.test('xrun with a dependency waits with the Dependency reason, then runs', async (t) => {
  const d = await startDaemon(t);
  const a = await blocker(t, d);
  const child = d.spawnCli('xrun', ['-g', '0', '-d', `afterok:${a.id}`, 'echo', 'after']);
  let err = '';
  let out = '';
  child.stderr!.on('data', (b: Buffer) => { err += b.toString(); });
  child.stdout!.on('data', (b: Buffer) => { out += b.toString(); });
  await waitFor(() => err.includes('Pending: Dependency: after job'), { what: 'the Pending line', timeout: 10000 });
  t.match(err, new RegExp(`Pending: Dependency: after job ${a.id} completes\n`));
  a.release();
  const code = await new Promise<number | null>((r) => child.on('close', r));
  t.same([code, out], [0, 'after\n']);
});

t.test('a dependency survives a daemon SIGKILL and restart', async (t) => {
  const d = await startDaemon(t, { maxRunning: 4 });
  const a = await blocker(t, d);
  const b = await d.batch('echo second', ['-g', '0', '-d', `afterok:${a.id}`]);
  const c = await d.batch('true', ['-g', '0', '-d', `afterok:${b}`]);
  await waitReason(d, c, 'Dependency');
  await d.kill();
  await d.start();
  await waitReason(d, b, 'Dependency');
  t.same(await reasonOf(d, b), { code: 'Dependency', message: `after job ${a.id} completes` });
  t.equal((await d.job(b)).dependency, `afterok:${a.id}`);
  a.release();
  await d.waitState(c, 'COMPLETED');
  t.equal((await d.job(b)).state, 'COMPLETED');

  // And the cascade after a restart.
  const x = await blocker(t, d);
  const y = await d.batch('true', ['-g', '0', '-d', `afternotok:${x.id}`]);
  await waitReason(d, y, 'Dependency');
  await d.kill();
  await d.start();
  x.release();
  const j = await d.waitState(y, 'CANCELLED');
  t.equal(j.result.error, `dependency never satisfied: job ${x.id} ended COMPLETED`);
});

t.test('hold and release; update; a held job may be held again, a running one not', async (t) => {
  const d = await startDaemon(t);
  const id = await d.batch('echo hi', ['-g', '0', '--hold', '-t', '10m']);
  await waitReason(d, id, 'Held');
  t.match((await d.run('xqueue', [String(id)])).stdout, new RegExp(`Reason: Held: held until released \\(xlurm release ${id}\\)\n$`));
  t.match((await d.run('xqueue', ['-l'])).stdout, new RegExp(`^ *${id} .*PENDING .* Held +bash`, 'm'));
  const upd = await d.run('xlurm', ['update', String(id), '-t', '5m', '-n', 'renamed', '--timeout', '1h']);
  t.same([upd.code, upd.stdout, upd.stderr], [0, `Job ${id} updated\n`, '']);
  const j = await d.job(id);
  t.same([j.spec.time_limit, j.spec.name, j.queue_timeout, j.state], [300, 'renamed', 3600, 'PENDING']);
  t.match((await d.run('xqueue', [])).stdout, /renamed/, 'the table shows the new name');
  t.equal((await d.run('xlurm', ['update', String(id), '--nice', '5'])).code, 0);
  t.equal((await d.job(id)).nice, 5, '--nice through the fair-share order');
  const again = await d.run('xlurm', ['hold', String(id)]);
  t.same([again.code, again.stdout], [0, `Job ${id} held\n`]);
  const rel = await d.run('xlurm', ['release', String(id)]);
  t.same([rel.code, rel.stdout], [0, `Job ${id} released\n`]);
  await d.waitState(id, 'COMPLETED');
  const done = await d.run('xlurm', ['hold', String(id)]);
  t.same([done.code, done.stderr], [1, `xlurm: cannot hold job ${id}: it is COMPLETED\n`]);
  const late = await d.run('xlurm', ['update', String(id), '-t', '1m']);
  t.same([late.code, late.stderr], [1, `xlurm: cannot update job ${id}: it is COMPLETED\n`]);
  const none = await d.run('xlurm', ['update', String(id)]);
  t.equal(none.code, 2, 'nothing to update is a usage error');
  const missing = await d.run('xlurm', ['release', '9999']);
  t.same([missing.code, missing.stderr], [1, 'xlurm: job not found\n']);
});

t.test('update keeps within max_time_limit', async (t) => {
  const file = path.join(tempDir(t), 'xlurm.toml');
  fs.writeFileSync(file, '[limits]\nmax_time_limit = "1h"\n');
  const d = await startDaemon(t, { args: ['--config', file] });
  const id = await d.batch('true', ['-g', '0', '--hold']);
  const over = await d.run('xlurm', ['update', String(id), '-t', '2h']);
  t.same([over.code, over.stderr], [1, 'xlurm: time limit 2h exceeds the maximum of 1h set by the administrator\n']);
  t.equal((await d.job(id)).spec.time_limit, 3600, 'unchanged');
});

t.test("update -t of a running job: its supervisor enforces the new limit", async (t) => {
  const d = await startDaemon(t);
  const id = await d.batch('sleep 60', ['-g', '0', '-t', '1h']);
  await d.waitState(id, 'RUNNING');
  const up = await d.run('xlurm', ['update', String(id), '-t', '2h']);
  t.same([up.code, up.stderr], [0, ''], 'root may raise it');
  const name = await d.run('xlurm', ['update', String(id), '-n', 'x']);
  t.same([name.code, name.stderr], [1, `xlurm: cannot update job ${id}: it is RUNNING (only its time limit can be changed)\n`]);
  const started = (await d.job(id)).started_at as number;
  t.equal((await d.run('xlurm', ['update', String(id), '-t', '2'])).code, 0);
  t.equal((await d.job(id)).spec.time_limit, 2, 'spec.time_limit shows the change');
  const j = await d.waitState(id, 'TIMED_OUT', 15000);
  t.ok(j.result.finished_at - started < 30, 'ended by the new limit, long before the old one');
});

t.test('--begin: BeginTime until then, then it starts by itself', async (t) => {
  const d = await startDaemon(t);
  const id = await d.batch('true', ['-g', '0', '--begin', 'now+2']);
  const j = await d.job(id);
  t.ok(Number.isInteger(j.begin_at) && j.begin_at > j.submitted_at, 'begin_at in JSON');
  await waitReason(d, id, 'BeginTime');
  t.match((await reasonOf(d, id))!.message, /^begins at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
  const done = await d.waitState(id, 'COMPLETED');
  t.ok(done.started_at >= j.begin_at, 'not before its time');
  const bad = await d.run('xbatch', ['-g', '0', '--begin', 'soon', '--wrap', 'true']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /^error: invalid time 'soon': use now\+DURATION, HH:MM or YYYY-MM-DDTHH:MM\[:SS\]\n/);
  // update moves it.
  const later = await d.batch('true', ['-g', '0', '--begin', 'now+1h']);
  await waitReason(d, later, 'BeginTime');
  t.equal((await d.run('xlurm', ['update', String(later), '--begin', 'now'])).code, 0);
  await d.waitState(later, 'COMPLETED');
});

t.test('--retry: a FAILED job runs again under its id, the log goes on; only FAILED is retried', async (t) => {
  const d = await startDaemon(t);
  const id = await d.batch('echo "run $XLURM_JOB_ID"; exit 3', ['-g', '0', '--retry', '2']);
  const j = await d.waitState(id, 'FAILED', 30000);
  t.same([j.attempt, j.result.exit_code], [3, 3]);
  t.equal((await d.run('xqueue', [String(id), '--log'])).stdout,
    `run ${id}\n[xlurm] retry 1 of 2 after exit 3\nrun ${id}\n[xlurm] retry 2 of 2 after exit 3\nrun ${id}\n`);
  t.match((await d.run('xqueue', [String(id)])).stdout, /^Attempt: 3 of 3$/m);

  const dir = tempDir(t);
  const once = path.join(dir, 'once');
  const second = await d.batch(`if [ -e ${once} ]; then echo fine; else touch ${once}; exit 4; fi`, ['-g', '0', '--retry', '3']);
  const ok = await d.waitState(second, 'COMPLETED', 30000);
  t.equal(ok.attempt, 2, 'the second run succeeded');

  const timed = await d.batch('sleep 30', ['-g', '0', '--retry', '3', '-t', '1']);
  const tj = await d.waitState(timed, 'TIMED_OUT', 30000);
  t.equal(tj.attempt, 1, 'a timed-out job is not retried');
  const bad = await d.run('xbatch', ['-g', '0', '--retry', '11', '--wrap', 'true']);
  t.equal(bad.code, 2);
});
