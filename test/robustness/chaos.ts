/**
 * Crash chaos (bounded to about a minute): a few hundred short jobs through
 * the protocol while the daemon is SIGKILLed and restarted at seeded moments
 * and a few supervisors are SIGKILLed; then every submission is accounted
 * for, no job ran twice, and what the daemon reports matches what each job
 * recorded itself. `npm run soak -- --seed N --duration S` runs the same
 * workload for longer.
 */
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { runChaos } from '../helpers/chaos';
import { startDaemon } from '../helpers/daemon';
import { stopSupervisorsOf } from '../helpers/probe';

const SEED = Number(process.env.XLURM_CHAOS_SEED ?? 7);

t.test('jobs survive daemon and supervisor SIGKILLs: nothing lost, nothing run twice', async (t) => {
  const report = await runChaos({
    seed: SEED,
    durationMs: 30000,
    maxJobs: 300,
    rate: 12,
    maxRunning: 8,
    victims: 4,
    killEveryMs: [2500, 6000],
    teardown: (fn) => t.teardown(fn),
    log: (line) => t.comment(line),
  });
  const { violations, ...figures } = report;
  t.comment(JSON.stringify(figures));
  t.same(violations, [], 'no violations');
  t.ok(report.daemonKills >= 3, `the daemon was killed ${report.daemonKills} times`);
  t.equal(report.supervisorKills, 4, 'four supervisors were killed');
  t.ok(report.accepted >= 100, `${report.accepted} jobs accepted`);
  t.ok((report.states.COMPLETED ?? 0) > 0 && (report.states.TIMED_OUT ?? 0) > 0 && (report.states.CANCELLED ?? 0) > 0,
    'the mix reached COMPLETED, TIMED_OUT and CANCELLED');
});

t.test('a start committed but never spawned (daemon gone in between) is run after a restart, once', async (t) => {
  const d = await startDaemon(t, { maxRunning: 1 });
  t.teardown(() => stopSupervisorsOf(d.home));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-unspawned-'));
  fs.chmodSync(dir, 0o755);
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const blocker = await d.batch('sleep 300', ['-g', '0']);
  await d.waitState(blocker, 'RUNNING');
  const marker = path.join(dir, 'ran');
  const p = await d.batch(`echo "$XLURM_JOB_ID" >> ${marker}`, ['-g', '0']);
  await d.kill('SIGKILL');
  // What a daemon killed right after committing the start leaves: RUNNING, no lock file, no supervisor.
  const db = new Database(path.join(d.home, 'xlurm.db'));
  db.prepare(`UPDATE jobs SET state = 'RUNNING', started_at = submitted_at WHERE id = ?`).run(p);
  db.close();
  t.notOk(fs.existsSync(path.join(d.jobsDir, `${p}.lock`)));

  await d.start();
  t.equal((await d.job(p)).state, 'PENDING', 'back in the queue (the blocker holds the only slot)');
  await d.request('cancel', { id: blocker });
  const j = await d.waitState(p, ['COMPLETED', 'FAILED']);
  t.equal(j.state, 'COMPLETED', `it ran (${j.result?.error ?? 'no error'})`);
  t.equal(fs.readFileSync(marker, 'utf8'), `${p}\n`, 'exactly once');
});

t.test('a supervisor gone before it started the payload (lock still says "spawn") is run after a restart, once; one that started it is not', async (t) => {
  const d = await startDaemon(t, { maxRunning: 1 });
  t.teardown(() => stopSupervisorsOf(d.home));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-unstarted-'));
  fs.chmodSync(dir, 0o755);
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const blocker = await d.batch('sleep 300', ['-g', '0']);
  await d.waitState(blocker, 'RUNNING');
  const marker = path.join(dir, 'ran');
  const unstarted = await d.batch(`echo "$XLURM_JOB_ID" >> ${marker}`, ['-g', '0']);
  const started = await d.batch(`echo "$XLURM_JOB_ID" >> ${marker}`, ['-g', '0']);
  await d.kill('SIGKILL');
  // What a daemon killed between creating the lock file and spawn(2) leaves
  // (or a supervisor killed before it forked the payload): RUNNING, a free
  // lock file still holding the daemon's mark, no result. Beside it, a job
  // whose supervisor had started the payload and then vanished.
  const db = new Database(path.join(d.home, 'xlurm.db'));
  db.prepare(`UPDATE jobs SET state = 'RUNNING', started_at = submitted_at WHERE id IN (?, ?)`).run(unstarted, started);
  db.close();
  fs.writeFileSync(path.join(d.jobsDir, `${unstarted}.lock`), 'spawn\n', { mode: 0o600 });
  fs.writeFileSync(path.join(d.jobsDir, `${started}.lock`), 'started\n', { mode: 0o600 });

  await d.start();
  t.equal((await d.job(unstarted)).state, 'PENDING', 'back in the queue (the blocker holds the only slot)');
  const s = await d.waitState(started, 'FAILED');
  t.equal(s.result.error, 'executor worker disappeared without an exit result', 'a started payload is never rerun');
  await d.request('cancel', { id: blocker });
  const j = await d.waitState(unstarted, ['COMPLETED', 'FAILED']);
  t.equal(j.state, 'COMPLETED', `it ran (${j.result?.error ?? 'no error'})`);
  t.equal(fs.readFileSync(marker, 'utf8'), `${unstarted}\n`, 'exactly once, and only the unstarted job');
  t.equal(fs.readFileSync(path.join(d.jobsDir, `${unstarted}.lock`), 'utf8'), 'started\n', 'its supervisor marked the payload started');
});
