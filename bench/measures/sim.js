// @ts-check
'use strict';
/**
 * The scheduling simulator (bench/sim.js): 100,000 generated jobs (quick:
 * 20,000) at 80 % offered load on 8 GPUs, replayed through the daemon's own
 * schedule() under greedy and reserve (reserve_min_devices 8): how long a
 * replay takes, and how reserve changes the worst wait of 8-device jobs and
 * the mean wait of 1-device jobs against greedy.
 */
const { generate, simulate, compare, twoUsers, meanWaitByUser } = require('../sim');

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const n = ctx.quick ? 20000 : 100000;
  ctx.log(`sim: generating ${n} jobs (seed 1, load 0.8)`);
  const jobs = generate({ jobs: n, load: 0.8, seed: 1 });
  const wall = (r) => ({ median: r.wallMs / 1000, min: r.wallMs / 1000, max: r.wallMs / 1000, n: 1 });
  ctx.log('sim: greedy');
  const greedy = simulate(jobs, { name: 'greedy', mode: 'greedy' });
  ctx.log('sim: reserve (min 8)');
  const reserve = simulate(jobs, { name: 'reserve (min 8)', mode: 'reserve', reserveMinDevices: 8 });
  const c = compare(greedy, reserve);
  // Fair share (docs/behaviour.md §22.2): one user floods (400 jobs of 10 min at once), another
  // submits 10 such jobs, one every 29 min 10 s; each user's mean wait with fair share on and off.
  ctx.log('sim: two users, fair share on and off');
  const two = twoUsers();
  const on = meanWaitByUser(two, simulate(two, { name: 'greedy', mode: 'greedy' }, { fairShare: 7 * 86400 }));
  const off = meanWaitByUser(two, simulate(two, { name: 'greedy', mode: 'greedy' }));
  const mins = (s) => s / 60;
  const one = (x) => ({ median: x, min: x, max: x, n: 1 });
  const h = (s) => s / 3600;
  const target = { text: '≤ 30 s', on: /** @type {const} */ ('value'), max: 30 };
  return [
    { measure: `sim: replay ${n} jobs, greedy`, unit: 's', value: wall(greedy), target: ctx.quick ? null : target },
    { measure: `sim: replay ${n} jobs, reserve (min 8)`, unit: 's', value: wall(reserve), target: ctx.quick ? null : target },
    {
      measure: 'sim: worst wait of 8-device jobs, reserve (min 8) vs greedy', unit: 'h', value: one(h(reserve.byClass.get(c.largest)?.max ?? NaN)),
      base: { label: 'greedy', value: h(greedy.byClass.get(c.largest)?.max ?? NaN) }, target: { text: '≤ 1/3 of greedy', on: /** @type {const} */ ('ratio'), max: 1 / 3 },
    },
    {
      measure: 'sim: mean wait of 1-device jobs, reserve (min 8) vs greedy', unit: 'h', value: one(h(reserve.byClass.get(1)?.mean ?? NaN)),
      base: { label: 'greedy', value: h(greedy.byClass.get(1)?.mean ?? NaN) }, target: { text: '≤ 1.25× greedy', on: /** @type {const} */ ('ratio'), max: 1.25 },
    },
    {
      measure: 'sim: two users, mean wait of the one who submits a few, fair share on vs off', unit: 'min', value: one(mins(on.get('light') ?? NaN)),
      base: { label: 'fair share off', value: mins(off.get('light') ?? NaN) }, target: null,
    },
    {
      measure: 'sim: two users, mean wait of the one who floods, fair share on vs off', unit: 'min', value: one(mins(on.get('flood') ?? NaN)),
      base: { label: 'fair share off', value: mins(off.get('flood') ?? NaN) }, target: null,
    },
  ];
}

module.exports = { id: 'sim', title: 'scheduling simulator: 100k generated jobs on 8 GPUs, greedy vs reserve', run };
