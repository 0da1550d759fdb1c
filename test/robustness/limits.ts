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
