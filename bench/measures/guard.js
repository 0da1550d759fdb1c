// @ts-check
'use strict';
/**
 * What the low-memory guard's sampling costs (docs/behaviour.md §24.7): CPU
 * per sample (MemAvailable and the memory/CPU pressure files, through the
 * daemon's own code, resources/guard.js) as a share of one CPU at one sample
 * every 2 s, and an idle daemon's CPU time over a window with the guard on
 * (the default 4G floor) beside one with it off (floor "0"), side by side so
 * load hits both alike. The kernel counts CPU time in 10 ms ticks, so the
 * daemons' difference is only resolved to about 10 ms per window.
 */
const fs = require('node:fs');
const path = require('node:path');
const { over } = require('../lib/stats');
const { DAEMON_DIST, startDaemon, tempDir } = require('../lib/xlurm');

/** utime + stime of a process, in seconds. @param {number} pid */
function cpuSeconds(pid) {
  const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const { LowMemoryGuard } = require(path.join(DAEMON_DIST, 'resources', 'guard.js'));
  const g = new LowMemoryGuard({
    settings: () => ({ floor: 1, samples: 3, killGrace: 1 }), jobs: () => [], markStopped: () => false, log: () => undefined,
  });
  const n = 5000;
  g.sample();
  /** @type {number[]} */
  const perSample = [];
  for (let r = 0; r < ctx.reps; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) g.sample();
    const used = process.cpuUsage(t0);
    perSample.push((used.user + used.system) / n);
  }

  const secs = ctx.quick ? 30 : 60;
  ctx.log(`guard: two idle daemons for ${secs} s`);
  const dir = tempDir('xlb-guard');
  const config = (name, floor) => {
    const file = path.join(dir, `${name}.toml`);
    fs.writeFileSync(file, `[resources]\nlow_memory_floor = "${floor}"\n`);
    return ['--config', file];
  };
  const on = await startDaemon({ args: config('on', '4G') });
  const off = await startDaemon({ args: config('off', '0') });
  try {
    await new Promise((r) => setTimeout(r, 3000));
    const a = [cpuSeconds(on.pid), cpuSeconds(off.pid)];
    await new Promise((r) => setTimeout(r, secs * 1000));
    const b = [cpuSeconds(on.pid), cpuSeconds(off.pid)];
    const pct = (i) => ((b[i] - a[i]) / secs) * 100;
    return [
      { measure: 'guard: CPU per sample', unit: 'µs', value: over(perSample) },
      { measure: 'guard: sampling every 2 s', unit: '% of one CPU', value: over(perSample.map((us) => us / 20000)), target: { text: '≤ 0.5 %', on: /** @type {const} */ ('value'), max: 0.5 } },
      { measure: `idle daemon, guard on (${secs} s)`, unit: '% of one CPU', value: over([pct(0)]) },
      { measure: `idle daemon, guard off (${secs} s)`, unit: '% of one CPU', value: over([pct(1)]), note: 'CPU time in 10 ms ticks' },
    ];
  } finally {
    await on.stop();
    await off.stop();
  }
}

module.exports = { id: 'guard', title: 'the low-memory guard\'s sampling cost', run };
