/**
 * Storage faults: XLURM_HOME on a small tmpfs that the test fills up. The
 * daemon runs as `xlurm start` runs it, so daemon.log is on the full file
 * system too. While the disk is full: submissions are accepted while the
 * daemon's pre-written WAL has room, then get a clear STORAGE error,
 * the daemon keeps answering, running jobs keep running and a job that ends
 * keeps its real outcome; once space is freed everything continues, nothing
 * is lost and the database is intact.
 *
 * Needs root (mount -t tmpfs); skipped with the reason otherwise.
 */
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { supervisorOf } from '../helpers/chaos';
import { Daemon } from '../helpers/daemon';
import { fill, fillSlack, mountTmpfs } from '../helpers/disk';
import { exchange, stopSupervisorsOf } from '../helpers/probe';
import { keepsHolding, pidAlive, waitFor } from '../helpers/wait';
import { peerMissing } from '../helpers/tap';

const MiB = 1024 * 1024;

t.test('a full disk under XLURM_HOME loses nothing', async (t) => {
  const m = mountTmpfs(t, 16 * MiB);
  if (m.why !== undefined) { peerMissing(t, m.why); return; }
  const home = path.join(m.dir, 'home');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-full-work-'));
  fs.chmodSync(work, 0o755);
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));

  const d = new Daemon(t, home, {});
  t.teardown(async () => {
    stopSupervisorsOf(home);
    const st = await d.request('status', {}).catch(() => null) as { ok?: boolean; result?: { pid: number } } | null;
    await d.run('xlurm', ['stop']);
    if (st?.ok) await waitFor(() => !pidAlive(st.result!.pid), { what: 'daemon exit' });
  });
  // As `xlurm start` runs it: in the background, daemon.log under XLURM_HOME (on the tmpfs).
  const start = async () => {
    const r = await d.run('xlurm', ['start', '--backend', 'none', '--max-running', '2']);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, 'xlurm started\n');
  };
  await start();
  const status = async () => {
    const r = await d.request('status', {}) as { ok: boolean; result: { pid: number; counts: Record<string, number> } };
    t.ok(r.ok, 'status answered');
    return r.result;
  };
  let daemonPid = (await status()).pid;

  // A ends while the disk is full (once the test creates aGo, off the full disk); R runs until
  // cancelled; B waits for a slot.
  const aGo = path.join(work, 'a-go');
  const aDone = path.join(work, 'a-done');
  const a = await d.batch(`while [ ! -e ${aGo} ]; do sleep 0.05; done; echo > ${aDone}; exit 7`, ['-g', '0']);
  const r = await d.batch('sleep 120', ['-g', '0']);
  await d.waitState(a, 'RUNNING');
  await d.waitState(r, 'RUNNING');
  const bRan = path.join(work, 'b-ran');
  const b = await d.batch(`echo > ${bRan}`, ['-g', '0']);

  const extra: number[] = []; // accepted while the disk was full
  const cancelled = new Set<number>(); // cancellations the client was told about
  const filler = fill(m.dir);
  fillSlack(path.join(home, 'daemon.log'));
  t.comment(`filled: ${fs.statSync(filler).size} bytes of filler`);

  t.test('while full: submissions get a clear STORAGE error, the daemon keeps answering', async (t) => {
    const accepted: number[] = [];
    // The daemon keeps its write-ahead log written out to full size, so
    // submissions go on being accepted (and durable) until that room is used
    // up: submit over the socket until the database refuses.
    const submitRaw = () => exchange(d.socket, JSON.stringify({
      v: 1, op: 'submit', args: { command: ['true'], cwd: work, env: {}, name: 'x', count: 0 },
    }) + '\n');
    let raw = await submitRaw();
    for (let i = 0; i < 20000 && (raw.frame as { ok: boolean }).ok; i++) {
      accepted.push((raw.frame as { result: { id: number } }).result.id);
      raw = await submitRaw();
    }
    t.comment(`${accepted.length} submissions accepted while the disk was full`);
    t.match(raw.frame, { ok: false, error: { code: 'STORAGE', message: /disk is full/ } });
    const x = await d.run('xbatch', ['-g', '0', '--wrap', 'true']);
    t.equal(x.code, 1);
    t.match(x.stderr, /^xlurm: cannot write the job database: disk is full; free space under XLURM_HOME and retry\n$/);
    t.equal((await status()).pid, daemonPid, 'the same daemon answers');
    t.equal((await d.jobs()).filter((j) => accepted.includes(j.id as number)).length, accepted.length, 'every accepted submission is listed');
    extra.push(...accepted);
  });

  t.test('while full: the daemon restarts (SIGKILL, then xlurm start)', async (t) => {
    process.kill(daemonPid, 'SIGKILL');
    await waitFor(() => !pidAlive(daemonPid), { what: 'daemon gone' });
    await start();
    daemonPid = (await status()).pid;
    t.equal((await d.job(r)).state, 'RUNNING', 'the running job was adopted');
  });

  t.test('while full: a cancellation is done, or refused with the reason, never silently lost', async (t) => {
    for (const id of [b, r]) {
      const x = await d.run('xcancel', [String(id)]);
      if (x.code === 0) {
        t.equal(x.stdout, `Cancellation requested for job ${id}\n`);
        cancelled.add(id);
      } else {
        t.match(x.stderr, /^xlurm: .*disk is full; free space under XLURM_HOME and retry\n$/, `job ${id}: the refusal names the cause`);
      }
    }
    t.equal((await status()).pid, daemonPid, 'the daemon survived logging to a full daemon.log');
  });

  t.test('while full: a running job keeps running, and ending it keeps its outcome', async (t) => {
    fs.writeFileSync(aGo, '');
    await waitFor(() => fs.existsSync(aDone), { timeout: 20000, what: 'job A to finish its payload' });
    // The payload exited and its supervisor cannot write the result. It must
    // wait for space (holding the job's lock, so the job stays RUNNING), not
    // exit without a result (which the daemon would report as vanished).
    // Nothing marks "waits for good", so it is watched for a while.
    let state = 'RUNNING';
    const held = await keepsHolding(async () => {
      state = (await d.job(a)).state as string;
      return supervisorOf(home, a) !== undefined && state === 'RUNNING';
    }, 1500);
    t.ok(held, `job A's supervisor waits for space while the disk is full (job ${state})`);
    t.equal((await status()).pid, daemonPid, 'the daemon still answers');
  });

  t.test('after space is freed everything continues', async (t) => {
    const freedAt = Math.floor(Date.now() / 1000);
    fs.unlinkSync(filler);
    const ja = await d.waitState(a, ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'], 30000);
    t.match(ja.result, { state: 'FAILED', exit_code: 7, error: null }, 'job A keeps its real outcome');
    t.ok(ja.result.finished_at <= freedAt, 'finished_at is when the job ended, not when the result could be written');
    const jb = await d.waitState(b, ['COMPLETED', 'CANCELLED'], 30000);
    t.equal(jb.state, cancelled.has(b) ? 'CANCELLED' : 'COMPLETED', 'job B as the client was told');
    t.equal(fs.existsSync(bRan), !cancelled.has(b), 'job B ran only if its cancellation was refused');
    if (!cancelled.has(r)) {
      t.equal((await d.job(r)).state, 'RUNNING', 'job R still runs (its cancellation was refused)');
      t.equal((await d.run('xcancel', [String(r)])).code, 0);
    }
    t.equal((await d.waitState(r, ['CANCELLED', 'FAILED', 'COMPLETED'], 30000)).state, 'CANCELLED');
    const extraIds = new Set(extra);
    await waitFor(async () => (await d.jobs()).filter((j) => extraIds.has(j.id as number) && j.state === 'COMPLETED').length === extra.length,
      { timeout: 120000, what: `the ${extra.length} jobs accepted while full to complete` });
    t.pass(`all ${extra.length} jobs accepted while the disk was full ran`);
    const after = await d.batch('echo after', ['-g', '0']);
    t.equal((await d.waitState(after, 'COMPLETED')).result.exit_code, 0, 'new jobs run');
    t.equal((await status()).pid, daemonPid, 'one daemon since the restart');
  });

  t.test('the database is intact', async (t) => {
    await d.run('xlurm', ['stop']);
    await waitFor(() => !pidAlive(daemonPid), { what: 'daemon exit' });
    // The first line written after the disk had space again ("stopping") says how many were lost.
    const log = fs.readFileSync(path.join(home, 'daemon.log'), 'utf8');
    t.match(log, /daemon log: \d+ line\(s\) could not be written \(ENOSPC\)\n.* xlurm daemon stopping/, 'daemon.log says that lines were lost while the disk was full');
    const db = new Database(path.join(home, 'xlurm.db'), { readonly: true });
    t.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    const rows = db.prepare('SELECT id, state FROM jobs ORDER BY id').all() as Array<{ id: number; state: string }>;
    db.close();
    t.same(rows.filter((r) => r.state === 'PENDING' || r.state === 'RUNNING'), [], 'no job left pending or running');
    t.ok(rows.some((r) => r.id === a) && rows.some((r) => r.id === b), 'jobs A and B are there');
  });
});
