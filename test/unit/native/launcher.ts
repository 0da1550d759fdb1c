// The supervisor launcher: `xlurm-stepd --launcher` (native/src/stepd/launcher.c) forking
// supervisors on request, and the daemon's end of its socket (native/src/addon/launcher.cc).
// Each case starts a real launcher the way the daemon does (its socket as fd 3) and sends it
// real job specs, locks and logs. Needs `npm run build:native`.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  LAUNCH, accountByUid, flockExclusive, launcherClose, launcherPair, launcherSignal, launcherSpawn, launcherWatch, memfd, stepdPath,
  type LauncherHandle,
} from '../../../native/ts/index';
import { waitFor, pidAlive } from '../../helpers/wait';
import type { Tap } from '../../helpers/tap';


const built = fs.existsSync(path.resolve(__dirname, '../../../native/build/Release/xlurm-stepd'));
if (!built) {
  t.plan(0, 'xlurm-stepd not built (npm run build:native)');
  process.exit(0);
}

const euid = process.geteuid!();
const egid = process.getegid!();
const owner = accountByUid(euid)?.name ?? 'unknown';

interface Message { op: number; tag: number; value: number }

/** A launcher started as the daemon starts it, and everything it said. */
class Launched {
  readonly messages: Message[] = [];
  readonly exit: Promise<unknown>;
  constructor(readonly proc: ChildProcess, readonly handle: LauncherHandle) {
    this.exit = once(proc, 'exit');
  }
  /** The first message matching, once it has come. */
  async next(op: number, tag: number): Promise<Message> {
    let m: Message | undefined;
    await waitFor(() => (m = this.messages.find((x) => x.op === op && x.tag === tag)) !== undefined, { what: `launcher message ${op} for ${tag}` });
    return m!;
  }
}

function startLauncher(t: Tap): Launched {
  const [mine, theirs] = launcherPair();
  const proc = spawn(stepdPath(), ['--launcher'], { stdio: ['ignore', 'ignore', 'inherit', theirs], detached: true, env: {}, cwd: '/' });
  fs.closeSync(theirs);
  let self: Launched | undefined;
  const handle = launcherWatch(mine, (op, tag, value) => self!.messages.push({ op, tag, value }));
  self = new Launched(proc, handle);
  // The watch does not keep Node alive; this interval does, until the test ends.
  const keep = setInterval(() => {}, 1000);
  t.teardown(() => { clearInterval(keep); launcherClose(handle); try { proc.kill('SIGKILL'); } catch { /* gone */ } });
  return self;
}

const nul = (fields: string[]) => Buffer.from(fields.map((f) => `${f}\0`).join(''));

interface Job { dir: string; lock: string; log: string; result: string }

/** Spec (in a memfd), log and held lock for job `tag`, sent to the launcher; our copies closed. */
function sendJob(t: Tap, l: Launched, tag: number, argv: string[]): Job {
  const dir = path.join(t.testdirName, `job-${tag}`);
  fs.mkdirSync(dir, { recursive: true });
  const job = { dir, lock: path.join(dir, `${tag}.lock`), log: path.join(dir, `${tag}.log`), result: path.join(dir, `${tag}.result`) };
  const spec = nul([
    'XLURM-STEPD-5', String(tag), job.result, path.join(dir, `${tag}.cancel`), String(euid), String(egid), owner,
    '0', '0', dir, '0', '1', '0', '', '0', String(argv.length), ...argv, '1', 'PATH=/usr/bin:/bin',
  ]);
  const specFd = memfd('spec');
  fs.writeSync(specFd, spec, 0, spec.length, 0);
  const logFd = fs.openSync(job.log, 'a', 0o600);
  const lockFd = fs.openSync(job.lock, 'w+', 0o600);
  t.equal(flockExclusive(lockFd), true, 'lock taken before the request');
  try {
    launcherSpawn(l.handle, tag, [specFd, logFd, logFd, lockFd]);
  } finally {
    for (const fd of [specFd, logFd, lockFd]) fs.closeSync(fd);
  }
  return job;
}

const statFields = (pid: number) => fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
const comm = (pid: number) => { try { return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { return ''; } };
/** Running, not a zombie nor gone (an orphan's zombie lingers where PID 1 does not reap). */
const running = (pid: number) => { try { return statFields(pid)[0] !== 'Z'; } catch { return false; } };
/** The launcher's idle spare (a child named xlurm-spare), once there is one other than `not`. */
const spareOf = (l: Launched, not?: number) => waitFor(() => {
  const kids = fs.readFileSync(`/proc/${l.proc.pid}/task/${l.proc.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return kids.find((k) => k !== not && comm(k) === 'xlurm-spare' && running(k));
}, { what: 'a spare supervisor' });
const readResult = (job: Job) => JSON.parse(fs.readFileSync(job.result, 'utf8')) as { state: string; exit_code: number };

t.test('a launched supervisor runs its job and is reported: SPAWNED with its pid, EXITED once reaped', async (t) => {
  t.testdir();
  const l = startLauncher(t);
  const job = sendJob(t, l, 41, ['sh', '-c', 'echo hello; ls /proc/$PPID/fd | tr "\\n" " "; echo; exec sleep 1000']);
  const spawned = await l.next(LAUNCH.SPAWNED, 41);
  const pid = spawned.value;
  t.ok(pid > 0, 'a pid');
  const [, ppid, , sid] = statFields(pid);
  t.equal(Number(ppid), l.proc.pid, "the launcher's child");
  t.equal(Number(sid), pid, 'in a session of its own');
  t.equal(fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim(), 'xlurm-stepd');
  await waitFor(() => fs.readFileSync(job.log, 'utf8').split('\n').length > 2, { what: 'job output' });
  const [hello, fds] = fs.readFileSync(job.log, 'utf8').split('\n');
  t.equal(hello, 'hello');
  // Nothing of the launcher's (its socket, its signalfd, other jobs' descriptors) in the supervisor.
  t.same(fds!.trim().split(' ').sort(), ['0', '1', '2', '3'], "the supervisor holds fds 0-3 only");
  t.equal(fs.readlinkSync(`/proc/${pid}/fd/3`), job.lock, 'fd 3 is the lock');
  const probe = fs.openSync(job.lock, 'r+');
  t.equal(flockExclusive(probe), false, 'the supervisor holds the lock');
  t.equal(l.messages.some((m) => m.op === LAUNCH.EXITED), false, 'no exit reported while it runs');

  process.kill(pid, 'SIGTERM'); // a cancel request
  const exited = await l.next(LAUNCH.EXITED, 41);
  t.equal(exited.value, 0, 'wait status: exit 0 (a result was written)');
  t.match(readResult(job), { state: 'CANCELLED', exit_code: 130 });
  t.equal(flockExclusive(probe), true, 'the lock is free once the exit is reported');
  fs.closeSync(probe);
});

t.test('an idle launcher keeps a spare, forked ahead: the next job starts in it, and another spare follows', async (t) => {
  t.testdir();
  const l = startLauncher(t);
  const spare = await spareOf(l);
  const [, ppid, , sid] = statFields(spare);
  t.equal(Number(ppid), l.proc.pid, "the launcher's child");
  t.equal(Number(sid), spare, 'already in a session of its own');
  // Nothing of the launcher's but its standard descriptors: its own socket as fd 3, its own signalfd.
  t.same(fs.readdirSync(`/proc/${spare}/fd`).sort(), ['0', '1', '2', '3', '4']);
  t.match(fs.readlinkSync(`/proc/${spare}/fd/3`), /^socket:/);
  t.match(fs.readlinkSync(`/proc/${spare}/fd/4`), /signalfd/);

  const job = sendJob(t, l, 51, ['sh', '-c', 'echo hello; ls /proc/$PPID/fd | tr "\\n" " "; echo; exec sleep 1000']);
  t.equal((await l.next(LAUNCH.SPAWNED, 51)).value, spare, 'the spare is the supervisor');
  await waitFor(() => fs.readFileSync(job.log, 'utf8').split('\n').length > 2, { what: 'job output' });
  const [hello, fds] = fs.readFileSync(job.log, 'utf8').split('\n');
  t.equal(hello, 'hello');
  t.same(fds!.trim().split(' ').sort(), ['0', '1', '2', '3'], 'the supervisor holds fds 0-3 only');
  t.equal(fs.readlinkSync(`/proc/${spare}/fd/3`), job.lock, 'fd 3 is the lock');
  t.equal(comm(spare), 'xlurm-stepd', 'named as any supervisor');
  const next = await spareOf(l, spare);
  t.not(next, spare, 'a new spare once the launcher is idle again');

  process.kill(spare, 'SIGTERM'); // a cancel request
  t.equal((await l.next(LAUNCH.EXITED, 51)).value, 0);
  t.match(readResult(job), { state: 'CANCELLED', exit_code: 130 });
});

t.test('a spare signalled while idle goes away: the signal does not cancel the next job', async (t) => {
  t.testdir();
  const l = startLauncher(t);
  for (const sig of ['SIGTERM', 'SIGUSR1', 'SIGKILL'] as const) {
    const spare = await spareOf(l);
    process.kill(spare, sig);
    await waitFor(() => !running(spare), { what: `the spare gone after ${sig}` });
    // Sent at once: the launcher may not have reaped it yet, and forks for the job instead.
    const tag = 60 + ['SIGTERM', 'SIGUSR1', 'SIGKILL'].indexOf(sig);
    const job = sendJob(t, l, tag, ['true']);
    t.not((await l.next(LAUNCH.SPAWNED, tag)).value, spare, `${sig}: another process runs the job`);
    await l.next(LAUNCH.EXITED, tag);
    t.match(readResult(job), { state: 'COMPLETED', exit_code: 0 }, `${sig}: the job runs`);
  }
  await spareOf(l);
  t.equal(l.messages.length, 6, 'nothing is said about spares');
});

t.test("a spare ends with its launcher", async (t) => {
  t.testdir();
  const l = startLauncher(t);
  const spare = await spareOf(l);
  launcherClose(l.handle);
  await l.exit;
  await waitFor(() => !running(spare), { what: 'the spare gone' });
  t.pass('no spare outlives the launcher');
});

t.test('signals go to the tagged supervisor, also when sent before its pid is known', async (t) => {
  t.testdir();
  const l = startLauncher(t);
  const job = sendJob(t, l, 7, ['sleep', '1000']);
  launcherSignal(l.handle, 7, 10 /* SIGUSR1 */); // right behind the spawn request
  await l.next(LAUNCH.EXITED, 7);
  t.match(readResult(job), { state: 'CANCELLED', exit_code: 130 }, 'the early cancel was kept, not lost');
  // A tag that is gone (or never was) is ignored, and the launcher goes on.
  launcherSignal(l.handle, 7, 15);
  launcherSignal(l.handle, 12345, 15);
  const again = sendJob(t, l, 8, ['true']);
  await l.next(LAUNCH.EXITED, 8);
  t.match(readResult(again), { state: 'COMPLETED', exit_code: 0 });
});

t.test('many requests at once: each job is started once and reported once', async (t) => {
  t.testdir();
  const l = startLauncher(t);
  const jobs = Array.from({ length: 40 }, (_, i) => sendJob(t, l, 100 + i, ['sh', '-c', `echo ${100 + i}`]));
  await waitFor(() => l.messages.filter((m) => m.op === LAUNCH.EXITED).length === jobs.length, { what: 'every exit', timeout: 30000 });
  for (let i = 0; i < jobs.length; i++) {
    t.equal(l.messages.filter((m) => m.op === LAUNCH.SPAWNED && m.tag === 100 + i).length, 1);
    t.equal(fs.readFileSync(jobs[i]!.log, 'utf8'), `${100 + i}\n`);
    t.match(readResult(jobs[i]!), { state: 'COMPLETED' });
  }
  t.equal(l.messages.length, 2 * jobs.length, 'nothing else was said');
});

t.test("closing the daemon's end ends the launcher, not its supervisors", async (t) => {
  t.testdir();
  const l = startLauncher(t);
  const job = sendJob(t, l, 9, ['sleep', '1000']);
  const pid = (await l.next(LAUNCH.SPAWNED, 9)).value;
  launcherClose(l.handle);
  await l.exit;
  t.ok(pidAlive(pid), 'the supervisor still runs');
  t.not(Number(statFields(pid)[1]), l.proc.pid, 're-parented');
  t.throws(() => launcherSpawn(l.handle, 10, [0, 1, 2, 3]), { code: 'EPIPE' }, 'a closed handle refuses requests');
  process.kill(pid, 'SIGTERM');
  await waitFor(() => fs.existsSync(job.result), { what: 'the result' });
  t.match(readResult(job), { state: 'CANCELLED' });
});

t.test('a launcher that dies is reported once, as CLOSED', async (t) => {
  t.testdir();
  const l = startLauncher(t);
  const job = sendJob(t, l, 5, ['sleep', '1000']);
  const pid = (await l.next(LAUNCH.SPAWNED, 5)).value;
  l.proc.kill('SIGKILL');
  await l.next(LAUNCH.CLOSED, 0);
  await l.exit;
  t.equal(l.messages.filter((m) => m.op === LAUNCH.CLOSED).length, 1);
  t.throws(() => launcherSignal(l.handle, 5, 15), { code: 'EPIPE' });
  t.ok(pidAlive(pid), 'its supervisor lives on');
  process.kill(pid, 'SIGTERM');
  await waitFor(() => fs.existsSync(job.result), { what: 'the result' });
  t.match(readResult(job), { state: 'CANCELLED' });
});

t.test('argument checks', async (t) => {
  t.throws(() => launcherWatch(-1, () => {}), TypeError);
  const l = startLauncher(t);
  t.throws(() => launcherSpawn(l.handle, -1, [0, 1, 2, 3]), TypeError);
  t.throws(() => launcherSpawn(l.handle, 1, [0, 1, 2] as unknown as [number, number, number, number]), TypeError);
  t.throws(() => launcherSignal(l.handle, 1, 0), RangeError);
  t.throws(() => launcherSpawn({} as LauncherHandle, 1, [0, 1, 2, 3]), TypeError);
});

t.test('a launcher with no free descriptor answers EMFILE (the daemon then tries later), and recovers', { skip: !fs.existsSync('/usr/bin/prlimit') && 'needs prlimit (util-linux)' }, async (t) => {
  t.testdir();
  const l = startLauncher(t);
  const pid = l.proc.pid!;
  // fds 0-3, its signalfd and its spare's socket: with a limit of 6, the four descriptors of a
  // request cannot be installed.
  const limit = (soft: number) => execFileSync('prlimit', ['--pid', String(pid), `--nofile=${soft}:`]); // the soft limit only
  await spareOf(l);
  t.equal(fs.readdirSync(`/proc/${pid}/fd`).length, 6, 'the launcher holds six descriptors');
  limit(6);
  sendJob(t, l, 30, ['true']);
  const refused = await l.next(LAUNCH.SPAWNED, 30);
  t.equal(refused.value, -24, '-EMFILE');
  limit(1024);
  const ok = sendJob(t, l, 31, ['true']);
  await l.next(LAUNCH.EXITED, 31);
  t.match(readResult(ok), { state: 'COMPLETED' });
});
