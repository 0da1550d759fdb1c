/**
 * The supervisor launcher (`xlurm-stepd --launcher`, forked supervisors) dying under the
 * daemon: jobs it started run on and are collected through their locks, requests it never
 * handled run once through a new launcher, and new jobs keep starting.
 */
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { launcherOf as launcherOfPid, pidsByComm, stopSupervisorsOf } from '../helpers/probe';
import { waitFor } from '../helpers/wait';
import type { Tap } from '../helpers/tap';

const ppidOf = (pid: number) => Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
const launcherOf = (d: Daemon) => launcherOfPid(d.proc!.pid!);

function scratch(t: Tap): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-launcher-'));
  fs.chmodSync(dir, 0o755);
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('jobs outlive a killed launcher: their ends are collected, cancel works, new jobs start', async (t) => {
  const d = await startDaemon(t, { maxRunning: 4 });
  t.teardown(() => stopSupervisorsOf(d.home));
  const dir = scratch(t);
  const go = path.join(dir, 'go');
  const waiter = await d.batch(`while [ ! -e ${go} ]; do sleep 0.05; done; exit 3`, ['-g', '0']);
  const sleeper = await d.batch('sleep 300', ['-g', '0']);
  await d.waitState(waiter, 'RUNNING');
  await d.waitState(sleeper, 'RUNNING');
  const launcher = await waitFor(() => launcherOf(d), { what: 'the launcher' });
  // RUNNING means the start was requested; the launcher forks each supervisor a moment later.
  const supervisors = await waitFor(() => {
    const kids = pidsByComm('xlurm-stepd').filter((pid) => { try { return ppidOf(pid) === launcher; } catch { return false; } });
    return kids.length === 2 ? kids : undefined;
  }, { what: "both supervisors as the launcher's children" });
  t.equal(supervisors.length, 2, 'both supervisors are the launcher\'s children');
  // And both have started their payloads (the lock mark says so), so neither can go back to the queue.
  for (const id of [waiter, sleeper]) {
    const lock = path.join(d.jobsDir, `${id}.lock`);
    await waitFor(() => fs.existsSync(lock) && fs.readFileSync(lock, 'utf8') === 'started\n', { what: `job ${id} started` });
  }

  process.kill(launcher, 'SIGKILL');
  await waitFor(() => !pidsByComm('xlurm-stepd').includes(launcher), { what: 'the launcher gone' });
  t.equal((await d.job(waiter)).state, 'RUNNING', 'its jobs still run');

  fs.writeFileSync(go, '');
  const w = await d.waitState(waiter, ['COMPLETED', 'FAILED']);
  t.match(w, { state: 'FAILED', result: { exit_code: 3 } }, 'its own exit code, through the lock and result');
  await d.request('cancel', { id: sleeper });
  t.match(await d.waitState(sleeper, ['CANCELLED', 'FAILED']), { state: 'CANCELLED' }, 'cancelled through the marker');

  const again = await d.batch('echo again', ['-g', '0']);
  t.equal((await d.waitState(again, ['COMPLETED', 'FAILED'])).state, 'COMPLETED', 'a new job starts');
  // Within a second of the loss jobs start directly; after it, through a new launcher.
  const next = await waitFor(async () => {
    const id = await d.batch('true', ['-g', '0']);
    t.equal((await d.waitState(id, ['COMPLETED', 'FAILED'])).state, 'COMPLETED');
    return launcherOf(d);
  }, { what: 'a new launcher', interval: 200 });
  t.not(next, launcher, 'a new launcher');
  t.match(d.output, /supervisor launcher exited; watching 2 job\(s\) through their locks/);
});

t.test('requests the launcher never handled: each of those jobs runs once, later', async (t) => {
  const d = await startDaemon(t, { maxRunning: 4 });
  t.teardown(() => stopSupervisorsOf(d.home));
  const dir = scratch(t);
  const marker = path.join(dir, 'ran');
  const first = await d.batch('true', ['-g', '0']); // starts the launcher
  await d.waitState(first, 'COMPLETED');
  const launcher = await waitFor(() => launcherOf(d), { what: 'the launcher' });
  // A launcher that takes requests but never acts on them, then dies.
  process.kill(launcher, 'SIGSTOP');
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await d.batch(`echo "$XLURM_JOB_ID" >> ${marker}`, ['-g', '0']));
  for (const id of ids) await d.waitState(id, 'RUNNING');
  t.notOk(fs.existsSync(marker), 'nothing ran yet');
  process.kill(launcher, 'SIGKILL');
  for (const id of ids) {
    const j = await d.waitState(id, ['COMPLETED', 'FAILED']);
    t.equal(j.state, 'COMPLETED', `job ${id} ran (${j.result?.error ?? 'no error'})`);
  }
  const ran = fs.readFileSync(marker, 'utf8').trim().split('\n').map(Number).sort((a, b) => a - b);
  t.same(ran, ids, 'each exactly once');
  t.match(d.output, /supervisor launcher stopped before its supervisor started the job/);
});
