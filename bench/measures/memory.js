// @ts-check
'use strict';
/**
 * Memory: daemon RSS idle (fresh, after a few requests), with 100k finished
 * jobs of history (after `xqueue`, `xqueue --all` and 200 submits), and the
 * RSS (and PSS, shared pages counted once) of xlurm-stepd per running job
 * with 32 jobs running. Floor: an idle `node` process.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const { childrenNamed, memory, timeOnce } = require('../lib/proc');
const { over } = require('../lib/stats');
const { poll, startDaemon, submission, request } = require('../lib/xlurm');
const { seed } = require('./scale');

const MiB = (kib) => kib / 1024;

/** RSS of an idle node process (the runtime's floor). */
async function nodeFloor() {
  const p = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  try {
    await poll(() => (memory(/** @type {number} */ (p.pid))?.rssKiB ?? 0) > 0, { what: 'node' });
    await new Promise((r) => setTimeout(r, 300));
    return MiB(memory(/** @type {number} */ (p.pid))?.rssKiB ?? NaN);
  } finally { p.kill(); }
}

/** @param {import('../lib/xlurm').Daemon} d */
const rss = (d) => MiB(memory(d.pid)?.rssKiB ?? NaN);

/** @param {number} pid */
const isLauncher = (pid) => { try { return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('--launcher'); } catch { return false; } };

/**
 * The daemon's supervisors: forked by its launcher (`xlurm-stepd --launcher`, the daemon's
 * child), or started by the daemon itself where it runs without one.
 * @param {number} daemonPid
 */
function supervisorsOf(daemonPid) {
  const direct = childrenNamed(daemonPid, 'xlurm-stepd');
  const launchers = direct.filter(isLauncher);
  return [...direct.filter((p) => !launchers.includes(p)), ...launchers.flatMap((l) => childrenNamed(l, 'xlurm-stepd'))];
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const idle = []; const hist = []; const stepRss = []; const stepPss = [];
  const floor = await nodeFloor();
  // Memory barely varies between repetitions: two suffice in --quick (which must stay under 2 min).
  for (let r = 0; r < (ctx.quick ? 2 : ctx.reps); r++) {
    ctx.log(`memory, rep ${r + 1}`);
    const d = await startDaemon({ backend: 'none', maxRunning: 32 });
    try {
      for (let i = 0; i < 10; i++) await d.call('status', {});
      idle.push(rss(d));
      // 32 supervisors at once
      const ids = [];
      for (let i = 0; i < 32; i++) ids.push(await d.submit(['sleep', '3600']));
      for (const id of ids) await d.waitState(id, ['RUNNING']);
      const pids = await poll(() => { const p = supervisorsOf(d.pid); return p.length === 32 ? p : null; }, { what: '32 supervisors' });
      const mem = pids.map(memory).filter((m) => m !== null);
      stepRss.push(MiB(mem.reduce((a, m) => a + m.rssKiB, 0) / mem.length));
      stepPss.push(MiB(mem.reduce((a, m) => a + m.pssKiB, 0) / mem.length));
      for (const id of ids) await d.call('cancel', { id });
      for (const id of ids) await d.waitState(id, ['CANCELLED']);
    } finally { await d.stop(); }

    const h = await startDaemon({ backend: 'none', maxRunning: 32 });
    await h.stop();
    seed(h.db, 100000, 'COMPLETED');
    const d2 = await startDaemon({ backend: 'none', maxRunning: 32, home: h.home });
    try {
      timeOnce({ label: 'xqueue', argv: d2.cli('xqueue', []), env: d2.env, cwd: d2.cwd });
      timeOnce({ label: 'xqueue --all', argv: d2.cli('xqueue', ['--all']), env: d2.env, cwd: d2.cwd });
      const body = submission(['true']);
      for (let i = 0; i < 200; i++) await request(d2.socket, 'submit', body);
      await poll(async () => ((await d2.counts()).COMPLETED ?? 0) >= 100200, { what: 'jobs to finish' });
      hist.push(rss(d2));
    } finally { await d2.stop(); }
  }
  const base = { label: 'idle node', value: floor, unit: 'MiB' };
  return [
    { measure: 'daemon RSS idle', unit: 'MiB', value: over(idle), base, target: { text: '≤ 80 MiB', on: /** @type {const} */ ('value'), max: 80 } },
    { measure: 'daemon RSS, 100k history', unit: 'MiB', value: over(hist), base, target: { text: '≤ 150 MiB', on: /** @type {const} */ ('value'), max: 150 } },
    { measure: 'xlurm-stepd RSS per running job', unit: 'MiB', value: over(stepRss), target: { text: '≤ 2 MiB', on: /** @type {const} */ ('value'), max: 2 } },
    { measure: 'xlurm-stepd PSS per running job', unit: 'MiB', value: over(stepPss), note: 'shared pages counted once' },
  ];
}

module.exports = { id: 'memory', title: 'daemon and supervisor memory', run };
