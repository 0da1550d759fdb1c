// @ts-check
'use strict';
/**
 * Log relay: a job writing SIZE bytes (`head -c SIZE /dev/zero`) through
 * `xrun -g 0`, whose stdout is /dev/null, against `cat` of a SIZE file (in
 * the page cache) to /dev/null. SIZE is 1 GiB (quick: 256 MiB). The job's log
 * is removed after each run.
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { timeOnce } = require('../lib/proc');
const { over } = require('../lib/stats');
const { startDaemon, tempDir } = require('../lib/xlurm');

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const size = (ctx.quick ? 256 : 1024) * 2 ** 20;
  const mib = size / 2 ** 20;
  const file = path.join(tempDir('xlb-relay'), 'data');
  execFileSync('head', ['-c', String(size), '/dev/zero'], { stdio: ['ignore', fs.openSync(file, 'w'), 'inherit'] });
  const d = await startDaemon({ backend: 'none', maxRunning: 32 });
  const xrun = []; const cat = [];
  try {
    timeOnce({ label: 'cat', argv: ['cat', file] });
    for (let r = 0; r < ctx.reps; r++) {
      ctx.log(`log relay ${mib} MiB, rep ${r + 1}`);
      cat.push(mib / (timeOnce({ label: 'cat', argv: ['cat', file] }) / 1000));
      xrun.push(mib / (timeOnce({ label: 'xrun', argv: d.cli('xrun', ['-g', '0', 'head', '-c', String(size), '/dev/zero']), env: d.env, cwd: d.cwd }) / 1000));
      for (const f of fs.readdirSync(d.home + '/jobs')) if (f.endsWith('.log')) fs.rmSync(path.join(d.home, 'jobs', f));
    }
  } finally {
    await d.stop();
    fs.rmSync(file, { force: true });
  }
  return [{
    measure: `log relay ${mib} MiB through xrun`, unit: 'MiB/s', value: over(xrun),
    base: { label: `cat ${mib} MiB file`, value: over(cat).median },
    target: { text: '≥ 0.5× cat', on: /** @type {const} */ ('ratio'), min: 0.5 },
  }];
}

module.exports = { id: 'relay', title: 'log relay through xrun vs cat', run };
