// @ts-check
'use strict';
/**
 * Bounded requests (docs/behaviour.md §28.2).
 *
 * Start-up: a daemon whose queue holds 100,000 pending (held) array tasks,
 * ten arrays of 10,000 with a 16 KiB environment each (a large shell's), made
 * through the daemon itself; stopped, started again: time from spawn to the
 * first answered request, and the daemon's RSS then. Targets ≤ 10 s and
 * ≤ 200 MiB.
 *
 * Another user's latency: one client submits a 10,000-task array with a
 * 1 MiB environment (one request); another sends `status` requests back to
 * back from before the submission is sent until its reply has come and the
 * pass after it has run; the row is the longest of those requests (target
 * ≤ 100 ms), its base the longest on an idle daemon.
 *
 * `XLURM_BENCH_BOUNDED_TASKS` (default 10000) sets the big array's size, so
 * the same measure can be run against a build that stores a copy per task;
 * `XLURM_BENCH_BOUNDED_PARTS=latency` runs the latency part alone.
 */
const { over, nowMs } = require('../lib/stats');
const { memory } = require('../lib/proc');
const { poll, startDaemon, submission, request, tempDir } = require('../lib/xlurm');
const fs = require('node:fs');
const path = require('node:path');

const MiB = 1024 * 1024;
const TASKS = Number(process.env.XLURM_BENCH_BOUNDED_TASKS || 10000);

/** A config without the per-user pending limit (the bench is one user, maybe not root). */
function configFile() {
  const f = path.join(tempDir('xlb-bnd'), 'xlurm.toml');
  fs.writeFileSync(f, '[limits.users.default]\npending_jobs = 0\n');
  return f;
}

/** An environment of about `bytes`. @param {number} bytes */
const envOf = (bytes) => ({ PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', BENCH_PAD: 'x'.repeat(bytes) });

/** @param {import('../run').Ctx} ctx */
async function startup(ctx, config) {
  const d = await startDaemon({ backend: 'none', args: ['--config', config] });
  const env = envOf(16 * 1024);
  try {
    for (let a = 0; a < 10; a++) {
      ctx.log(`bounded: seeding array ${a + 1} of 10`);
      await d.call('submit', submission(['true'], { name: 'seed', array: '0-9999', env, hold: true }));
    }
    if ((await d.counts()).PENDING !== 100000) throw new Error('the seed is not 100,000 pending tasks');
  } finally { await d.stop(); }
  const times = []; const rss = [];
  for (let r = 0; r < (ctx.quick ? 1 : 3); r++) {
    ctx.log(`bounded: start-up with 100,000 pending, rep ${r + 1}`);
    const t0 = nowMs();
    const e = await startDaemon({ backend: 'none', home: d.home, args: ['--config', config] });
    try {
      times.push((nowMs() - t0) / 1000);
      for (let i = 0; i < 5; i++) await e.call('status', {});
      rss.push((memory(e.pid)?.rssKiB ?? NaN) / 1024);
    } finally { await e.stop(); }
  }
  return { times, rss };
}

/** The longest `status` round trip while `busy()` runs (and for `tail` ms after). @param {string} socket @param {() => Promise<unknown>} busy */
async function longestDuring(socket, busy, tail = 300) {
  let done = false; let max = 0; let n = 0;
  const probe = (async () => {
    let end = Infinity;
    while (nowMs() < end) {
      const t0 = nowMs();
      const r = await request(socket, 'status', {});
      if (!r.ok) throw new Error('status failed');
      max = Math.max(max, nowMs() - t0); n++;
      if (done && end === Infinity) end = nowMs() + tail;
    }
  })();
  await new Promise((r) => setTimeout(r, 50)); // the probe is going before the submission is sent
  try { await busy(); } finally { done = true; }
  await probe;
  return { max, n };
}

/** @param {import('../run').Ctx} ctx */
async function latency(ctx, config) {
  const worst = []; const idle = []; const accepted = [];
  const env = envOf(MiB);
  for (let r = 0; r < (ctx.quick ? 1 : 3); r++) {
    ctx.log(`bounded: ${TASKS}-task array with a 1 MiB environment, rep ${r + 1}`);
    const d = await startDaemon({ backend: 'none', args: ['--config', config] });
    try {
      idle.push((await longestDuring(d.socket, () => new Promise((res) => setTimeout(res, 500)))).max);
      let took = 0;
      const w = await longestDuring(d.socket, async () => {
        const t0 = nowMs();
        const rep = await request(d.socket, 'submit', submission(['true'], { name: 'big', array: `0-${TASKS - 1}`, env, hold: true }));
        took = nowMs() - t0;
        if (!rep.ok) throw new Error(`submit: ${rep.error?.message}`);
      });
      worst.push(w.max); accepted.push(took);
      await poll(async () => (await d.counts()).PENDING === TASKS, { what: 'the array pending' });
    } finally { await d.stop(); }
  }
  return { worst, idle, accepted };
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const config = configFile();
  // `XLURM_BENCH_BOUNDED_PARTS=latency` leaves out the start-up (a build that stored a copy per task never serves it).
  const parts = (process.env.XLURM_BENCH_BOUNDED_PARTS || 'startup,latency').split(',');
  const none = { times: [], rss: [] };
  const s = parts.includes('startup') ? await startup(ctx, config) : none;
  const l = await latency(ctx, config);
  const idle = over(l.idle).median;
  return [
    ...(s.times.length ? [
      { measure: 'daemon start-up with 100,000 pending array tasks (to serving)', unit: 's', value: over(s.times), target: { text: '≤ 10 s', on: /** @type {const} */ ('value'), max: 10 } },
      { measure: 'daemon RSS after start-up with 100,000 pending array tasks', unit: 'MiB', value: over(s.rss), target: { text: '≤ 200 MiB', on: /** @type {const} */ ('value'), max: 200 } },
    ] : []),
    {
      measure: `another client's longest request while a ${TASKS}-task array with a 1 MiB environment is submitted`, unit: 'ms', value: over(l.worst),
      base: { label: 'longest on an idle daemon', value: idle }, target: { text: '≤ 100 ms', on: /** @type {const} */ ('value'), max: 100 },
    },
    { measure: `${TASKS}-task array with a 1 MiB environment accepted (one request)`, unit: 'ms', value: over(l.accepted) },
  ];
}

module.exports = { id: 'bounded', title: 'bounded requests: start-up with 100k pending tasks, latency while a big array is submitted', run };
