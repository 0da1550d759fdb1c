// Card sharing in the simulator (bench/sim-share.js): the same workload with sharing off and on,
// through the daemon's own schedule(): slices pack (less waiting, fewer device-hours used).
import t from 'tap';
import * as path from 'node:path';

interface Row { sharing: string; jobs: number; mean_wait_s: number; mean_wait_small_s: number; mean_wait_whole_s: number; device_hours: number; makespan_h: number }
interface ShareJob { id: number; submit: number; run: number; mem: number; small: boolean }
// bench/ is plain JavaScript (checked with @ts-check on its own): its exports are typed here.
const sim = require(path.join(__dirname, '..', '..', '..', 'bench', 'sim-share.js')) as {
  compare(o: { jobs?: number; load?: number; seed?: number; devices?: number }): Row[];
  simulate(jobs: ShareJob[], sharing: boolean, devices: number): Row;
};

const G = 1024 ** 3;
t.test('four quarter-card jobs at once on one card: one after another without sharing, together with it', async (t) => {
  const jobs = [1, 2, 3, 4].map((id) => ({ id, submit: 0, run: 100, mem: 20 * G, small: true }));
  const off = sim.simulate(jobs, false, 1);
  const on = sim.simulate(jobs, true, 1);
  t.equal(off.mean_wait_s, (0 + 100 + 200 + 300) / 4);
  t.equal(on.mean_wait_s, 0);
  t.equal(off.device_hours, 400 / 3600);
  t.equal(on.device_hours, 4 * 100 * 0.25 / 3600, 'a slice counts its share of the card');
});

t.test('the 70 % small-jobs workload: sharing on waits less and uses fewer device-hours', async (t) => {
  const [off, on] = sim.compare({ jobs: 300, load: 0.9, seed: 3 });
  t.equal(off!.sharing, 'off');
  t.ok(on!.mean_wait_s <= off!.mean_wait_s);
  t.ok(on!.device_hours < off!.device_hours);
});
