// @ts-check
'use strict';
/**
 * Scale: four daemons side by side, each over 8 fake GPUs that all show a
 * foreign process (so GPU jobs stay PENDING): empty, 10k finished jobs of
 * history, 100k of history, and 100k of history plus 10k PENDING jobs. The
 * rows are inserted straight into each daemon's own database (the real
 * schema, created by the daemon) while it is stopped. Then, interleaved
 * across the four: submit round trip (persistent client), `xqueue` and
 * `xqueue --all` wall time.
 */
const { compare } = require('../lib/proc');
const { nowMs, over, median } = require('../lib/stats');
const { DAEMON_DIST, FakeNvml, request, startDaemon, submission, baseEnv } = require('../lib/xlurm');

/** better-sqlite3 as the daemon resolves it. */
function sqlite() {
  // eslint-disable-next-line global-require
  return require(require.resolve('better-sqlite3', { paths: [DAEMON_DIST] }));
}

/**
 * Insert `n` jobs in `state` into a stopped daemon's database, one transaction.
 * Finished jobs finish now (retention keeps them); PENDING jobs ask for one GPU.
 * @param {string} dbFile @param {number} n @param {'COMPLETED' | 'PENDING'} state
 */
function seed(dbFile, n, state) {
  const Database = sqlite();
  const db = new Database(dbFile);
  try {
    const now = Math.floor(Date.now() / 1000);
    const count = state === 'PENDING' ? 1 : 0;
    const spec = JSON.stringify({ command: ['python', 'train.py', '--epochs', '10'], cwd: '/tmp', env: baseEnv({ USER: 'root' }), name: 'train.py', count, kind: null, time_limit: null, script: null });
    const ins = db.prepare(`INSERT INTO jobs (owner_uid, owner_gid, owner_name, name, count, kind, device_ids, spec, state, devices, submitted_at, started_at, finished_at, exit_code, error)
      VALUES (0, 0, 'root', 'train.py', @count, NULL, NULL, @spec, @state, '[]', @now, @started, @finished, @exit, NULL)`);
    const done = state === 'COMPLETED';
    db.transaction(() => {
      for (let i = 0; i < n; i++) ins.run({ count, spec, state, now: now - 60, started: done ? now - 50 : null, finished: done ? now : null, exit: done ? 0 : null });
    })();
  } finally { db.close(); }
}

/**
 * A daemon over 8 busy fake GPUs with `history` finished and `pending` queued jobs.
 * @param {FakeNvml} fake @param {number} history @param {number} pending
 */
async function seededDaemon(fake, history, pending) {
  const opts = { backend: 'nvidia', maxRunning: 32, env: fake.env };
  let d = await startDaemon(opts);
  if (history || pending) {
    await d.stop();
    if (history) seed(d.db, history, 'COMPLETED');
    if (pending) seed(d.db, pending, 'PENDING');
    d = await startDaemon({ ...opts, home: d.home });
  }
  return d;
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const fake = new FakeNvml();
  fake.write(8, [0, 1, 2, 3, 4, 5, 6, 7]);
  const levels = [
    { label: 'empty', history: 0, pending: 0 },
    { label: '10k history', history: 10000, pending: 0 },
    { label: '100k history', history: 100000, pending: 0 },
    { label: '100k history + 10k pending', history: 100000, pending: 10000 },
  ];
  ctx.log('scale: seeding 4 daemons');
  const daemons = [];
  try {
    for (const l of levels) daemons.push(await seededDaemon(fake, l.history, l.pending));
    // submit round trip: interleaved, one sequential submit per daemon in turn
    const n = ctx.quick ? 200 : 500;
    const body = submission(['true'], { name: 'bench', count: 1 });
    const perRep = levels.map(() => /** @type {number[]} */ ([]));
    for (let r = 0; r < ctx.reps; r++) {
      ctx.log(`scale: submit, rep ${r + 1}`);
      const lat = levels.map(() => /** @type {number[]} */ ([]));
      for (let i = 0; i < n; i++) {
        for (let k = 0; k < daemons.length; k++) {
          const t0 = nowMs();
          const res = await request(daemons[k].socket, 'submit', body);
          lat[k].push(nowMs() - t0);
          if (!res.ok) throw new Error(JSON.stringify(res.error));
        }
      }
      lat.forEach((l, k) => perRep[k].push(median(l)));
    }
    const submit = perRep.map(over);
    const calls = ctx.quick ? 3 : 10;
    ctx.log('scale: xqueue');
    const q = compare(daemons.map((d, k) => ({ label: levels[k].label, argv: d.cli('xqueue', []), env: d.env, cwd: d.cwd })), { calls, reps: ctx.reps });
    ctx.log('scale: xqueue --all');
    const qa = compare(daemons.map((d, k) => ({ label: levels[k].label, argv: d.cli('xqueue', ['--all']), env: d.env, cwd: d.cwd })), { calls, reps: ctx.reps });

    const rows = [];
    for (const [what, res, unit] of /** @type {const} */ ([['submit p50', submit, 'ms'], ['xqueue', q, 'ms'], ['xqueue --all', qa, 'ms']])) {
      for (let k = 1; k < levels.length; k++) {
        const target = k === 2 ? { text: '≤ 1.2× empty', on: /** @type {const} */ ('ratio'), max: 1.2 } : null;
        rows.push({ measure: `scale: ${what}, ${levels[k].label}`, unit, value: res[k], base: { label: 'empty history', value: res[0].median }, target });
      }
    }
    return rows;
  } finally {
    for (const d of daemons) await d.stop();
  }
}

module.exports = { id: 'scale', title: 'submit and xqueue latency with 10k/100k history and 10k pending', run, seed, seededDaemon };
