// resources/guard.ts: the low-memory guard (docs/behaviour.md §24.7) against a meminfo file and
// pressure files this test writes, with fake jobs and a recording kill.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import {
  LowMemoryGuard, cgroupMemoryUsage, cgroupProcs, parseMemAvailable, parsePressure, pickVictim,
  type GuardJob, type GuardSettings,
} from '../../../../packages/daemon/src/resources/guard';

const G = 1024 ** 3;
const job = (id: number, mem: number, usage: number | undefined, procs: number[] = []): GuardJob =>
  ({ id, mem, usage: () => usage, procs: () => procs });

t.test('parsing /proc/meminfo and /proc/pressure', async (t) => {
  t.equal(parseMemAvailable('MemTotal:  100 kB\nMemFree: 5 kB\nMemAvailable:   2048 kB\n'), 2048 * 1024);
  t.equal(parseMemAvailable('MemTotal: 100 kB\n'), null);
  t.same(parsePressure('some avg10=1.50 avg60=0.00 avg300=0.00 total=1\nfull avg10=0.25 avg60=0.00 avg300=0.00 total=1\n'), { some: 1.5, full: 0.25 });
  t.same(parsePressure('some avg10=3.00 avg60=0.00 avg300=0.00 total=1\n'), { some: 3, full: null });
  t.equal(parsePressure(''), null);
});

t.test('the victim: most memory above its request; a job without one counts all of it', async (t) => {
  t.equal(pickVictim([job(1, 4 * G, 5 * G), job(2, 0, 2 * G), job(3, 8 * G, 7 * G)])?.job.id, 2, '2G over beats 1G over');
  t.equal(pickVictim([job(1, 4 * G, 7 * G), job(2, 0, 2 * G)])?.job.id, 1);
  t.equal(pickVictim([job(1, 4 * G, 3 * G), job(2, 2 * G, undefined)]), undefined, 'every job within its request, or unknown');
  t.equal(pickVictim([job(5, 0, G), job(4, 0, G)])?.job.id, 4, 'ties: the older job');
});

t.test('below the floor for N samples: one job is stopped, TERM then KILL after at least 10 s', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-guard-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const meminfo = path.join(dir, 'meminfo');
  fs.mkdirSync(path.join(dir, 'pressure'));
  fs.writeFileSync(path.join(dir, 'pressure', 'memory'), 'some avg10=12.50 avg60=1 avg300=1 total=1\nfull avg10=4.00 avg60=1 avg300=1 total=1\n');
  const setAvailable = (bytes: number) => fs.writeFileSync(meminfo, `MemTotal: 999999999 kB\nMemAvailable: ${bytes / 1024} kB\n`);
  const settings: GuardSettings = { floor: 4 * G, samples: 3, killGrace: 1 };
  let running = [job(7, 0, 3 * G, [101, 102]), job(8, 8 * G, 8 * G, [201])];
  const marked: Array<[number, string]> = [];
  const signals: Array<[number, string]> = [];
  const logs: string[] = [];
  const g = new LowMemoryGuard({
    settings: () => settings, jobs: () => running, log: (m) => logs.push(m),
    markStopped: (id, error) => { marked.push([id, error]); return true; },
    meminfoPath: meminfo, pressureDir: path.join(dir, 'pressure'),
    kill: (pid, sig) => { signals.push([pid, sig]); },
  });
  t.teardown(() => g.stop());
  setAvailable(3 * G);
  const first = g.sample();
  t.equal(first.mem_available, 3 * G);
  t.same(first.memory_pressure, { some: 12.5, full: 4 });
  t.equal(first.cpu_pressure, null, 'no cpu file here');
  t.equal(g.lastSample(), first, 'the last sample is kept (and is fresh: not taken again)');
  g.sample();
  t.same(marked, [], 'two samples below: not yet');
  setAvailable(5 * G);
  g.sample();
  setAvailable(3 * G);
  g.sample(); g.sample();
  t.same(marked, [], 'a sample above the floor starts the count again');
  g.sample();
  t.same(marked, [[7, 'stopped by the low-memory guard: MemAvailable 3G below 4G for 6 s']]);
  t.same(signals.map(([, s]) => s), ['SIGTERM', 'SIGTERM'], 'each of its processes (their groups are led outside the list here)');
  t.same(signals.map(([p]) => p).sort(), [101, 102]);
  t.match(logs.join('\n'), /job 7: stopped by the low-memory guard: MemAvailable 3G below 4G for 6 s \(it used 3G\)/);
  g.sample();
  t.equal(marked.length, 1, 'no second stop while the first job is still ending');
  running = [running[1]!];
  g.sample();
  t.equal(marked.length, 1, 'job 7 has ended: the count starts again');
  g.sample(); g.sample(); g.sample();
  t.equal(marked.length, 1, 'job 8 is within its request');
  t.match(logs.join('\n'), /but no job uses more memory than it asked for/);
});

t.test('the kill comes after max(kill_grace, 10 s)', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-guard-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'meminfo'), 'MemAvailable: 1024 kB\n');
  const signals: string[] = [];
  const g = new LowMemoryGuard({
    settings: () => ({ floor: G, samples: 1, killGrace: 1 }), jobs: () => [job(3, 0, G, [999999])],
    markStopped: () => true, log: () => undefined, meminfoPath: path.join(dir, 'meminfo'), pressureDir: dir,
    kill: (_pid, sig) => { signals.push(sig); },
    later: (fn, ms) => { timers.push({ fn, ms }); return () => undefined; },
  });
  const timers: Array<{ fn: () => void; ms: number }> = [];
  g.sample();
  t.same(signals, ['SIGTERM']);
  t.same(timers.map((x) => x.ms), [10_000], 'kill_grace 1 s: the guard waits 10 s');
  timers[0]!.fn();
  t.same(signals, ['SIGTERM', 'SIGKILL']);
  g.stop();
});

t.test('off: floor 0 or a job that is no longer running is never signalled', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-guard-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'meminfo'), 'MemAvailable: 1024 kB\n');
  const signals: string[] = [];
  let floor = 0;
  let marks = 0;
  const g = new LowMemoryGuard({
    settings: () => ({ floor, samples: 1, killGrace: 1 }), jobs: () => [job(3, 0, G, [999999])],
    markStopped: () => { marks++; return false; }, log: () => undefined, meminfoPath: path.join(dir, 'meminfo'), pressureDir: dir,
    kill: (_pid, sig) => { signals.push(sig); },
  });
  t.equal(g.enabled, false);
  g.sample();
  t.equal(marks, 0);
  floor = G;
  g.sample();
  t.equal(marks, 1, 'asked Core');
  t.same(signals, [], 'Core said no: nothing signalled');
  g.stop();
});

t.test("a job's cgroup files: usage and processes, never the supervisor", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-guard-cg-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  t.equal(cgroupMemoryUsage(dir), undefined);
  fs.writeFileSync(path.join(dir, 'memory.usage_in_bytes'), '4096\n');
  t.equal(cgroupMemoryUsage(dir), 4096, 'v1');
  fs.writeFileSync(path.join(dir, 'memory.current'), '8192\n');
  t.equal(cgroupMemoryUsage(dir), 8192, 'v2 first');
  const child = spawn('sleep', ['30']);
  t.teardown(() => { child.kill('SIGKILL'); });
  fs.writeFileSync(path.join(dir, 'cgroup.procs'), `${child.pid}\n${process.pid}\n`);
  t.same(cgroupProcs(dir), [child.pid, process.pid]);
  t.same(cgroupProcs(undefined), []);
});

t.test('one sample of the real host files costs little', async (t) => {
  const g = new LowMemoryGuard({
    settings: () => ({ floor: 1, samples: 3, killGrace: 1 }), jobs: () => [], markStopped: () => false, log: () => undefined,
  });
  const s = g.sample();
  t.ok(s.mem_available !== null && s.mem_available > 0, 'MemAvailable read from /proc/meminfo');
  const n = 500;
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) g.sample();
  const per = (process.cpuUsage(t0).user + process.cpuUsage(t0).system) / n;
  t.comment(`one sample: ${per.toFixed(0)} µs of CPU (every 2 s: ${(per / 20000).toFixed(4)} % of one CPU)`);
  t.ok(per < 10000, 'well under the 0.5 % budget (10 ms per 2 s)');
});

t.test('a process group led inside the job is signalled as a group', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-guard-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'meminfo'), 'MemAvailable: 1024 kB\n');
  const leader = spawn('sleep', ['30'], { detached: true });
  t.teardown(() => { leader.kill('SIGKILL'); });
  const targets: number[] = [];
  const g = new LowMemoryGuard({
    settings: () => ({ floor: G, samples: 1, killGrace: 1 }), jobs: () => [job(3, 0, G, [leader.pid!, process.pid])],
    markStopped: () => true, log: () => undefined, meminfoPath: path.join(dir, 'meminfo'), pressureDir: dir,
    kill: (pid) => { targets.push(pid); }, later: () => () => undefined,
  });
  g.sample();
  t.same(targets, [-leader.pid!, process.pid], "the leader's group; a member whose group is led outside the job: only itself");
});
