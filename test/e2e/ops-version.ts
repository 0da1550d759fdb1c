// Version skew and `xlurm status`: a request in another protocol version gets
// a message naming both versions and what to do; the CLI treats a reply frame
// of another version the same way; `xlurm status` shows the daemon's version,
// backend, uptime, exclusions and job counts per state.
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Daemon, startDaemon, tempHome } from '../helpers/daemon';
import { fakeLibrary } from '../helpers/fixtures';
import { waitFor } from '../helpers/wait';

const VERSION = '0.1.0';
const ADVICE = 'use the xlurm commands installed with the running daemon, or ask the administrator to restart it after the upgrade';

t.test('the daemon answers a request of another protocol version with VERSION_MISMATCH naming both', async (t) => {
  const d = await startDaemon(t);
  for (const v of [2, 0]) {
    const r = await d.request('status', {}, { v }) as any;
    t.equal(r.ok, false);
    t.equal(r.v, 1, 'the reply carries the daemon\'s own version');
    t.equal(r.error.code, 'VERSION_MISMATCH');
    t.equal(r.error.message, `protocol version mismatch: this client speaks protocol ${v}, the daemon (xlurm ${VERSION}) speaks protocol 1; ` +
      'use the xlurm commands installed with the running daemon, or ask the administrator to restart it after the upgrade (`xlurm restart`)');
  }
  const same = await d.request('status', {}) as any;
  t.equal(same.ok, true, 'its own version is served');
});

/** A stand-in daemon on $home/xlurm.sock that answers every request with `reply` frames. */
async function fakeDaemon(t: any, frames: unknown[]): Promise<Daemon> {
  const home = tempHome(t);
  fs.mkdirSync(home, { mode: 0o755 });
  const d = new Daemon(t, home, {});
  const server = net.createServer((s) => {
    s.once('data', () => s.end(frames.map((f) => JSON.stringify(f) + '\n').join('')));
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(d.socket, resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return d;
}

t.test('the CLI and a daemon of another protocol version', async (t) => {
  t.test('a refusal in another version: the daemon\'s own message is printed', async (t) => {
    const message = 'protocol version mismatch: this client speaks protocol 1, the daemon (xlurm 0.2.0) speaks protocol 2; use …';
    const d = await fakeDaemon(t, [{ v: 2, ok: false, error: { code: 'VERSION_MISMATCH', message } }]);
    const r = await d.run('xqueue', []);
    t.equal(r.code, 1);
    t.equal(r.stderr, `xlurm: ${message}\n`);
    t.equal(r.stdout, '');
  });

  t.test('a success frame in another version is not trusted', async (t) => {
    const d = await fakeDaemon(t, [{ v: 2, ok: true, result: [] }]);
    for (const [bin, args] of [['xqueue', []], ['xlurm', ['status']], ['xinfo', ['--json']]] as const) {
      const r = await d.run(bin, [...args]);
      t.equal(r.code, 1, `${bin} ${args.join(' ')}`);
      t.equal(r.stderr, `xlurm: protocol version mismatch: the daemon speaks protocol 2, this client (xlurm ${VERSION}) speaks protocol 1; ${ADVICE}\n`);
      t.equal(r.stdout, '');
    }
  });

  t.test('a stream frame in another version is not trusted either', async (t) => {
    const d = await fakeDaemon(t, [{ v: 3, ok: true, event: 'end', job: null, offset: 0 }]);
    const r = await d.run('xqueue', ['1', '--log']);
    t.equal(r.code, 1);
    t.match(r.stderr, /^xlurm: protocol version mismatch: the daemon speaks protocol 3, this client \(xlurm 0\.1\.0\) speaks protocol 1; /);
  });
});

t.test('xlurm status: version, backend, uptime, exclusions and job counts', async (t) => {
  const gpu = (i: number) => `device ${i} GPU-5a7u5000-0000-4000-8000-00000000000${i} "Fake A100"`;
  const fake = fakeLibrary(t, 'nvidia', [gpu(0), gpu(1), gpu(2)]);
  const d = await startDaemon(t, { backend: 'nvidia', maxRunning: 8, args: ['--exclude-device-ids', '2', '--retention', '12h'], env: fake.env });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-st-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const marker = path.join(dir, 'go');
  const wait = `while [ ! -e ${marker} ]; do sleep 0.05; done`;

  const running = await d.batch(wait, ['-g', '2']);
  await d.waitState(running, 'RUNNING');
  const pending = await d.batch('true', ['-g', '1']); // devices 0 and 1 are taken, 2 is excluded
  const done = await d.batch('true', ['-g', '0']);
  await d.waitState(done, 'COMPLETED');
  const failed = await d.batch('exit 3', ['-g', '0']);
  await d.waitState(failed, 'FAILED');
  const cancelled = await d.batch(wait, ['-g', '1']);
  t.equal((await d.run('xcancel', [String(cancelled)])).code, 0);
  await d.waitState(cancelled, 'CANCELLED');
  t.equal((await d.job(pending)).state, 'PENDING');

  const r = await d.run('xlurm', ['status']);
  t.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
  const st = (await d.request('status', {}) as any).result;
  t.equal(field('Version'), VERSION);
  t.equal(field('Protocol'), '1');
  t.equal(field('PID'), String(d.proc!.pid));
  t.equal(field('Backend'), 'nvidia');
  t.equal(field('Discovered backends'), 'nvidia');
  t.match(field('Uptime'), /^\d\d:\d\d:\d\d$/);
  t.match(field('Started at'), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d /);
  t.equal(field('Max running'), '8');
  t.equal(field('Retention'), '12h');
  t.equal(field('Excluded device IDs'), '2');
  t.equal(field('Jobs'), 'PENDING 1, RUNNING 1, COMPLETED 1, FAILED 1, CANCELLED 1, TIMED_OUT 0');
  t.equal(st.pid, d.proc!.pid);

  t.equal((await d.run('xlurm', ['exclude', '0'])).code, 0);
  const json = JSON.parse((await d.run('xlurm', ['status', '--json'])).stdout);
  t.same(json.excluded, [0, 2], 'exclusions made at run time show up');
  t.same(json.counts, { PENDING: 1, RUNNING: 1, COMPLETED: 1, FAILED: 1, CANCELLED: 1 });
  t.equal(json.version, VERSION);
  t.equal(json.backend, 'nvidia');
  t.ok(Number.isInteger(json.uptime_secs) && json.uptime_secs >= 0);

  fs.writeFileSync(marker, '');
  await d.waitState(running, 'COMPLETED');
  // The pending job gets device 1 once it is free: both end up in the counts as completed.
  await waitFor(async () => JSON.parse((await d.run('xlurm', ['status', '--json'])).stdout).counts.COMPLETED === 3,
    { what: 'three completed jobs in the counts' });
});
