// @ts-check
'use strict';
/**
 * Client start-up: wall time of `xqueue`, `xinfo`, `xcancel ID`, `xbatch -g 0
 * --wrap true` against `node -e 0` (the runtime's own floor), and foreground
 * overhead: `xrun -g 0 true` against `node -e 0` and `srun true`. Calls are
 * interleaved so load changes hit every command alike.
 */
const { compare, timeOnce } = require('../lib/proc');
const { over } = require('../lib/stats');
const { startDaemon } = require('../lib/xlurm');

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const d = await startDaemon({ backend: 'none', maxRunning: 32 });
  try {
    const done = await d.submit(['true']);
    await d.waitState(done, ['COMPLETED']);
    const env = d.env;
    const cwd = d.cwd;
    const node = { label: 'node -e 0', argv: [process.execPath, '-e', '0'] };
    const calls = ctx.quick ? 6 : 15;
    const reps = ctx.reps;

    ctx.log('client start-up');
    const clients = [
      { label: 'xqueue', argv: d.cli('xqueue', []), env, cwd },
      { label: 'xinfo', argv: d.cli('xinfo', []), env, cwd },
      { label: `xcancel ID`, argv: d.cli('xcancel', [String(done)]), env, cwd },
      { label: 'xbatch -g 0 --wrap true', argv: d.cli('xbatch', ['-g', '0', '--wrap', 'true']), env, cwd },
    ];
    const [base, ...res] = compare([node, ...clients], { calls, reps });
    const rows = res.map((r) => ({
      measure: `start-up: ${r.label}`, unit: 'ms', value: r,
      base: { label: 'node -e 0', value: base.median },
      target: { text: '≤ 1.3× node -e 0', on: /** @type {const} */ ('ratio'), max: 1.3 },
    }));

    ctx.log('foreground run');
    const [base2, xrun] = compare([node, { label: 'xrun', argv: d.cli('xrun', ['-g', '0', 'true']), env, cwd }], { calls, reps });
    rows.push({
      measure: 'foreground: xrun -g 0 true', unit: 'ms', value: xrun,
      base: { label: 'node -e 0', value: base2.median },
      target: { text: '≤ 1.6× node -e 0', on: 'ratio', max: 1.6 },
    });
    if ('why' in ctx.slurm) {
      rows.push({ measure: 'foreground: xrun -g 0 true vs srun true', unit: 'ms', value: xrun, base: { label: 'srun true', value: null, note: ctx.slurm.why } });
    } else {
      const perRep = [];
      for (let r = 0; r < reps; r++) {
        const s = [];
        for (let i = 0; i < Math.max(5, calls / 2); i++) s.push(timeOnce({ label: 'srun', argv: ['srun', 'true'] }));
        perRep.push(over(s).median);
      }
      rows.push({ measure: 'foreground: xrun -g 0 true vs srun true', unit: 'ms', value: xrun, base: { label: 'srun true', value: over(perRep).median } });
    }
    if (!('why' in ctx.tsp)) {
      const t = ctx.tsp;
      const [tspf] = compare([{ label: 'tsp -f', ...t.cmd(['-f', '-n', 'true']) }], { calls, reps, warmup: 1 });
      t.run(['-C']);
      rows.push({ measure: 'foreground: xrun -g 0 true vs tsp -f true', unit: 'ms', value: xrun, base: { label: 'tsp -f -n true', value: tspf.median } });
    }
    return rows;
  } finally {
    await d.stop();
  }
}

module.exports = { id: 'startup', title: 'client start-up and foreground overhead', run };
