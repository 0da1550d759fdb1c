// @ts-check
'use strict';
/**
 * Report: `xlurm report --days 30 --html FILE` over a generated month of a busy host: 8 fake GPUs,
 * jobs of 1, 2, 4 and 8 devices from four users arriving about every 3 minutes and placed on the
 * devices that free first (about 14,000 jobs), and a device sample every 30 s for each device
 * (8 × 86,400 = 691,200 rows). The rows go straight into the daemon's own database (the real
 * schema, created by the daemon) while it is stopped. Wall time of the whole command (the
 * daemon's query, the transfer, the drawing, the write) and the size of the file.
 */
const fs = require('node:fs');
const path = require('node:path');
const { compare } = require('../lib/proc');
const { DAEMON_DIST, FakeNvml, startDaemon, tempDir } = require('../lib/xlurm');

const DAY = 86400;
const USERS = ['alice', 'bob', 'carol', 'dave'];

/** better-sqlite3 as the daemon resolves it. */
function sqlite() {
  // eslint-disable-next-line global-require
  return require(require.resolve('better-sqlite3', { paths: [DAEMON_DIST] }));
}

/**
 * A month of jobs and samples, ending now. @param {string} dbFile @param {number} days
 * @returns {{ jobs: number, samples: number }}
 */
function seedMonth(dbFile, days) {
  const Database = sqlite();
  const db = new Database(dbFile);
  let seed = 20;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  try {
    const now = Math.floor(Date.now() / 1000);
    const since = now - days * DAY;
    const ins = db.prepare(`INSERT INTO jobs (owner_uid, owner_gid, owner_name, name, count, kind, device_ids, spec, state, devices, submitted_at, started_at, finished_at, exit_code, error)
      VALUES (@uid, @uid, @user, 'train.py', @count, NULL, NULL, @spec, @state, @devices, @submitted, @started, @finished, @exit, NULL)`);
    const end1 = db.prepare(`UPDATE jobs SET state = ?, finished_at = ?, exit_code = 0 WHERE id = ?`);
    const sample = db.prepare(`INSERT INTO device_samples (at, device, status, job, user, utilization, memory_used) VALUES (?, ?, ?, ?, ?, ?, ?)`);
    const free = new Array(8).fill(since);
    /** The job on each device over time, for the samples: [start, end, id, user][] per device. */
    const held = Array.from({ length: 8 }, () => /** @type {Array<[number, number, number, string]>} */ ([]));
    let jobs = 0;
    db.transaction(() => {
      for (let t = since, id = 1; t < now; id++) {
        t += Math.floor(rnd() * 300) + 30;
        const count = [1, 1, 1, 1, 2, 2, 4, 8][Math.floor(rnd() * 8)];
        const order = [...free.keys()].sort((a, b) => free[a] - free[b]).slice(0, count);
        const start = Math.max(t, ...order.map((x) => free[x])) + 1;
        const end = start + Math.floor(Math.exp(rnd() * 7.5)) + 60;
        if (start > now) continue;
        for (const x of order) { free[x] = end; held[x].push([start, end, id, '']); }
        const u = Math.floor(rnd() * USERS.length);
        for (const x of order) held[x][held[x].length - 1][3] = USERS[u];
        const finished = end <= now ? end : null;
        const devices = JSON.stringify(order.map((x) => ({ kind: 'nvidia', id: x, name: 'Fake H100', visible: `GPU-be4c0000-0000-4000-8000-${String(x).padStart(12, '0')}`, npu: null, chip: null })));
        const spec = JSON.stringify({ command: ['python', 'train.py'], cwd: '/tmp', env: {}, name: 'train.py', count, kind: null, time_limit: null, script: null });
        // Inserted running and then ended, as the daemon does, so the store's triggers keep
        // their rollups (usage_daily, which `stats` reads) as they would have.
        const row = ins.run({ uid: 1000 + u, user: USERS[u], count, spec, state: 'RUNNING', devices, submitted: t, started: start, finished: null, exit: null });
        if (finished !== null) end1.run(rnd() < 0.9 ? 'COMPLETED' : 'FAILED', finished, row.lastInsertRowid);
        jobs++;
      }
    })();
    let samples = 0;
    db.transaction(() => {
      for (let x = 0; x < 8; x++) {
        const h = held[x];
        let k = 0;
        for (let at = since; at < now; at += 30) {
          while (k < h.length && h[k][1] <= at) k++;
          const on = k < h.length && h[k][0] <= at ? h[k] : null;
          sample.run(at, `nv:${x}`, on ? 'allocated' : 'idle', on ? on[2] : null, on ? on[3] : null, on ? 0.4 + rnd() * 0.6 : 0, on ? 4e10 : 0);
          samples++;
        }
      }
    })();
    return { jobs, samples };
  } finally { db.close(); }
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const fake = new FakeNvml();
  fake.write(8);
  const opts = { backend: 'nvidia', maxRunning: 32, env: fake.env, args: ['--retention', '60d'] };
  let d = await startDaemon(opts);
  const out = tempDir('xlb-report');
  try {
    await d.stop();
    ctx.log('report: seeding 30 days of 8 devices (jobs and 30 s samples)');
    const seeded = seedMonth(d.db, 30);
    d = await startDaemon({ ...opts, home: d.home });
    const file = path.join(out, 'report.html');
    const calls = ctx.quick ? 2 : 5;
    ctx.log(`report: ${seeded.jobs} jobs, ${seeded.samples} samples; xlurm report --days 30`);
    const [wall] = compare([{ label: 'report', argv: d.cli('xlurm', ['report', '--days', '30', '--html', file]), env: d.env, cwd: d.cwd }], { calls, reps: ctx.reps });
    const size = fs.statSync(file).size / 1024;
    return [
      { measure: `report: xlurm report --days 30 (8 devices, ${seeded.jobs} jobs, ${seeded.samples} samples)`, unit: 'ms', value: wall, target: { text: '≤ 3 s', on: /** @type {const} */ ('value'), max: 3000 } },
      { measure: 'report: the HTML file', unit: 'KiB', value: { median: size, min: size, max: size, n: 1 }, target: { text: '≤ 2 MiB', on: /** @type {const} */ ('value'), max: 2048 } },
    ];
  } finally {
    await d.stop();
    fs.rmSync(out, { recursive: true, force: true });
  }
}

module.exports = { id: 'report', title: 'xlurm report over 30 days of 8 devices with 30 s samples', run, seedMonth };
