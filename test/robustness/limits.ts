/**
 * Resource limits: a daemon with few file descriptors (RLIMIT_NOFILE 64)
 * refuses connections beyond what it can serve and recovers when they
 * close, without failing jobs; a job printing hundreds of megabytes does not
 * slow the daemon; and times that run backwards (a clock set back while a job
 * ran) never give negative or absurd durations.
 */
import t from 'tap';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { FrameDecoder } from '@xlurm/protocol';
import { supervisorOf } from '../helpers/chaos';
import { startDaemon } from '../helpers/daemon';
import { LatencyProbe, exchange, fdCount, freeFdNumbers, stopSupervisorsOf } from '../helpers/probe';
import { waitFor } from '../helpers/wait';

const MiB = 1024 * 1024;

function workDir(t: Tap.Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-limits-'));
  fs.chmodSync(dir, 0o755);
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

namespace Tap { export type Test = any }

t.test('descriptor exhaustion: refused gracefully, recovered when connections close, no job lost', async (t) => {
  const d = await startDaemon(t, { maxRunning: 1 });
  t.teardown(() => stopSupervisorsOf(d.home));
  const pid = d.proc!.pid!;
  const dir = workDir(t);
  execFileSync('prlimit', ['--pid', String(pid), '--nofile=64:64']);
  t.comment(`daemon at RLIMIT_NOFILE 64 with ${fdCount(pid)} descriptors open`);

  // A runs until released; B waits for its slot and has to start while descriptors are short.
  const release = path.join(dir, 'release');
  const a = await d.batch(`while [ ! -e ${release} ]; do sleep 0.05; done; exit 3`, ['-g', '0']);
  await d.waitState(a, 'RUNNING');
  const b = await d.batch(`echo b-ran > ${dir}/b`, ['-g', '0']);

  // Open connections until the daemon stops keeping them.
  const held: net.Socket[] = [];
  const outcomes = { kept: 0, busy: 0, closed: 0, refused: 0 };
  for (let i = 0; i < 120; i++) {
    const s = net.createConnection(d.socket);
    s.on('error', () => undefined);
    const what = await new Promise<'kept' | 'busy' | 'closed' | 'refused'>((resolve) => {
      let data = '';
      s.on('data', (c: Buffer) => { data += c.toString(); });
      s.once('connect', () => setTimeout(() => resolve(s.destroyed ? 'closed' : 'kept'), 30));
      s.once('close', () => resolve(/"BUSY"/.test(data) ? 'busy' : s.connecting ? 'refused' : 'closed'));
    });
    outcomes[what]++;
    if (what === 'kept') held.push(s);
  }
  t.comment(`120 connections: ${JSON.stringify(outcomes)}`);
  t.ok(outcomes.busy + outcomes.closed + outcomes.refused > 0, 'some connections were turned away');
  t.ok(outcomes.busy > 0, 'turned away with a BUSY error, not a bare close');
  t.ok(d.proc!.exitCode === null && d.proc!.signalCode === null, 'the daemon is alive');

  // Job A ends and B starts while the connections are still held (watched
  // through the file B writes: a query would be turned away too).
  fs.writeFileSync(release, '');
  await waitFor(() => fs.existsSync(path.join(dir, 'b')), { timeout: 20000, what: 'job B to run while descriptors are short' })
    .catch((e) => t.fail(String(e)));

  for (const s of held) s.destroy();
  await waitFor(() => d.ping(), { timeout: 10000, what: 'status answered again' });
  t.match((await d.waitState(a, ['FAILED', 'COMPLETED'])).result, { state: 'FAILED', exit_code: 3, error: null }, 'job A ended with its own outcome');
  const jb = await d.waitState(b, ['COMPLETED', 'FAILED']);
  t.equal(jb.state, 'COMPLETED', `job B ran (${jb.result?.error ?? ''})`);
  const c = await d.batch('true', ['-g', '0']);
  t.equal((await d.waitState(c, 'COMPLETED')).state, 'COMPLETED', 'new jobs run after recovery');
});

t.test('no descriptor left at all: a job that ends is collected later, one that cannot start waits', async (t) => {
  const d = await startDaemon(t, { maxRunning: 1 });
  t.teardown(() => stopSupervisorsOf(d.home));
  const pid = d.proc!.pid!;
  const dir = workDir(t);
  const limit = (n: number) => execFileSync('prlimit', ['--pid', String(pid), `--nofile=${n}:`]); // soft only: raising the hard limit needs CAP_SYS_RESOURCE
  const release = path.join(dir, 'release');
  const a = await d.batch(`while [ ! -e ${release} ]; do sleep 0.05; done; exit 3`, ['-g', '0']);
  await d.waitState(a, 'RUNNING');
  const bRan = path.join(dir, 'b');
  const b = await d.batch(`echo > ${bRan}`, ['-g', '0']);
  // Once our last connection is closed: a limit at the lowest free number leaves none.
  const [none, , two] = await waitFor(async () => {
    const n = fdCount(pid);
    await new Promise((r) => setTimeout(r, 100));
    return fdCount(pid) === n ? freeFdNumbers(pid, 3) : undefined;
  }, { what: 'a steady descriptor count' });
  limit(none!);
  t.comment(`RLIMIT_NOFILE ${none}: no free descriptor`);

  // A ends, but its lock cannot even be opened to collect it.
  const supervisor = supervisorOf(d.home, a)!;
  fs.writeFileSync(release, '');
  await waitFor(() => supervisorOf(d.home, a) !== supervisor, { what: 'job A\'s supervisor to exit' });
  await waitFor(() => d.output.includes(`job ${a}: cannot collect the result yet:`), { what: 'the daemon trying to collect job A' });

  // Two descriptors: A is collected (lock and result), B is committed as
  // started, but its supervisor cannot be spawned (no descriptor for the pipes).
  limit(two!);
  await waitFor(() => d.output.includes(`job ${b}: cannot start its supervisor yet`), { timeout: 10000, what: 'job B put back in the queue' })
    .catch((e) => t.fail(`${String(e)}\n${d.output.slice(-3000)}`));
  t.notOk(fs.existsSync(bRan), 'job B did not run');

  limit(1024);
  const ja = await d.waitState(a, ['FAILED', 'COMPLETED', 'RUNNING'], 10000);
  t.match(ja.result, { state: 'FAILED', exit_code: 3, error: null }, 'job A was collected with its own outcome');
  const jb = await d.waitState(b, ['COMPLETED', 'FAILED'], 10000);
  t.equal(jb.state, 'COMPLETED', `job B started once descriptors were free (${jb.result?.error ?? 'no error'})`);
  t.ok(fs.existsSync(bRan));
});

/** Follow job `id` on the socket from its first byte to the end; the number of log bytes relayed. */
function relayedBytes(socket: string, id: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socket);
    const decoder = new FrameDecoder(1 << 20, { splitRaw: true });
    let bytes = 0;
    s.on('connect', () => s.write(JSON.stringify({ v: 1, op: 'follow', args: { id, offset: 0 } }) + '\n'));
    s.on('data', (chunk: Buffer) => {
      for (const f of decoder.push(chunk)) {
        const m = f.msg as { ok: boolean; event?: string };
        if (!m.ok) { s.destroy(); reject(new Error(JSON.stringify(m))); return; }
        if (m.event === 'log') bytes += f.raw!.length;
        if (m.event === 'end') { s.destroy(); resolve(bytes); return; }
      }
    });
    s.on('error', reject);
    s.on('close', () => reject(new Error('follow closed before its end')));
  });
}

t.test('a job printing 300 MB slows neither the daemon nor its clients; the log is complete', async (t) => {
  const d = await startDaemon(t, { maxRunning: 2 });
  t.teardown(() => stopSupervisorsOf(d.home));
  const idle = new LatencyProbe(d.socket, 20);
  await new Promise((r) => setTimeout(r, 1000)); // measurement window
  const before = await idle.stop();

  // xrun follows it live, and so does a client of another kind: all 300 MB go
  // through the daemon to it (xrun, run by the daemon's own account, reads
  // the log file itself). Both discard the bytes.
  const probe = new LatencyProbe(d.socket, 20);
  const t0 = Date.now();
  const xrun = d.spawnCli('xrun', ['-g', '0', 'head', '-c', '300M', '/dev/zero']);
  (xrun.stdout as NodeJS.ReadableStream).on('data', () => undefined);
  const exited = new Promise<number | null>((resolve) => xrun.on('exit', (c) => resolve(c)));
  const id = await waitFor(async () => (await d.jobs())[0]?.id as number | undefined, { what: 'the job' });
  const relayed = await relayedBytes(d.socket, id);
  const code = await exited;
  const seconds = (Date.now() - t0) / 1000;
  const during = await probe.stop();
  t.equal(code, 0, 'xrun exits with the job\'s code');
  t.equal(relayed, 300 * MiB, 'the daemon relayed every byte to the follow client');
  t.comment(`300 MB job followed by xrun and relayed in ${seconds.toFixed(1)} s; status latency before: max ${before.max.toFixed(1)} ms, p50 ${before.p50.toFixed(1)} ms; during: max ${during.max.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms, p50 ${during.p50.toFixed(1)} ms over ${during.n} requests`);
  t.equal(during.failures, 0, 'every status request was answered');
  t.ok(during.n > 0 && during.max < 5000, 'answered within 5 s');
  t.equal(fs.statSync(path.join(d.jobsDir, `${id}.log`)).size, 300 * MiB, 'the log holds every byte');
  t.equal((await d.job(id)).state, 'COMPLETED');
});

t.test('a clock set back: no job ends before it starts or starts before it was submitted', async (t) => {
  const d = await startDaemon(t, { maxRunning: 1 });
  t.teardown(() => stopSupervisorsOf(d.home));
  const r = await d.batch('sleep 300', ['-g', '0']);
  const jr = await d.waitState(r, 'RUNNING');
  const p = await d.batch('true', ['-g', '0']);
  await d.kill('SIGKILL');

  // R's supervisor "ended it an hour before it started" (its clock was set
  // back meanwhile); P was "submitted an hour from now" (the clock was set
  // back after it was queued).
  const sup = supervisorOf(d.home, r)!;
  process.kill(sup, 'SIGKILL');
  await waitFor(() => supervisorOf(d.home, r) === undefined, { what: 'supervisor gone' });
  fs.writeFileSync(path.join(d.jobsDir, `${r}.result`),
    JSON.stringify({ state: 'COMPLETED', exit_code: 0, finished_at: jr.started_at - 3600, error: null }) + '\n');
  const future = Math.floor(Date.now() / 1000) + 3600;
  const db = new Database(path.join(d.home, 'xlurm.db'));
  db.prepare('UPDATE jobs SET submitted_at = ? WHERE id = ?').run(future, p);
  db.close();

  await d.start();
  const jr2 = await d.waitState(r, 'COMPLETED');
  t.equal(jr2.result.finished_at, jr2.started_at, 'R: finished_at is not before started_at');
  const jp = await d.waitState(p, 'COMPLETED');
  t.equal(jp.submitted_at, future);
  t.ok(jp.started_at >= jp.submitted_at, `P: started_at ${jp.started_at} is not before submitted_at ${jp.submitted_at}`);
  t.ok(jp.result.finished_at >= jp.started_at, 'P: finished_at is not before started_at');

  const detail = await d.run('xqueue', [String(r)]);
  t.match(detail.stdout, /\nRun time: 00:00:00\n/);
  const table = await d.run('xqueue', ['--all']);
  t.notMatch(table.stdout, /(^| )-\d/m, 'no negative duration in the table');
  t.match(table.stdout, new RegExp(`\\n${p} +\\S+ +COMPLETED +- +\\S+ \\S+ +00:00:00 +00:00:00 +bash\\n`), 'P: wait and run are 0, not negative');
});
