// @ts-check
'use strict';
/**
 * One scheduling pass over 10k PENDING jobs with 8 GPUs, in this process:
 *  - the pure schedule() function (typical: 8 GPUs free, every job asks for
 *    one; worst: 3 free, every job asks for 4, so each is tried and refused);
 *  - the daemon's pass (Core over the real Store, its commit and the WAL sync that precedes any spawn, and the
 *    real DeviceManager over an in-memory backend; supervisors are not
 *    spawned): 8 GPUs free (8 jobs committed RUNNING: one commit, so the
 *    fdatasync floor is shown beside it), and none free; and the same 8 starts in reserve mode.
 */
const fs = require('node:fs');
const path = require('node:path');
const { nowMs, over, median } = require('../lib/stats');
const { DAEMON_DIST, tempDir } = require('../lib/xlurm');
const { fsyncFloor } = require('../lib/proc');

const N = 10000;
const gpu = (id) => ({ kind: 'nvidia', id, name: 'Fake H100', visible: `GPU-${id}`, npu: null, chip: null });
const inventory = Array.from({ length: 8 }, (_, i) => gpu(i));

/** Median time of the pure function for one input. @param {any} input @param {number} iters */
function timePure(input, iters) {
  const { schedule } = require(path.join(DAEMON_DIST, 'scheduler', 'schedule.js'));
  const ts = [];
  for (let i = 0; i < iters; i++) {
    const t0 = nowMs();
    schedule(input);
    ts.push(nowMs() - t0);
  }
  return median(ts);
}

/**
 * A database with N PENDING jobs of `count` GPUs, built once and copied per
 * sample: root's, or (`users`) spread round-robin over that many users, each
 * with some decayed usage in the fair-share table (docs/behaviour.md §22.2).
 */
function template(dir, users = 0, count = 1) {
  const { Store } = require(path.join(DAEMON_DIST, 'store', 'store.js'));
  const file = path.join(dir, `template-${users}-${count}.db`);
  const store = new Store(file);
  const spec = { command: ['python', 'train.py'], cwd: '/tmp', env: { PATH: '/usr/bin:/bin' }, name: 'train.py', count, kind: null, time_limit: null, script: null };
  const owner = (i) => (users ? { uid: 1000 + (i % users), gid: 1000, name: `user${i % users}` } : { uid: 0, gid: 0, name: 'root' });
  store.db.transaction(() => {
    for (let i = 0; i < N; i++) store.insert(owner(i), spec, 1);
    const put = users ? store.db.prepare('INSERT INTO usage(uid, name, usage, decayed, at) VALUES (?, ?, ?, ?, ?)') : undefined;
    for (let u = 0; u < users; u++) put?.run(1000 + u, `user${u}`, 3600 * ((u * 37) % 100), 1800 * ((u * 37) % 100), Date.now() / 1000);
  })();
  store.close();
  return file;
}

/**
 * Time one Core pass over a fresh copy of the template.
 * @param {string} tpl @param {string} dir @param {boolean} free @param {string} [mode]
 * @param {{ cfg?: object, freeIds?: number, starts?: number }} [opts] `freeIds`: only the first n GPUs idle; `starts`: jobs the pass must start (default 8 when free)
 */
async function timeDaemonPass(tpl, dir, free, mode = 'greedy', opts = {}) {
  const want = opts.starts ?? (free ? 8 : 0);
  const { Store } = require(path.join(DAEMON_DIST, 'store', 'store.js'));
  const { Core } = require(path.join(DAEMON_DIST, 'core.js'));
  const { DeviceManager } = require(path.join(DAEMON_DIST, 'devices', 'manager.js'));
  const file = path.join(dir, `pass-${Math.random().toString(36).slice(2)}.db`);
  fs.copyFileSync(tpl, file);
  const store = new Store(file);
  const backend = {
    kind: 'nvidia', devices: inventory,
    probe: async (ids) => new Map(ids.map((id) => [id, { status: free && (opts.freeIds === undefined || id < opts.freeIds) ? 'idle' : 'busy' }])),
    close() {},
  };
  const dm = new DeviceManager([backend], () => undefined, () => undefined);
  await dm.start();
  let launched = 0;
  /** @type {() => void} */
  let allLaunched = () => undefined;
  const launchedAll = new Promise((resolve) => { allLaunched = () => resolve(undefined); });
  // The runner's own work (files, spawn) is not part of the pass: a stand-in counts the starts.
  const started = () => { if (++launched === want) allLaunched(); };
  const runner = {
    launch: started, prepare: (/** @type {{id: number}} */ j) => ({ id: j.id, fds: [] }), start: started, discard() {},
    adopt() {}, cancel() {}, stop() {},
  };
  const { DEFAULT_SETTINGS } = require(path.join(DAEMON_DIST, 'config', 'daemon.js'));
  // Every setting at its default (later features add keys), as a daemon without a file has them.
  const cfg = { ...DEFAULT_SETTINGS, backend: 'nvidia', maxRunning: 32, retentionSecs: 86400, excludeIds: [], schedulerMode: mode, ...(opts.cfg ?? {}) };
  const core = new Core(dir, cfg, store, dm, runner, 0, () => undefined);
  core.recover();
  if (core.counts().PENDING !== N) throw new Error(`expected ${N} pending, got ${core.counts().PENDING}`);
  // A running daemon's WAL exists already: take the first commit on this copy outside the timing.
  store.swapBootId('bench'); // as the daemon does at start
  store.commit();
  await store.durable();
  // Until the supervisors would be spawned: the pass, its commit and the
  // fdatasync that must complete before any spawn (the loop is free meanwhile).
  const t0 = nowMs();
  core.pass();
  if (want) await launchedAll;
  const ms = nowMs() - t0;
  if (launched !== want) throw new Error(`pass started ${launched} jobs, expected ${want}`);
  dm.stop();
  store.close();
  for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
  return ms;
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const pending1 = Array.from({ length: N }, (_, i) => ({ id: i + 1, count: 1, kind: null }));
  const pending4 = Array.from({ length: N }, (_, i) => ({ id: i + 1, count: 4, kind: null }));
  const key = (d) => `${d.kind}:${d.id}`;
  const typical = { pending: pending1, running: 0, maxRunning: 32, inventory, free: new Set(inventory.map(key)) };
  const worst = { pending: pending4, running: 0, maxRunning: 32, inventory, free: new Set(inventory.slice(0, 3).map(key)) };
  // reserve mode: 5 GPUs held by 5 running jobs with time limits, 3 free; 10k jobs of 1, 2, 4 and 8
  // GPUs: an 8-GPU job reserves, the rest are tried for backfill (every 3rd has a short limit).
  const holds = new Map(inventory.slice(3).map((d, i) => [key(d), { job: 90000 + i, owner: 'root', end: 2000 + 100 * i }]));
  const mixed = Array.from({ length: N }, (_, i) => ({ id: i + 1, count: [1, 2, 4, 8][i % 4], kind: null, timeLimit: i % 3 === 0 ? 60 : null, owner: 'root' }));
  const { order } = require(path.join(DAEMON_DIST, 'scheduler', 'order.js'));
  const reserve = {
    pending: [...order(mixed)], running: 5, maxRunning: 32, inventory, free: new Set(inventory.slice(0, 3).map(key)),
    mode: 'reserve', reserveMinDevices: 2, holds, now: 1000,
  };
  // The same with device groups declared (nv = "0-3;4-7"), under require: the free devices
  // (0-2) lie in one group, so 4-GPU jobs wait with Topology and 8-GPU jobs are never placed.
  const { makeTopology } = require(path.join(DAEMON_DIST, 'scheduler', 'place.js'));
  const grouped = { ...reserve, topology: makeTopology('require', new Map([['nvidia', [[0, 1, 2, 3], [4, 5, 6, 7]]]])) };
  // Fairness (docs/behaviour.md §22): 10k jobs of 100 users with usage and per-user limits (at
  // most 4 running jobs and 4 devices each); the array is sorted by the order step first, as the
  // daemon's queue keeps it; the pass merges the users' queues by their usage.
  const users = 100;
  const { userLimitsFromFile } = require(path.join(DAEMON_DIST, 'scheduler', 'user-limits.js'));
  const userLimits = userLimitsFromFile({ default: { running_jobs: 4, devices: 4, pending_jobs: 1000 } }, () => 0);
  const usage = new Map(Array.from({ length: users }, (_, u) => [`user${u}`, 1800 * ((u * 37) % 100)]));
  const fairJobs = Array.from({ length: N }, (_, i) => ({ id: i + 1, count: 1, kind: null, timeLimit: null, owner: `user${i % users}`, uid: 1000 + (i % users), priority: 0, nice: 0, top: 0 }));
  const fair = { pending: [...order(fairJobs, usage)], running: 0, maxRunning: 32, inventory, free: new Set(inventory.map(key)), usage, userLimits, byUser: new Map() };
  const fair4 = { ...fair, pending: [...order(fairJobs.map((j) => ({ ...j, count: 4 })), usage)], free: new Set(inventory.slice(0, 3).map(key)) };
  const fairCfg = { cfg: { userLimits } };
  const iters = ctx.quick ? 50 : 200;
  const pureF = []; const pureF4 = []; const passFair = []; const passFairBusy = []; const passFair4 = []; const passFairHeld = [];
  const pureT = []; const pureW = []; const pureR = []; const pureG = []; const passFree = []; const passBusy = []; const passReserve = [];
  const dir = tempDir('xlb-sched');
  ctx.log('schedule: building 10k pending template');
  const tpl = template(dir);
  const tplUsers = template(dir, users);
  const tplUsers4 = template(dir, users, 4);
  const tplUsers2 = template(dir, users, 2);
  // Every job over its owner's device limit: nothing starts, and all 10k are merged and admitted.
  const heldCfg = { cfg: { userLimits: userLimitsFromFile({ default: { devices: 1 } }, () => 0) }, starts: 0 };
  for (let r = 0; r < ctx.reps; r++) {
    ctx.log(`schedule, rep ${r + 1}`);
    pureT.push(timePure(typical, iters));
    pureW.push(timePure(worst, iters));
    pureR.push(timePure(reserve, iters));
    pureG.push(timePure(grouped, iters));
    const a = []; const b = []; const c = [];
    for (let i = 0; i < (ctx.quick ? 3 : 5); i++) { a.push(await timeDaemonPass(tpl, dir, true)); b.push(await timeDaemonPass(tpl, dir, false)); }
    // Each in the same company as the greedy pass (after a cheap one): a pass right after another
    // that started 8 jobs pays for that one's garbage.
    for (let i = 0; i < (ctx.quick ? 3 : 5); i++) { await timeDaemonPass(tpl, dir, false); c.push(await timeDaemonPass(tpl, dir, true, 'reserve')); }
    passFree.push(median(a)); passBusy.push(median(b)); passReserve.push(median(c));
    pureF.push(timePure(fair, iters));
    pureF4.push(timePure(fair4, iters));
    const f = []; const fb = []; const f4 = []; const fh = [];
    for (let i = 0; i < (ctx.quick ? 3 : 5); i++) {
      await timeDaemonPass(tplUsers, dir, false, 'greedy', fairCfg);
      f.push(await timeDaemonPass(tplUsers, dir, true, 'greedy', fairCfg));
      fb.push(await timeDaemonPass(tplUsers, dir, false, 'greedy', fairCfg));
      f4.push(await timeDaemonPass(tplUsers4, dir, true, 'greedy', { ...fairCfg, freeIds: 3, starts: 0 }));
      fh.push(await timeDaemonPass(tplUsers2, dir, true, 'greedy', heldCfg));
    }
    passFair.push(median(f)); passFairBusy.push(median(fb)); passFair4.push(median(f4)); passFairHeld.push(median(fh));
  }
  const target = { text: '≤ 5 ms', on: /** @type {const} */ ('value'), max: 5 };
  const sync = { label: 'fdatasync floor', value: fsyncFloor(dir, 100) };
  return [
    { measure: 'schedule() 10k pending, 8 free, -g 1 each', unit: 'ms', value: over(pureT), target },
    { measure: 'schedule() 10k pending, 3 free, -g 4 each', unit: 'ms', value: over(pureW), target },
    { measure: 'schedule() 10k pending, reserve, 3 free, -g 1/2/4/8', unit: 'ms', value: over(pureR), target },
    { measure: 'schedule() 10k pending, reserve, groups 0-3;4-7 required, 3 free, -g 1/2/4/8', unit: 'ms', value: over(pureG), target },
    { measure: 'daemon pass 10k pending, 8 free (8 start)', unit: 'ms', value: over(passFree), base: sync, target },
    { measure: 'daemon pass 10k pending, reserve, 8 free (8 start)', unit: 'ms', value: over(passReserve), base: sync, target },
    { measure: 'daemon pass 10k pending, none free', unit: 'ms', value: over(passBusy), target },
    { measure: 'schedule() 10k pending of 100 users, fair share + limits, 8 free, -g 1 each', unit: 'ms', value: over(pureF), target },
    { measure: 'schedule() 10k pending of 100 users, fair share + limits, 3 free, -g 4 each', unit: 'ms', value: over(pureF4), target },
    { measure: 'daemon pass 10k pending of 100 users, fair share + limits, 8 free (8 start)', unit: 'ms', value: over(passFair), base: sync, target },
    { measure: 'daemon pass 10k pending of 100 users, fair share + limits, none free', unit: 'ms', value: over(passFairBusy), target },
    { measure: 'daemon pass 10k pending of 100 users, fair share + limits, 3 free, -g 4 each', unit: 'ms', value: over(passFair4), target },
    { measure: 'daemon pass 10k pending of 100 users, fair share, 8 free, every job over its user\'s device limit (all merged and admitted)', unit: 'ms', value: over(passFairHeld), target },
    ...await sliceRows(ctx),
  ];
}

/**
 * Card sharing (docs/behaviour.md §25.2): one pass over 1,000 pending slice
 * requests (1-16G, 10-50 % compute) over 8 cards of 80G, with every card
 * empty (slices packed until the rooms are spent) and with every card full
 * (each request tried against all 8 and left waiting).
 * @param {{ quick?: boolean; reps: number; log(msg: string): void }} ctx
 */
async function sliceRows(ctx) {
  const G = 1024 ** 3;
  const key = (d) => `${d.kind}:${d.id}`;
  const pending = Array.from({ length: 1000 }, (_, i) => ({ id: i + 1, count: 1, kind: null, timeLimit: null, share: { mem: (1 + (i % 16)) * G, compute: 10 + (i % 5) * 10 } }));
  const card = (sliced) => ({ total: 80 * G, free: 80 * G - sliced, sliced, compute: sliced ? 100 : 0, slices: sliced ? 4 : 0 });
  const empty = { pending, running: 0, maxRunning: 2000, inventory, free: new Set(inventory.map(key)), slices: new Map(inventory.map((d) => [key(d), card(0)])) };
  const full = { pending, running: 32, maxRunning: 2000, inventory, free: new Set(), slices: new Map(inventory.map((d) => [key(d), card(78 * G)])) };
  const iters = ctx.quick ? 50 : 200;
  const a = []; const b = [];
  for (let r = 0; r < ctx.reps; r++) {
    ctx.log(`schedule (slices), rep ${r + 1}`);
    a.push(timePure(empty, iters));
    b.push(timePure(full, iters));
  }
  const target = { text: '≤ 5 ms', on: /** @type {const} */ ('value'), max: 5 };
  return [
    { measure: 'schedule() 1,000 pending slice requests, 8 empty cards (packed until full)', unit: 'ms', value: over(a), target },
    { measure: 'schedule() 1,000 pending slice requests, 8 full cards (none fits)', unit: 'ms', value: over(b), target },
  ];
}

module.exports = { id: 'schedule', title: 'one scheduling pass over 10k pending jobs, 8 GPUs', run, sliceRows };
