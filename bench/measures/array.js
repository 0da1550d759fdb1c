// @ts-check
'use strict';
/**
 * Arrays (docs/behaviour.md §23.2): `xbatch --array 0-9999` (10,000 tasks,
 * one request, one transaction) timed as a user sees it, the real CLI's
 * wall time against a real daemon whose 8 fake GPUs all show a foreign
 * process (so nothing starts and only the submission is timed); then one
 * scheduling pass over the resulting queue, in-process on a copy of that
 * daemon's database (as the schedule measure times its passes): with 8
 * devices free (8 tasks start), none free, and for a `%4` array, whose
 * throttle is an admit check every pending task meets.
 */
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { nowMs, over, median } = require('../lib/stats');
const { DAEMON_DIST, FakeNvml, startDaemon, tempDir } = require('../lib/xlurm');
const { fsyncFloor } = require('../lib/proc');

const N = 10000;
const gpu = (/** @type {number} */ id) => ({ kind: 'nvidia', id, name: 'Fake H100', visible: `GPU-${id}`, npu: null, chip: null });
const inventory = Array.from({ length: 8 }, (_, i) => gpu(i));

/**
 * One pass over a copy of `tpl` (N pending array tasks), until the starts it
 * decided are committed and synced (what must precede any spawn).
 * @param {string} tpl @param {string} dir @param {boolean} free @param {number} want
 */
async function timePass(tpl, dir, free, want) {
  const { Store } = require(path.join(DAEMON_DIST, 'store', 'store.js'));
  const { Core } = require(path.join(DAEMON_DIST, 'core.js'));
  const { DeviceManager } = require(path.join(DAEMON_DIST, 'devices', 'manager.js'));
  const { DEFAULT_SETTINGS } = require(path.join(DAEMON_DIST, 'config', 'daemon.js'));
  const file = path.join(dir, `pass-${Math.random().toString(36).slice(2)}.db`);
  fs.copyFileSync(tpl, file);
  const store = new Store(file);
  const backend = {
    kind: 'nvidia', devices: inventory,
    probe: async (/** @type {number[]} */ ids) => new Map(ids.map((id) => [id, { status: free ? 'idle' : 'busy' }])),
    close() {},
  };
  const dm = new DeviceManager([backend], () => undefined, () => undefined);
  await dm.start();
  let launched = 0;
  /** @type {() => void} */
  let allLaunched = () => undefined;
  const launchedAll = new Promise((resolve) => { allLaunched = () => resolve(undefined); });
  const started = () => { if (++launched === want) allLaunched(); };
  const runner = {
    launch: started, prepare: (/** @type {{id: number}} */ j) => ({ id: j.id, fds: [] }), start: started, discard() {},
    adopt() {}, cancel() {}, stop() {},
  };
  const cfg = { ...DEFAULT_SETTINGS, backend: 'nvidia', maxRunning: 32, retentionSecs: 86400, excludeIds: [] };
  const core = new Core(dir, cfg, store, dm, runner, 0, () => undefined);
  core.recover();
  if (core.counts().PENDING !== N) throw new Error(`expected ${N} pending, got ${core.counts().PENDING}`);
  store.swapBootId('bench');
  store.commit();
  await store.durable();
  const t0 = nowMs();
  core.pass();
  if (want) await launchedAll;
  const ms = nowMs() - t0;
  if (launched !== want) throw new Error(`pass started ${launched} tasks, expected ${want}`);
  dm.stop();
  store.close();
  for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
  return ms;
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const fake = new FakeNvml();
  fake.write(8, [0, 1, 2, 3, 4, 5, 6, 7]);
  const reps = ctx.quick ? 3 : 5;
  const accept = [];
  const dir = tempDir('xlb-arr');
  /** @type {Record<string, string>} */
  const tpl = {};
  for (const spec of ['0-9999', '0-9999%4']) {
    for (let r = 0; r < reps; r++) {
      ctx.log(`array: xbatch --array ${spec}, rep ${r + 1}`);
      const d = await startDaemon({ backend: 'nvidia', maxRunning: 32, env: fake.env });
      try {
        const [cmd, ...args] = d.cli('xbatch', ['-g', '1', '-n', 'sweep', '--array', spec, '--wrap', 'python train.py --seed $SLURM_ARRAY_TASK_ID']);
        const t0 = nowMs();
        const p = spawnSync(/** @type {string} */ (cmd), args, { env: d.env, cwd: d.cwd, encoding: 'utf8' });
        const ms = nowMs() - t0;
        if (p.status !== 0) throw new Error(`xbatch failed: ${p.stderr}`);
        if (spec === '0-9999') accept.push(ms);
        if ((await d.counts()).PENDING !== N) throw new Error('the array is not all pending');
      } finally { await d.stop(); }
      if (r === reps - 1) {
        tpl[spec] = path.join(dir, `${spec.replace('%', 't')}.db`);
        fs.copyFileSync(d.db, tpl[spec]);
      }
    }
  }
  // The same pass over 10k ordinary jobs (one GPU each), as the scale measure seeds them: what an array costs beyond them.
  {
    const d = await startDaemon({ backend: 'nvidia', maxRunning: 32, env: fake.env });
    await d.stop();
    require('./scale').seed(d.db, N, 'PENDING');
    tpl.plain = path.join(dir, 'plain.db');
    fs.copyFileSync(d.db, tpl.plain);
  }
  const free = []; const busy = []; const throttled = []; const plain = [];
  for (let r = 0; r < ctx.reps; r++) {
    ctx.log(`array: passes, rep ${r + 1}`);
    const a = []; const b = []; const c = []; const e = [];
    for (let i = 0; i < reps; i++) {
      a.push(await timePass(tpl['0-9999'], dir, true, 8));
      b.push(await timePass(tpl['0-9999'], dir, false, 0));
      c.push(await timePass(tpl['0-9999%4'], dir, true, 4));
      e.push(await timePass(tpl.plain, dir, true, 8));
    }
    free.push(median(a)); busy.push(median(b)); throttled.push(median(c)); plain.push(median(e));
  }
  const sync = { label: 'fdatasync floor', value: fsyncFloor(dir, 100) };
  fs.rmSync(dir, { recursive: true, force: true });
  const pass = { text: '≤ 5 ms', on: /** @type {const} */ ('value'), max: 5 };
  return [
    { measure: 'xbatch --array 0-9999 accepted (CLI wall time, 10k tasks)', unit: 'ms', value: over(accept), target: { text: '≤ 1 s', on: /** @type {const} */ ('value'), max: 1000 } },
    { measure: 'daemon pass over a 10k-task array, 8 free (8 start)', unit: 'ms', value: over(free), base: { label: '10k single jobs, 8 free', value: over(plain).median }, target: pass },
    { measure: 'daemon pass over a 10k-task array, none free', unit: 'ms', value: over(busy), target: pass },
    { measure: 'daemon pass over a 10k-task array %4, 8 free (4 start)', unit: 'ms', value: over(throttled), base: sync, target: pass },
  ];
}

module.exports = { id: 'array', title: 'xbatch --array 0-9999 and a pass over the 10k tasks it queued', run, timePass };
