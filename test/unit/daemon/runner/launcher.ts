// The long-lived launcher (runner/launcher.ts) with the real xlurm-stepd: each job answered
// once by onSpawned (a pid) and then onExit; signals reach the tagged supervisor; a launcher
// that goes away reports the jobs it still owed (onLost), also when it never came up.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { accountByUid, flockExclusive, memfd, stepdPath } from '@xlurm/native';
import { SupervisorLauncher, type LaunchCallbacks } from '../../../../packages/daemon/src/runner/launcher';
import { encodeStepdSpec } from '../../../../packages/daemon/src/runner/stepd-spec';
import type { Tap } from '../../../helpers/tap';
import { waitFor } from '../../../helpers/wait';

if (!fs.existsSync(stepdPath())) {
  t.plan(0, 'xlurm-stepd not built (npm run build:native)');
  process.exit(0);
}

type Event = ['spawned', NodeJS.ErrnoException | null, number] | ['exit'];

function started(t: Tap) {
  const logs: string[] = [];
  const lost: number[][] = [];
  const l = SupervisorLauncher.start(stepdPath(), (m) => logs.push(m), (ids) => lost.push(ids));
  t.teardown(() => l?.close());
  // The launcher's watch does not keep Node alive; this does, until the test ends.
  const keep = setInterval(() => undefined, 1000);
  t.teardown(() => clearInterval(keep));
  return { l: l!, logs, lost };
}

/** Job `id` running `argv` as this user, sent to the launcher; resolves its events as they come. */
function job(t: Tap, l: SupervisorLauncher, id: number, argv: string[]) {
  const dir = path.join(t.testdirName, `job-${id}`);
  fs.mkdirSync(dir, { recursive: true });
  const result = path.join(dir, `${id}.result`);
  const spec = encodeStepdSpec({
    jobId: id, resultPath: result, cancelPath: path.join(dir, `${id}.cancel`), uid: process.geteuid!(), gid: process.getegid!(),
    ownerName: accountByUid(process.geteuid!())?.name ?? 'unknown', groups: [], switchUser: false, cwd: dir, timeLimit: 0, killGrace: 1,
    argv, env: ['PATH=/usr/bin:/bin'],
  });
  const specFd = memfd('spec');
  fs.writeSync(specFd, spec, 0, spec.length, 0);
  const logFd = fs.openSync(path.join(dir, `${id}.log`), 'a', 0o600);
  const lockFd = fs.openSync(path.join(dir, `${id}.lock`), 'w+', 0o600);
  t.ok(flockExclusive(lockFd));
  const events: Event[] = [];
  const cb: LaunchCallbacks = { onSpawned: (e, pid) => { events.push(['spawned', e, pid]); }, onExit: () => { events.push(['exit']); } };
  try {
    l.spawn(id, [specFd, logFd, logFd, lockFd], cb);
  } finally {
    for (const fd of [specFd, logFd, lockFd]) fs.closeSync(fd);
  }
  const result$ = () => JSON.parse(fs.readFileSync(result, 'utf8')) as { state: string; exit_code: number };
  return { events, result: result$, exited: () => waitFor(() => events.some((e) => e[0] === 'exit'), { what: `job ${id} reaped` }) };
}

t.test('a job: its pid once, then its exit once; the result is the job\'s', async (t) => {
  t.testdir();
  const { l, lost } = started(t);
  t.ok(l.alive);
  const j = job(t, l, 7, ['sh', '-c', 'exit 3']);
  await j.exited();
  t.equal(j.events.length, 2);
  t.match(j.events[0], ['spawned', null, Number]);
  t.ok((j.events[0] as [string, null, number])[2] > 0);
  t.match(j.result(), { state: 'FAILED', exit_code: 3 });
  t.equal(l.signal(7, 'SIGTERM'), false, 'a reaped job is not signalled');
  t.same(lost, []);
});

t.test('a signal reaches the tagged supervisor: the job is cancelled', async (t) => {
  t.testdir();
  const { l } = started(t);
  const a = job(t, l, 1, ['sleep', '600']);
  const b = job(t, l, 2, ['sleep', '600']);
  t.equal(l.signal(2, 'SIGUSR1'), true);
  await b.exited();
  t.match(b.result(), { state: 'CANCELLED' });
  t.notOk(a.events.some((e) => e[0] === 'exit'), 'the other job runs on');
  t.equal(l.signal(99, 'SIGUSR1'), false, 'no such job');
  l.signal(1, 'SIGUSR1');
  await a.exited();
});

t.test('ids: uint32 only, and nothing once closed', async (t) => {
  t.testdir();
  const { l } = started(t);
  t.same([0, 1, 0xffffffff, 0x100000000, -1, 1.5].map((id) => l.accepts(id)), [true, true, true, false, false, false]);
  l.close();
  t.notOk(l.alive);
  t.notOk(l.accepts(1));
  t.equal(l.signal(1, 'SIGTERM'), false);
});

t.test('a launcher that dies: onLost once, with the jobs it still owed', async (t) => {
  t.testdir();
  const { l, lost } = started(t);
  const j = job(t, l, 5, ['sleep', '600']);
  await waitFor(() => j.events.length > 0, { what: 'job 5 spawned' });
  (l as unknown as { proc: ChildProcess }).proc.kill('SIGKILL');
  await waitFor(() => lost.length > 0, { what: 'the loss reported' });
  t.same(lost, [[5]]);
  t.notOk(l.alive);
  t.notOk(j.events.some((e) => e[0] === 'exit'), 'its supervisor runs on, unknown to the launcher');
  const pid = (j.events[0] as [string, null, number])[2];
  process.kill(pid, 'SIGUSR1');
  // Gone, or a zombie (an orphan's zombie lingers where PID 1 does not reap).
  const gone = () => { try { return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z'); } catch { return true; } };
  await waitFor(gone, { what: 'the orphaned supervisor gone' });
});

t.test('a launcher that cannot be started: logged, and reported lost with nothing owed', async (t) => {
  const logs: string[] = [];
  const lost: number[][] = [];
  const l = SupervisorLauncher.start(path.join(t.testdir(), 'no-such-stepd'), (m) => logs.push(m), (ids) => lost.push(ids));
  t.teardown(() => l?.close());
  await waitFor(() => lost.length > 0, { what: 'the loss reported' });
  t.same(lost, [[]]);
  t.match(logs, [/^supervisor launcher: spawn .*no-such-stepd ENOENT$/]);
  t.notOk(l?.alive);
});
