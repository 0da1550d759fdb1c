// The scheduling simulator (bench/sim.js) on a tiny trace whose waits are worked out by hand:
// a 2-device job starves under greedy behind 1-device jobs that keep one device busy, and
// under reserve it reserves both, lets a short job backfill, and starts when the holder ends.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';

interface SimJob { id: number; submit: number; count: number; run: number; limit: number | null; user: string }
interface Policy { name: string; mode: 'greedy' | 'reserve'; reserveMinDevices?: number }
interface SimResult {
  waits: Map<number, number>; starts: Map<number, number>; order: number[];
  byClass: Map<number, { n: number; mean: number; p95: number; max: number }>; utilisation: number; makespan: number;
}
interface Sim {
  simulate(jobs: SimJob[], policy: Policy, o?: { devices?: number; maxRunning?: number }): SimResult;
  generate(o: { jobs: number; load: number; seed: number; devices?: number }): SimJob[];
  readTrace(file: string): SimJob[];
  table(results: SimResult[]): string;
}
// bench/ is plain JavaScript (checked with @ts-check on its own): its exports are typed here.
const sim = require(path.resolve(__dirname, '../../../bench/sim.js')) as Sim;

const job = (id: number, submit: number, count: number, run: number, limit: number | null = run): SimJob =>
  ({ id, submit, count, run, limit, user: 'alice' });
// On 2 devices: job 1 holds one until 10; job 2 wants both; job 3 is short enough to backfill.
const trace = [job(1, 0, 1, 10), job(2, 1, 2, 5), job(3, 2, 1, 3), job(4, 5, 1, 10), job(5, 10, 1, 10), job(6, 15, 1, 10)];
const waitsOf = (r: SimResult) => trace.map((j) => r.waits.get(j.id));

t.test('greedy: the 2-device job waits until the stream of 1-device jobs dries up', async (t) => {
  const r = sim.simulate(trace, { name: 'greedy', mode: 'greedy' }, { devices: 2 });
  t.same(waitsOf(r), [0, 24, 0, 0, 0, 0]);
  t.same(r.order, [1, 3, 4, 5, 6, 2]);
  t.equal(r.makespan, 30);
  t.equal(r.byClass.get(2)?.max, 24);
  // 1×10 + 1×3 + 3×10 one-device seconds + 2×5, over 2 devices × 30 s.
  t.equal(r.utilisation, (10 + 3 + 30 + 10) / 60);
});

t.test('reserve: the 2-device job reserves both devices, a short job backfills, it starts when the holder ends', async (t) => {
  const r = sim.simulate(trace, { name: 'reserve', mode: 'reserve', reserveMinDevices: 2 }, { devices: 2 });
  t.same(waitsOf(r), [0, 9, 0, 10, 5, 10]);
  t.same(r.order, [1, 3, 2, 4, 5, 6]);
  t.equal(r.makespan, 35);
  // With reserve_min_devices above its size the job reserves nothing: greedy's result.
  const off = sim.simulate(trace, { name: 'reserve', mode: 'reserve', reserveMinDevices: 4 }, { devices: 2 });
  t.same(waitsOf(off), [0, 24, 0, 0, 0, 0]);
});

t.test('a job runs at most its time limit; a trace file reads like the literal trace', async (t) => {
  const dir = t.testdir({
    'trace.csv': 'submit_s,devices,run_s,time_limit_s,user\n0,1,100,20,alice\n5,1,7,,bob\n1,1,3,3,carol\n',
  });
  const jobs = sim.readTrace(path.join(dir, 'trace.csv'));
  t.same(jobs.map((j) => [j.id, j.submit, j.limit, j.user]), [[1, 0, 20, 'alice'], [2, 1, 3, 'carol'], [3, 5, null, 'bob']]);
  const r = sim.simulate(jobs, { name: 'greedy', mode: 'greedy' }, { devices: 1 });
  t.same([...r.starts], [[1, 0], [2, 20], [3, 23]]);
  t.equal(r.makespan, 30);
  t.throws(() => sim.simulate([job(1, 0, 4, 1)], { name: 'greedy', mode: 'greedy' }, { devices: 2 }), /never started/);
  fs.writeFileSync(path.join(dir, 'bad.csv'), 'submit_s,devices,run_s,time_limit_s,user\n0,x,1,1,a\n');
  t.throws(() => sim.readTrace(path.join(dir, 'bad.csv')), /bad devices 'x'/);
});

t.test('the generator is reproducible and shaped as documented', async (t) => {
  const a = sim.generate({ jobs: 5000, load: 0.8, seed: 7 });
  // Compared as text: tap's deep comparison of thousands of objects is slow.
  const text = JSON.stringify(a);
  t.ok(JSON.stringify(sim.generate({ jobs: 5000, load: 0.8, seed: 7 })) === text, 'same seed, same jobs');
  t.ok(JSON.stringify(sim.generate({ jobs: 5000, load: 0.8, seed: 8 })) !== text, 'another seed, other jobs');
  const share = (n: number) => a.filter((j) => j.count === n).length / a.length;
  t.ok(share(1) > 0.6 && share(1) < 0.8, `1-device share ${share(1)}`);
  t.ok(share(8) > 0.03 && share(8) < 0.07, `8-device share ${share(8)}`);
  t.ok(a.every((j) => j.limit !== null && j.limit >= j.run && j.limit % 60 === 0), 'limits ≥ run, whole minutes');
  const work = a.reduce((s, j) => s + j.count * j.run, 0);
  const span = a[a.length - 1]!.submit - a[0]!.submit;
  t.ok(Math.abs(work / (8 * span) - 0.8) < 0.05, `offered load ${work / (8 * span)}`);
  t.match(sim.table([sim.simulate(a.slice(0, 200), { name: 'greedy', mode: 'greedy' })]), /worst wait, 8-device jobs/);
});

t.test('two users, fair share on and off: the one who submits a few waits minutes instead of hours', async (t) => {
  const { twoUsers, meanWaitByUser, simulate: sim } = require('../../../bench/sim.js') as {
    twoUsers: () => Array<{ id: number; user: string }>;
    meanWaitByUser: (jobs: unknown[], r: unknown) => Map<string, number>;
    simulate: (jobs: unknown[], p: unknown, o?: unknown) => unknown;
  };
  const jobs = twoUsers();
  const on = meanWaitByUser(jobs, sim(jobs, { name: 'greedy', mode: 'greedy' }, { fairShare: 7 * 86400 }));
  const off = meanWaitByUser(jobs, sim(jobs, { name: 'greedy', mode: 'greedy' }));
  t.ok(on.get('light')! <= 600, `light: at most one run's wait with fair share (${on.get('light')} s)`);
  t.ok(off.get('light')! > 3600, `light: behind the flood without it (${off.get('light')} s)`);
  t.ok(Math.abs(on.get('flood')! - off.get('flood')!) < 0.1 * off.get('flood')!, 'the flood barely notices');
});
