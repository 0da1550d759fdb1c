// @ts-check
'use strict';
/**
 * Accounting (docs/behaviour.md §26): `xlurm stats --days 30` over a
 * 100,000-job history against `node -e 0` (both started the same way, from
 * the very same clean environment, in interleaved pairs, as the start-up
 * measure does); what sampling costs the daemon in CPU (8 fake NVML GPUs, a
 * metrics file: the daemon's CPU time with sampling every second against the
 * same daemon without sampling, per sample, scaled to the default 30 s);
 * and the submit p50 with sampling every second against without.
 *
 * The history is written straight into the store before the daemon starts
 * (each job inserted RUNNING and then ended, so the store's own triggers
 * keep the daily summary as the daemon would): 20 users, 90 days, runs of
 * 1 minute to 2 hours on 1-4 devices, a sixth of the jobs not completed.
 */
const fs = require('node:fs');
const path = require('node:path');
const { timeOnce } = require('../lib/proc');
const { median, over, pct, nowMs } = require('../lib/stats');
const { DAEMON_DIST, Daemon, FakeNvml, request, submission, tempDir } = require('../lib/xlurm');

const HISTORY = 100_000;
const DAY = 86400;

/** Build the history in `home`'s store (the daemon's own Store class: its migrations and triggers). @param {string} home */
function writeHistory(home) {
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  const { Store } = require(path.join(DAEMON_DIST, 'store', 'store.js'));
  const store = new Store(path.join(home, 'xlurm.db'));
  const db = store.db;
  const now = Math.floor(Date.now() / 1000);
  const insert = db.prepare(`INSERT INTO jobs (owner_uid, owner_gid, owner_name, name, count, kind, spec, state, devices, submitted_at, started_at)
                             VALUES (?, ?, ?, 'train', ?, NULL, ?, 'RUNNING', '[]', ?, ?)`);
  const finish = db.prepare(`UPDATE jobs SET state = ?, exit_code = ?, finished_at = ? WHERE id = ?`);
  const states = ['COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED', 'FAILED', 'COMPLETED', 'CANCELLED', 'COMPLETED', 'COMPLETED', 'COMPLETED', 'TIMED_OUT'];
  let seed = 42;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  db.transaction(() => {
    for (let i = 0; i < HISTORY; i++) {
      const end = now - Math.floor(rnd() * 90 * DAY);
      const run = 60 + Math.floor(rnd() * 7200);
      const wait = Math.floor(rnd() * rnd() * 3600);
      const uid = 2000 + (i % 20);
      const count = 1 + (i % 4);
      const spec = JSON.stringify({ command: ['python', 'train.py'], cwd: '/', env: {}, name: 'train', count });
      const id = insert.run(uid, uid, `user${i % 20}`, count, spec, end - run - wait, end - run).lastInsertRowid;
      const state = states[i % states.length];
      finish.run(state, state === 'COMPLETED' ? 0 : 1, end, id);
    }
  })();
  store.close();
}

/** `a` and `b` in interleaved pairs (a b, b a, …); per repetition each side's median. */
function pairs(a, b, o) {
  for (let i = 0; i < 2; i++) { timeOnce(a); timeOnce(b); }
  const repA = []; const repB = [];
  for (let r = 0; r < o.reps; r++) {
    const ta = []; const tb = [];
    for (let i = 0; i < o.pairs; i++) {
      if (i % 2 === 0) { ta.push(timeOnce(a)); tb.push(timeOnce(b)); } else { tb.push(timeOnce(b)); ta.push(timeOnce(a)); }
    }
    repA.push(median(ta)); repB.push(median(tb));
  }
  return { a: over(repA), b: over(repB) };
}

/** utime + stime of a process, in ms. @param {number} pid */
function cpuMs(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms (USER_HZ 100)
}

/** A config file for `[accounting]`. @param {string} dir @param {string} interval @param {string} [metricsFile] */
function accountingConfig(dir, interval, metricsFile = '') {
  const file = path.join(dir, `acc-${interval}.toml`);
  fs.writeFileSync(file, `[accounting]\nsample_interval = "${interval}"\nmetrics_file = "${metricsFile}"\n`);
  return file;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const rows = [];
  const dir = tempDir('xlb-stats');

  ctx.log(`stats: writing a ${HISTORY}-job history`);
  const home = path.join(dir, 'home');
  writeHistory(home);
  {
    const d = await new Daemon({ backend: 'none', home, env: { XLURM_CONFIG: accountingConfig(dir, '0') } }).start();
    try {
      const env = d.env;
      const cwd = d.cwd;
      const node = { label: 'node -e 0', argv: [process.execPath, '-e', '0'], env, cwd };
      const stats = { label: 'xlurm stats --days 30', argv: d.cli('xlurm', ['stats', '--days', '30']), env, cwd };
      ctx.log('stats: xlurm stats --days 30 against node -e 0');
      const r = pairs(stats, node, { pairs: ctx.quick ? 8 : 20, reps: ctx.reps });
      rows.push({
        measure: `xlurm stats --days 30 (${HISTORY / 1000}k-job history)`, unit: 'ms', value: r.a,
        base: { label: 'node -e 0', value: r.b.median }, target: { text: '≤ 1.3× node -e 0', on: 'ratio', max: 1.3 },
      });
      // The same client start-up with a trivial request, for scale: what every command pays.
      const status = { label: 'xlurm status', argv: d.cli('xlurm', ['status']), env, cwd };
      const st = pairs(status, node, { pairs: ctx.quick ? 8 : 20, reps: ctx.reps });
      rows.push({ measure: 'xlurm status (same daemon, for scale)', unit: 'ms', value: st.a, base: { label: 'node -e 0', value: st.b.median } });
      // The daemon's own part: the stats request alone, from this process.
      const lat = [];
      for (let i = 0; i < (ctx.quick ? 30 : 100); i++) {
        const t0 = nowMs();
        const res = await request(d.socket, 'stats', { days: 30 });
        lat.push(nowMs() - t0);
        if (!res.ok) throw new Error(JSON.stringify(res.error));
      }
      rows.push({ measure: 'stats request round trip (100k-job history, 30 days)', unit: 'ms', value: over([pct(lat, 0.5)]), base: null });
    } finally { await d.stop(); }
  }

  ctx.log('stats: CPU of sampling (8 fake GPUs, metrics file)');
  const fake = new FakeNvml();
  fake.write(8);
  const windowMs = ctx.quick ? 6000 : 15000;
  /** @param {string} interval */
  const daemonCpu = async (interval) => {
    const d = await new Daemon({
      backend: 'nvidia', env: { ...fake.env, XLURM_CONFIG: accountingConfig(dir, interval, path.join(dir, `m-${interval}.prom`)) },
    }).start();
    try {
      await sleep(1500); // past the start-up's own work
      const c0 = cpuMs(d.pid); const t0 = nowMs();
      await sleep(windowMs);
      return { cpu: cpuMs(d.pid) - c0, ms: nowMs() - t0 };
    } finally { await d.stop(); }
  };
  const perSample = [];
  for (let r = 0; r < ctx.reps; r++) {
    const off = await daemonCpu('0');
    const on = await daemonCpu('1s');
    perSample.push(Math.max(0, on.cpu / (on.ms / 1000) - off.cpu / (off.ms / 1000)));
  }
  // CPU ms per sample (one a second) → share of one CPU at one sample per 30 s.
  const at30 = over(perSample.map((ms) => (ms / 30000) * 100));
  rows.push({
    measure: 'sampling every 30 s (8 devices, metrics file): share of one CPU', unit: '%', value: at30,
    base: null, target: { text: '≤ 0.5 %', on: 'value', max: 0.5 },
  });

  ctx.log('stats: submit p50 with sampling every 1 s against without');
  /** @param {string} interval */
  const submitP50 = async (interval) => {
    const d = await new Daemon({ backend: 'none', maxRunning: 1, env: { XLURM_CONFIG: accountingConfig(dir, interval, path.join(dir, `s-${interval}.prom`)) } }).start();
    try {
      const blocker = await d.submit(['sleep', '3600']);
      await d.waitState(blocker, ['RUNNING']);
      const body = submission(['true'], { name: 'bench' });
      for (let i = 0; i < 3000; i++) await request(d.socket, 'submit', body); // warm (see submit.js)
      const lat = [];
      const until = nowMs() + (ctx.quick ? 3000 : 8000); // several samples fall inside
      while (nowMs() < until) {
        const t0 = nowMs();
        const res = await request(d.socket, 'submit', body);
        lat.push(nowMs() - t0);
        if (!res.ok) throw new Error(JSON.stringify(res.error));
      }
      await d.call('cancel', { id: blocker });
      return pct(lat, 0.5);
    } finally { await d.stop(); }
  };
  const offs = []; const ons = [];
  for (let r = 0; r < ctx.reps; r++) { offs.push(await submitP50('0')); ons.push(await submitP50('1s')); }
  rows.push({
    measure: 'submit p50 with sampling every 1 s', unit: 'ms', value: over(ons),
    base: { label: 'without sampling', value: over(offs).median }, target: { text: 'within noise of without', on: 'ratio', max: 1.1 },
  });
  return rows;
}

module.exports = { id: 'stats', title: 'accounting: xlurm stats over a 100k-job history, the cost of sampling', run };
