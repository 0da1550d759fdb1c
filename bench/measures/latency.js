// @ts-check
'use strict';
/**
 * Submit → start latency of a job that fits at once: from just before the
 * submit request is written to the moment the job's own code runs. The job is
 * a probe that prints the wall clock as its first act (bench/lib/stamp.c,
 * linked statically when the compiler can: no loader work before it prints);
 * the floor is the same program, with the job's environment, spawned directly
 * by this process. A second row does the same with `date +%s.%N`, whose
 * dynamic loading and locale set-up come first (the job's own start-up, under
 * any scheduler; no target). While a job starts, this process waits by
 * reading its log every millisecond, not by asking the daemon: a `get` every
 * few ms would take CPU from the start it measures (two vCPUs here). Slurm:
 * sbatch → "Allocate"/"_start_job" in slurmctld.log (ms stamps), that is, the
 * controller's decision, before any process of the job exists.
 */
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { over, median } = require('../lib/stats');
const { baseEnv, poll, startDaemon, tempDir } = require('../lib/xlurm');

/** Wall clock in ms with sub-ms resolution (comparable to date +%s.%N). */
const wallMs = () => performance.timeOrigin + performance.now();

/** @param {string} text */
const dateMs = (text) => Number(text.trim()) * 1000;

/** The probe, compiled into this run's temp dir (static if possible); `date` without a compiler. */
function probe() {
  const out = path.join(tempDir('xlb-stamp'), 'stamp');
  const src = path.join(__dirname, '..', 'lib', 'stamp.c');
  for (const flags of [['-static'], []]) {
    try {
      execFileSync('cc', ['-O2', ...flags, '-o', out, src], { stdio: 'pipe' });
      return { argv: [out], label: flags.length ? 'static probe' : 'probe (dynamic: no static libc)' };
    } catch { /* next */ }
  }
  return { argv: ['date', '+%s.%N'], label: 'date (no C compiler)' };
}

/**
 * One submit → start: ms from just before the submit to the wall clock the job printed.
 * @param {import('../lib/xlurm').Daemon} d @param {string[]} argv
 */
async function submitToStart(d, argv) {
  const t0 = wallMs();
  const id = await d.submit(argv);
  const log = path.join(d.home, 'jobs', `${id}.log`);
  const printed = await poll(() => { try { const s = fs.readFileSync(log, 'utf8'); return s.endsWith('\n') && s; } catch { return false; } },
    { timeoutMs: 60000, intervalMs: 1, what: `job ${id} output` });
  await d.waitState(id, ['COMPLETED']);
  return dateMs(printed) - t0;
}

/** The same program spawned directly, with the job's environment. @param {string[]} argv */
function direct(argv) {
  const t1 = wallMs();
  return dateMs(spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', env: baseEnv() }).stdout) - t1;
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const n = ctx.quick ? 10 : 30;
  const stamp = probe();
  const date = ['date', '+%s.%N'];
  const d = await startDaemon({ backend: 'none', maxRunning: 32 });
  const xl = []; const floor = []; const xlDate = []; const floorDate = [];
  try {
    for (let r = 0; r < ctx.reps; r++) {
      ctx.log(`submit→start, rep ${r + 1}`);
      const a = []; const f = []; const ad = []; const fd = [];
      // Interleaved, so a change in machine load hits both programs alike.
      for (let i = 0; i < n; i++) {
        a.push(await submitToStart(d, stamp.argv)); f.push(direct(stamp.argv));
        ad.push(await submitToStart(d, date)); fd.push(direct(date));
      }
      xl.push(median(a)); floor.push(median(f)); xlDate.push(median(ad)); floorDate.push(median(fd));
    }
  } finally { await d.stop(); }
  const rows = [{
    measure: `submit→start (job fits at once; ${stamp.label})`, unit: 'ms', value: over(xl),
    base: { label: 'spawn of the same program', value: over(floor).median },
    target: { text: '≤ 10 ms', on: /** @type {const} */ ('value'), max: 10 },
  }, {
    measure: 'submit→first output of date +%s.%N', unit: 'ms', value: over(xlDate),
    base: { label: 'spawn of the same program', value: over(floorDate).median },
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
