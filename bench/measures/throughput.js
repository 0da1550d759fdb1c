// @ts-check
'use strict';
/**
 * End-to-end throughput: N × `true` (-g 0) with --max-running 32, submitted
 * back to back from a persistent client, timed from the first submit until
 * the last job's result is written (the newest result file's mtime, once the
 * status counts, polled every 50 ms, say all are COMPLETED): like Slurm's
 * last `_job_complete` stamp, an end that does not depend on how often it is polled.
 * Slurm: N × `sbatch -p over --wrap true` (32 slots), last `_job_complete` in
 * slurmctld.log. task-spooler: N × `tsp -n true` with 32 slots.
 * Floor: the same N × `true` started straight from `xargs -P 32` (one process
 * per job, no scheduler): what process creation alone allows on this
 * machine. An xlurm job costs two process starts (xlurm-stepd and the job).
 */
const fs = require('node:fs');
const path = require('node:path');
const { timeOnce } = require('../lib/proc');
const { nowMs, over } = require('../lib/stats');
const { poll, request, startDaemon, submission } = require('../lib/xlurm');

/** @param {import('../lib/xlurm').Daemon} d @param {number} n */
async function oneRun(d, n) {
  const before = (await d.counts()).COMPLETED ?? 0;
  const body = submission(['true'], { name: 'tput' });
  const ids = [];
  const t0 = nowMs();
  const wall0 = Date.now();
  for (let i = 0; i < n; i++) {
    const r = await request(d.socket, 'submit', body);
    if (!r.ok) throw new Error(JSON.stringify(r.error));
    ids.push(/** @type {{id: number}} */ (r.result).id);
  }
  // Polled every 50 ms (each poll is a request the daemon serves on the same two vCPUs the
  // jobs need); the end is then read from the result files, not from when a poll noticed it.
  await poll(async () => {
    const c = await d.counts();
    if (c.FAILED) throw new Error(`${c.FAILED} job(s) failed`);
    return (c.COMPLETED ?? 0) - before >= n;
  }, { timeoutMs: 600000, intervalMs: 50, what: `${n} jobs` });
  const last = Math.max(...ids.map((id) => fs.statSync(path.join(d.home, 'jobs', `${id}.result`)).mtimeMs));
  const elapsed = last - wall0;
  if (!(elapsed > 0) || elapsed > nowMs() - t0 + 1000) throw new Error(`implausible end of the run (${elapsed} ms)`);
  return n / (elapsed / 1000);
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const n = 1000;
  const rates = [];
  const d = await startDaemon({ backend: 'none', maxRunning: 32 });
  try {
    // One repetition in --quick (which must stay under 2 min); three in full mode.
    for (let r = 0; r < (ctx.quick ? 1 : 3); r++) {
      ctx.log(`throughput ${n} × true, rep ${r + 1}`);
      rates.push(await oneRun(d, n));
    }
  } finally { await d.stop(); }
  const floors = [];
  for (let r = 0; r < (ctx.quick ? 1 : 3); r++) {
    ctx.log(`floor: ${n} × true from xargs -P 32, rep ${r + 1}`);
    floors.push(n / (timeOnce({ label: 'xargs', argv: ['bash', '-c', `seq ${n} | xargs -P 32 -I{} /bin/true`] }) / 1000));
  }
  const value = over(rates);
  const rows = [{
    measure: `throughput ${n} × true (-g 0, 32 slots)`, unit: 'jobs/s', value,
    base: { label: `${n} × true from xargs -P 32 (process-start floor)`, value: over(floors).median },
    target: { text: '≥ 300 jobs/s', on: /** @type {const} */ ('value'), min: 300 },
  }];
  if ('why' in ctx.slurm) {
    rows.push({ measure: 'throughput vs Slurm', unit: 'jobs/s', value, base: { label: 'Slurm', value: null, note: ctx.slurm.why }, target: { text: '≥ 10× Slurm', on: 'ratio', min: 10 } });
  } else {
    const m = ctx.quick ? 100 : 1000;
    ctx.log(`Slurm throughput ${m} jobs (partition ${ctx.slurm.wide})`);
    await ctx.slurm.drain();
    const s = await ctx.slurm.throughput(m);
    rows.push({ measure: 'throughput vs Slurm', unit: 'jobs/s', value, base: { label: `${ctx.slurm.label}, ${m} jobs, ${ctx.slurm.wide}`, value: s }, target: { text: '≥ 10× Slurm', on: 'ratio', min: 10 } });
  }
  if ('why' in ctx.tsp) {
    rows.push({ measure: 'throughput vs task-spooler', unit: 'jobs/s', value, base: { label: 'tsp', value: null, note: ctx.tsp.why } });
  } else {
    const m = ctx.quick ? 200 : 1000;
    ctx.log(`tsp throughput ${m} jobs`);
    rows.push({ measure: 'throughput vs task-spooler', unit: 'jobs/s', value, base: { label: `tsp 32 slots, ${m} jobs`, value: await ctx.tsp.throughput(m) } });
  }
  return rows;
}

module.exports = { id: 'throughput', title: 'end-to-end throughput of 1000 tiny jobs', run };
