// @ts-check
'use strict';
/**
 * Submit → start latency of a job that fits at once: from just before the
 * submit request is written to the moment the job's program runs. The job is
 * `date +%s.%N` (no shell), which prints the wall clock when it starts; the
 * floor is the same program, with the job's environment, spawned directly by
 * this process. While the job starts, this process waits by reading the job's
 * log every millisecond, not by asking the daemon: a `get` every few ms would
 * take CPU from the start it measures (two vCPUs here). Slurm: sbatch →
 * "Allocate"/"_start_job" in slurmctld.log (ms stamps).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { over, median } = require('../lib/stats');
const { baseEnv, poll, startDaemon } = require('../lib/xlurm');

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
        const log = path.join(d.home, 'jobs', `${id}.log`);
        const printed = await poll(() => { try { const s = fs.readFileSync(log, 'utf8'); return s.endsWith('\n') && s; } catch { return false; } },
          { timeoutMs: 60000, intervalMs: 1, what: `job ${id} output` });
        a.push(dateMs(printed) - t0);
        await d.waitState(id, ['COMPLETED']);
        const t1 = wallMs();
        f.push(dateMs(spawnSync('date', ['+%s.%N'], { encoding: 'utf8', env: baseEnv() }).stdout) - t1);
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
