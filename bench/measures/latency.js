// @ts-check
'use strict';
/**
 * Submit → start latency of a job that fits at once: from just before the
 * submit request is written to the moment the job's program runs. The job is
 * `date +%s.%N` (no shell), which prints the wall clock when it starts; the
 * floor is the same program spawned directly by this process. Slurm: sbatch
 * → "Allocate"/"_start_job" in slurmctld.log (ms stamps).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { over, median } = require('../lib/stats');
const { startDaemon } = require('../lib/xlurm');

/** Wall clock in ms with sub-ms resolution (comparable to date +%s.%N). */
const wallMs = () => performance.timeOrigin + performance.now();

/** @param {string} text */
const dateMs = (text) => Number(text.trim()) * 1000;

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const n = ctx.quick ? 10 : 30;
  const d = await startDaemon({ backend: 'none', maxRunning: 32 });
  const xl = []; const floor = [];
  try {
    for (let r = 0; r < ctx.reps; r++) {
      ctx.log(`submit→start, rep ${r + 1}`);
      const a = []; const f = [];
      for (let i = 0; i < n; i++) {
        const t0 = wallMs();
        const id = await d.submit(['date', '+%s.%N']);
        await d.waitState(id, ['COMPLETED']);
        a.push(dateMs(fs.readFileSync(path.join(d.home, 'jobs', `${id}.log`), 'utf8')) - t0);
        const t1 = wallMs();
        f.push(dateMs(spawnSync('date', ['+%s.%N'], { encoding: 'utf8' }).stdout) - t1);
      }
      xl.push(median(a)); floor.push(median(f));
    }
  } finally { await d.stop(); }
  const rows = [{
    measure: 'submit→start (job fits at once)', unit: 'ms', value: over(xl),
    base: { label: 'spawn of the same program', value: over(floor).median },
    target: { text: '≤ 10 ms', on: /** @type {const} */ ('value'), max: 10 },
  }];
  if ('why' in ctx.slurm) {
    rows.push({ measure: 'submit→start vs Slurm', unit: 'ms', value: over(xl), base: { label: 'Slurm sbatch→start', value: null, note: ctx.slurm.why } });
  } else {
    ctx.log('Slurm submit→start');
    const s = [];
    for (let i = 0; i < (ctx.quick ? 5 : 15); i++) s.push((await ctx.slurm.turnaround()).start);
    rows.push({ measure: 'submit→start vs Slurm', unit: 'ms', value: over(xl), base: { label: 'Slurm sbatch→start', value: median(s) } });
  }
  return rows;
}

module.exports = { id: 'latency', title: 'submit→start latency', run };
