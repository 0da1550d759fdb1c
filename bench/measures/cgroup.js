// @ts-check
'use strict';
/**
 * What a job's cgroup costs (docs/behaviour.md §24.3): submit→start of the
 * same job on two daemons in the same run, one making a cgroup for every job
 * and one that cannot (its XLURM_CGROUP_ROOT names a directory that does not
 * exist, so jobs without requests run without one), interleaved so load hits
 * both alike; and a job with `-c 1 --mem 256M` (cpu, cpuset and memory
 * limits written) on the first. The difference of the medians is what making
 * and configuring the cgroup (and joining it before exec) adds; the removal
 * happens after the job's end and is timed on its own: create + configure +
 * remove in this process, through the daemon's own code (resources/cgroup.js).
 * Needs root and a cgroup hierarchy.
 */
const fs = require('node:fs');
const path = require('node:path');
const { over, median } = require('../lib/stats');
const { DAEMON_DIST, poll, startDaemon, tempDir } = require('../lib/xlurm');

const wallMs = () => performance.timeOrigin + performance.now();

/** @param {import('../lib/xlurm').Daemon} d @param {Partial<Record<string, unknown>>} extra */
async function submitToStart(d, extra) {
  const t0 = wallMs();
  const id = await d.submit(['date', '+%s.%N'], extra);
  const log = path.join(d.home, 'jobs', `${id}.log`);
  const printed = await poll(() => { try { const s = fs.readFileSync(log, 'utf8'); return s.endsWith('\n') && s; } catch { return false; } },
    { timeoutMs: 60000, intervalMs: 1, what: `job ${id} output` });
  const j = await d.waitState(id, ['COMPLETED', 'FAILED']);
  if (j.state !== 'COMPLETED') throw new Error(`job ${id}: ${j.result?.error}`);
  return Number(printed.trim()) * 1000 - t0;
}

/** Create, configure and remove job cgroups in this process: ms per job. */
function inProcess(n) {
  const { Cgroups } = require(path.join(DAEMON_DIST, 'resources', 'cgroup.js'));
  const { cgroupBases, detectLayout } = require(path.join(DAEMON_DIST, 'resources', 'layout.js'));
  const layout = detectLayout();
  const cg = new Cgroups({ layout, bases: cgroupBases(layout, tempDir('xlb-cg')) });
  const limits = { cpus: 1, cpuset: [0], mem: 256 * 2 ** 20, memoryHighRatio: 0.85, swap: false, pidsMax: 0 };
  const t0 = performance.now();
  for (let i = 1; i <= n; i++) { cg.create(i, limits); cg.remove(i); }
  const ms = (performance.now() - t0) / n;
  cg.close();
  return ms;
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const mounts = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  if (process.geteuid?.() !== 0 || !/ - cgroup2? /.test(mounts)) {
    return [{ measure: 'a job\'s cgroup: submit→start added', unit: 'ms', value: null, base: { label: 'without a cgroup', value: null, note: 'needs root and cgroups' } }];
  }
  const n = ctx.quick ? 10 : 30;
  const withCg = await startDaemon({ backend: 'none', maxRunning: 32 });
  const without = await startDaemon({ backend: 'none', maxRunning: 32, env: { XLURM_CGROUP_ROOT: '/nonexistent-xlurm-bench' } });
  const plain = []; const limited = []; const none = []; const per = [];
  try {
    for (let r = 0; r < ctx.reps; r++) {
      ctx.log(`cgroup submit→start, rep ${r + 1}`);
      const a = []; const c = []; const b = [];
      // The order rotates: the first job with a cgroup after a spell without cgroup work pays
      // the kernel's cold lock (an RCU grace period), so no variant always comes first.
      const kinds = [
        async () => a.push(await submitToStart(withCg, {})),
        async () => b.push(await submitToStart(without, {})),
        async () => c.push(await submitToStart(withCg, { cpus: 1, mem: 256 * 2 ** 20 })),
      ];
      for (let i = 0; i < n; i++) for (let k = 0; k < 3; k++) await kinds[(i + k) % 3]();
      plain.push(median(a) - median(b)); limited.push(median(c) - median(b)); none.push(median(b));
      per.push(inProcess(ctx.quick ? 50 : 200));
    }
  } finally { await withCg.stop(); await without.stop(); }
  const base = { label: 'submit→start without a cgroup', value: over(none).median };
  const target = { text: '≤ 2 ms', on: /** @type {const} */ ('value'), max: 2 };
  return [
    { measure: 'a job\'s cgroup: submit→start added (no request)', unit: 'ms', value: over(plain), base, target },
    { measure: 'a job\'s cgroup: submit→start added (-c 1 --mem 256M)', unit: 'ms', value: over(limited), base, target },
    { measure: 'create + configure + remove a limited cgroup (in process)', unit: 'ms', value: over(per), base: null, target },
  ];
}

module.exports = { id: 'cgroup', title: 'the cost of a cgroup per job', run };
