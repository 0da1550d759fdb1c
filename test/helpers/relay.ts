/**
 * xrun's log path under load, shared by test/e2e/log-relay.ts (xrun run by the
 * daemon's account: it reads the log file itself) and
 * test/multiuser/log-relay.ts (xrun run by nobody: the daemon relays the bytes).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Daemon, RunOpts } from './daemon';
import { waitFor } from './wait';
import type { Tap } from './tap';


const seq = (from: number, to: number): Buffer => execFileSync('seq', [String(from), String(to)], { maxBuffer: 1 << 30 });

/** The job's log as the daemon's account sees it (the test runs as that account). */
const logOf = (d: Daemon, id: number) => fs.readFileSync(path.join(d.jobsDir, `${id}.log`));

export function relayCases(t: Tap, d: Daemon, opts: () => RunOpts): void {
  t.test('large output reaches xrun byte-exact (many frames, pooled buffers)', async (t) => {
    const r = await d.run('xrun', ['-g', '0', 'sh', '-c', 'seq 1 6000000; echo "$XLURM_JOB_ID" >&2'], { ...opts(), timeout: 120000 });
    t.equal(r.code, 0, r.stderr);
    const expected = seq(1, 6000000);
    const id = Number(/^(\d+)$/m.exec(r.stdout.slice(expected.length))?.[1] ?? NaN);
    t.equal(r.stdoutBuf.length, expected.length + String(id).length + 1, 'every byte once (stdout and stderr share the log)');
    t.ok(r.stdoutBuf.subarray(0, expected.length).equals(expected), 'in order, unchanged');
    t.ok(r.stdoutBuf.equals(logOf(d, id)), 'exactly the job\'s log');
  });

  t.test('a slow reader of xrun\'s stdout (a pipe that fills up) still gets every byte unchanged', async (t) => {
    // xrun reuses its read buffers: a chunk still queued on the pipe must not be overwritten.
    const child = d.spawnCli('xrun', ['-g', '0', 'seq', '1', '2000000'], opts());
    const out: Buffer[] = [];
    let reads = 0;
    child.stdout!.on('data', (b: Buffer) => {
      out.push(b);
      if (++reads % 4 === 0) { child.stdout!.pause(); setTimeout(() => child.stdout!.resume(), 20); }
    });
    let err = '';
    child.stderr!.on('data', (b: Buffer) => { err += b; });
    t.equal(await new Promise<number | null>((r) => child.on('close', (c) => r(c))), 0, err);
    t.ok(Buffer.concat(out).equals(seq(1, 2000000)), 'every byte once, in order, unchanged');
  });

  t.test('a large log across a daemon restart: nothing lost, nothing repeated', async (t) => {
    const gate = path.join(opts().cwd!, `gate-${process.pid}-${Date.now()}`);
    const child = d.spawnCli('xrun', ['-g', '0', 'sh', '-c', `seq 1 1500000; while [ ! -e ${gate} ]; do sleep 0.02; done; seq 1500001 3000000`], opts());
    const out: Buffer[] = [];
    let got = 0;
    child.stdout!.on('data', (b: Buffer) => { out.push(b); got += b.length; });
    let err = '';
    child.stderr!.on('data', (b: Buffer) => { err += b; });
    const exited = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    const first = seq(1, 1500000).length;
    await waitFor(() => got >= first, { timeout: 60000, what: 'the first half of the output' });
    await d.kill('SIGKILL');
    await d.start();
    fs.writeFileSync(gate, '');
    t.equal(await exited, 0, err);
    const all = Buffer.concat(out);
    const expected = seq(1, 3000000);
    t.equal(all.length, expected.length, 'every byte once');
    t.ok(all.equals(expected), 'in order, unchanged');
  });
}
