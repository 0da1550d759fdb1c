// @ts-check
'use strict';
/**
 * Submit round trip from a persistent client (this process; one connection
 * per request, as the protocol requires): p50 and p99 of sequential submits,
 * and sustained submissions/s with many requests in flight. Every reply is
 * sent only after the job is committed (durable). The daemon runs one
 * blocker job with --max-running 1, so the submitted jobs stay PENDING and
 * the figure is the submit path, not job start-up. Floor: one 4 KiB append
 * plus fdatasync in XLURM_HOME (a durable submit needs at least one).
 * Competitors: `sbatch --hold` and `tsp -n true`, one process per submit
 * (neither has a persistent client).
 */
const { compare, fsyncFloor } = require('../lib/proc');
const { nowMs, over, pct } = require('../lib/stats');
const { request, startDaemon, submission } = require('../lib/xlurm');

/** Unmeasured submits before the sequential ones. */
const WARMUP = 3000;

/**
 * A persistent client and the daemon it talks to are measured warm, in their
 * steady state. V8 takes 2,000-3,000 requests to optimize both sides here: in
 * chunks of 500 submits from a fresh daemon and client, the p50 went 1.11,
 * 1.11, 1.12, 0.97, 0.84, 0.66, 0.56, 0.57 ms while the daemon's user CPU per
 * submit fell from 520 to 160-260 us and the client's from 390 to 150-190 us
 * (docs/performance.md). Until 2026-11-30 this was 200 per repetition; now the
 * repetitions share one daemon, warmed once.
 * @param {import('../lib/xlurm').Daemon} d
 */
async function warmUp(d) {
  const body = submission(['true'], { name: 'bench' });
  for (let i = 0; i < WARMUP; i++) {
    const r = await request(d.socket, 'submit', body);
    if (!r.ok) throw new Error(JSON.stringify(r.error));
  }
}

/**
 * Sequential round trips and a sustained burst against one daemon.
 * @param {import('../lib/xlurm').Daemon} d @param {number} sequential @param {number} burst @param {number} inFlight
 */
async function measureSubmits(d, sequential, burst, inFlight) {
  const body = submission(['true'], { name: 'bench' });
  const lat = [];
  for (let i = 0; i < sequential; i++) {
    const t0 = nowMs();
    const r = await request(d.socket, 'submit', body);
    lat.push(nowMs() - t0);
    if (!r.ok) throw new Error(JSON.stringify(r.error));
  }
  let next = 0;
  const t0 = nowMs();
  const worker = async () => {
    while (next++ < burst) {
      const r = await request(d.socket, 'submit', body);
      if (!r.ok) throw new Error(JSON.stringify(r.error));
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const rate = burst / ((nowMs() - t0) / 1000);
  return { p50: pct(lat, 0.5), p99: pct(lat, 0.99), rate };
}

/** A daemon whose only slot is taken, so submitted jobs stay PENDING. @param {object} [opts] */
async function blockedDaemon(opts = {}) {
  const d = await startDaemon({ backend: 'none', maxRunning: 1, ...opts });
  const blocker = await d.submit(['sleep', '3600']);
  await d.waitState(blocker, ['RUNNING']);
  return { d, blocker };
}

/** Cancel the blocker (its supervisor would outlive the daemon) and stop. */
async function release(d, blocker) {
  await d.call('cancel', { id: blocker });
  await d.waitState(blocker, ['CANCELLED', 'FAILED', 'COMPLETED']);
  await d.stop();
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const sequential = ctx.quick ? 500 : 1000;
  const burst = ctx.quick ? 2000 : 5000;
  const p50 = []; const p99 = []; const rate = []; const sync = [];
  {
    const { d, blocker } = await blockedDaemon();
    try {
      ctx.log('submit warm-up');
      await warmUp(d);
      for (let r = 0; r < ctx.reps; r++) {
        ctx.log(`submit round trip, rep ${r + 1}`);
        const m = await measureSubmits(d, sequential, burst, 32);
        p50.push(m.p50); p99.push(m.p99); rate.push(m.rate);
        sync.push(fsyncFloor(d.home, 100));
      }
    } finally { await release(d, blocker); }
  }

  /** @type {{label: string, ms: number|null, note?: string}[]} */
  const competitors = [];
  const calls = ctx.quick ? 10 : 30;
  if ('why' in ctx.slurm) competitors.push({ label: 'sbatch --hold', ms: null, note: ctx.slurm.why });
  else {
    ctx.log('sbatch --hold');
    const s = ctx.slurm;
    const [c] = compare([{ label: 'sbatch', argv: ['sbatch', '--hold', '-o', '/dev/null', '--wrap', 'true'], cwd: s.work }], { calls, reps: 1, warmup: 1 });
    await s.drain();
    competitors.push({ label: 'sbatch --hold', ms: c.median });
  }
  if ('why' in ctx.tsp) competitors.push({ label: 'tsp -n true', ms: null, note: ctx.tsp.why });
  else {
    ctx.log('tsp -n true');
    const [c] = compare([{ label: 'tsp', ...ctx.tsp.cmd(['-n', 'true']) }], { calls, reps: 1, warmup: 1 });
    await ctx.tsp.idle();
    competitors.push({ label: 'tsp -n true', ms: c.median });
  }

  const rows = [{
    measure: 'submit p50 (persistent client)', unit: 'ms', value: over(p50),
    base: { label: 'fdatasync floor', value: over(sync).median }, target: { text: '≤ 1 ms', on: 'value', max: 1 },
  }];
  for (const c of competitors) {
    rows.push({ measure: `submit p50 vs ${c.label}`, unit: 'ms', value: over(p50), base: { label: `${c.label} (process)`, value: c.ms, note: c.note } });
  }
  rows.push({ measure: 'submit p99 (persistent client)', unit: 'ms', value: over(p99), base: { label: 'fdatasync floor', value: over(sync).median }, target: { text: '≤ 5 ms', on: 'value', max: 5 } });
  competitors.forEach((c, i) => {
    rows.push({
      measure: `sustained submits/s (32 in flight) vs ${c.label}`, unit: '/s', value: over(rate),
      base: { label: `${c.label} sequential`, value: c.ms ? 1000 / c.ms : null, note: c.note, unit: '/s' },
      target: i === 0 ? { text: '≥ 2000/s', on: 'value', min: 2000 } : null,
    });
  });
  return rows;
}

module.exports = { id: 'submit', title: 'submit round trip and sustained submissions', run, measureSubmits, blockedDaemon, release };
