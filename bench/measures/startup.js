// @ts-check
'use strict';
/**
 * Client start-up: wall time of `xqueue`, `xinfo`, `xcancel ID`, `xbatch -g 0
 * --wrap true` and, end to end, `xrun -g 0 true`, each against `node -e 0` (the
 * runtime's own floor), against a running daemon.
 *
 * Both sides are started the same way (`node FILE` / `node -e 0` by the same
 * Node binary) from the same clean environment (the very same object: PATH,
 * HOME, LANG, TZ and XLURM_HOME, nothing of the caller's), in interleaved
 * pairs: client then floor, floor then client, alternately, so load changes
 * hit both alike. Each command has its own floor, from its own pairs.
 *
 * The caller's environment matters as much as the client: with
 * NODE_EXTRA_CA_CERTS set (as on some machines, for every process) Node itself
 * reads and parses a CA bundle before running anything. Two rows show that
 * effect, the floor and `xqueue` each with it set against the same without.
 */
const fs = require('node:fs');
const { compare, timeOnce } = require('../lib/proc');
const { median, over } = require('../lib/stats');
const { startDaemon } = require('../lib/xlurm');

const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/**
 * `a` and `b` timed in interleaved pairs (a b, b a, a b, …). Per repetition,
 * the median of each side; the result is each side's median over the
 * repetitions with its spread.
 * @param {import('../lib/proc').Cmd} a @param {import('../lib/proc').Cmd} b
 * @param {{ pairs: number, reps: number }} o
 */
function pairs(a, b, o) {
  for (let i = 0; i < 2; i++) { timeOnce(a); timeOnce(b); }
  /** @type {number[]} */ const repA = [];
  /** @type {number[]} */ const repB = [];
  for (let r = 0; r < o.reps; r++) {
    /** @type {number[]} */ const ta = [];
    /** @type {number[]} */ const tb = [];
    for (let i = 0; i < o.pairs; i++) {
      if (i % 2 === 0) { ta.push(timeOnce(a)); tb.push(timeOnce(b)); } else { tb.push(timeOnce(b)); ta.push(timeOnce(a)); }
    }
    repA.push(median(ta));
    repB.push(median(tb));
  }
  return { a: over(repA), b: over(repB) };
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const d = await startDaemon({ backend: 'none', maxRunning: 32 });
  try {
    const done = await d.submit(['true']);
    await d.waitState(done, ['COMPLETED']);
    // One environment object for every process of this measure, floor and clients alike.
    const env = d.env;
    const cwd = d.cwd;
    const node = { label: 'node -e 0', argv: [process.execPath, '-e', '0'], env, cwd };
    const o = { pairs: ctx.quick ? 8 : 20, reps: ctx.reps };
    const reps = ctx.reps;
    const rows = [];

    ctx.log('client start-up (interleaved pairs with node -e 0, clean environment)');
    const clients = [
      { label: 'xqueue', argv: d.cli('xqueue', []) },
      { label: 'xinfo', argv: d.cli('xinfo', []) },
      { label: 'xcancel ID', argv: d.cli('xcancel', [String(done)]) },
      { label: 'xbatch -g 0 --wrap true', argv: d.cli('xbatch', ['-g', '0', '--wrap', 'true']) },
    ];
    for (const c of clients) {
      const r = pairs({ ...c, env, cwd }, node, o);
      rows.push({
        measure: `start-up: ${c.label}`, unit: 'ms', value: r.a,
        base: { label: 'node -e 0', value: r.b.median },
        target: { text: '≤ 1.15× node -e 0', on: /** @type {const} */ ('ratio'), max: 1.15 },
      });
    }

    ctx.log('foreground run');
    const xrunCmd = { label: 'xrun', argv: d.cli('xrun', ['-g', '0', 'true']), env, cwd };
    const { a: xrun, b: base2 } = pairs(xrunCmd, node, o);
    rows.push({
      measure: 'foreground: xrun -g 0 true', unit: 'ms', value: xrun,
      base: { label: 'node -e 0', value: base2.median },
      target: { text: '≤ 1.3× node -e 0', on: 'ratio', max: 1.3 },
    });

    ctx.log("the caller's environment");
    if (fs.existsSync(CA_BUNDLE)) {
      const ca = { ...env, NODE_EXTRA_CA_CERTS: CA_BUNDLE };
      const n = pairs({ ...node, label: 'node -e 0 (CA)', env: ca }, node, o);
      rows.push({
        measure: 'environment: node -e 0 with NODE_EXTRA_CA_CERTS', unit: 'ms', value: n.a,
        base: { label: 'node -e 0 without', value: n.b.median },
      });
      const xq = { label: 'xqueue', argv: d.cli('xqueue', []), cwd };
      const q = pairs({ ...xq, env: ca }, { ...xq, env }, o);
      rows.push({
        measure: 'environment: xqueue with NODE_EXTRA_CA_CERTS', unit: 'ms', value: q.a,
        base: { label: 'xqueue without', value: q.b.median },
      });
    } else {
      rows.push({ measure: 'environment: xqueue with NODE_EXTRA_CA_CERTS', unit: 'ms', value: null, base: { label: 'xqueue without', value: null, note: `no ${CA_BUNDLE}` } });
    }

    if ('why' in ctx.slurm) {
      rows.push({ measure: 'foreground: xrun -g 0 true vs srun true', unit: 'ms', value: xrun, base: { label: 'srun true', value: null, note: ctx.slurm.why } });
    } else {
      const perRep = [];
      for (let r = 0; r < reps; r++) {
        const s = [];
        for (let i = 0; i < Math.max(5, o.pairs / 2); i++) s.push(timeOnce({ label: 'srun', argv: ['srun', 'true'] }));
        perRep.push(over(s).median);
      }
      rows.push({ measure: 'foreground: xrun -g 0 true vs srun true', unit: 'ms', value: xrun, base: { label: 'srun true', value: over(perRep).median } });
    }
    if (!('why' in ctx.tsp)) {
      const t = ctx.tsp;
      const [tspf] = compare([{ label: 'tsp -f', ...t.cmd(['-f', '-n', 'true']) }], { calls: o.pairs, reps, warmup: 1 });
      t.run(['-C']);
      rows.push({ measure: 'foreground: xrun -g 0 true vs tsp -f true', unit: 'ms', value: xrun, base: { label: 'tsp -f -n true', value: tspf.median } });
    }
    return rows;
  } finally {
    await d.stop();
  }
}

module.exports = { id: 'startup', title: 'client start-up (against node -e 0, same environment) and foreground overhead', run };
