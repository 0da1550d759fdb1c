// @ts-check
'use strict';
/**
 * Log relay: a job writing SIZE bytes (`head -c SIZE /dev/zero`) through
 * `xrun -g 0`, whose stdout is /dev/null. SIZE is 1 GiB (quick: 256 MiB).
 * Baselines, interleaved with it run by run:
 *
 * - `cat` of a SIZE file (in the page cache) to /dev/null: the target;
 * - the writer alone: `head -c SIZE /dev/zero` into a new file on the file
 *   system of XLURM_HOME, i.e. what the job's own writes cost with nobody
 *   following them. No follower can be faster than the job it follows, so
 *   xrun / writer is how close xrun gets to the physical limit; cat reads a
 *   cached file and writes nothing, which a job writing its log cannot match.
 *
 * xrun takes one of two paths (packages/cli/src/follow.ts): run by the
 * daemon's account (as here: the bench starts the daemon as itself) it reads
 * the log file directly; run by any other account the daemon relays the
 * bytes over the socket. When the bench runs as root, the second path is
 * measured too, with xrun run as `nobody`. Logs are removed after each run.
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { timeOnce } = require('../lib/proc');
const { over } = require('../lib/stats');
const { startDaemon, tempDir } = require('../lib/xlurm');

/** uid/gid of `nobody` when this process may run commands as it, else undefined. */
function nobody() {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const id = (flag) => Number(execFileSync('id', [flag, 'nobody'], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch { return undefined; }
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const size = (ctx.quick ? 256 : 1024) * 2 ** 20;
  const mib = size / 2 ** 20;
  const file = path.join(tempDir('xlb-relay'), 'data');
  execFileSync('head', ['-c', String(size), '/dev/zero'], { stdio: ['ignore', fs.openSync(file, 'w'), 'inherit'] });
  const d = await startDaemon({ backend: 'none', maxRunning: 32 });
  const other = nobody();
  // The other account needs to reach the socket and use the clients' working directory.
  if (other) fs.chmodSync(d.cwd, 0o755);
  const written = path.join(d.home, 'writer-alone');
  const xrunArgv = d.cli('xrun', ['-g', '0', 'head', '-c', String(size), '/dev/zero']);
  const xrun = []; const relayed = []; const cat = []; const writer = [];
  const removeLogs = () => { for (const f of fs.readdirSync(d.home + '/jobs')) if (f.endsWith('.log')) fs.rmSync(path.join(d.home, 'jobs', f)); };
  try {
    timeOnce({ label: 'cat', argv: ['cat', file] });
    for (let r = 0; r < ctx.reps; r++) {
      ctx.log(`log relay ${mib} MiB, rep ${r + 1}`);
      cat.push(mib / (timeOnce({ label: 'cat', argv: ['cat', file] }) / 1000));
      const out = fs.openSync(written, 'w');
      try {
        writer.push(mib / (timeOnce({ label: 'writer', argv: ['head', '-c', String(size), '/dev/zero'], stdout: out }) / 1000));
      } finally {
        fs.closeSync(out);
        fs.rmSync(written);
      }
      xrun.push(mib / (timeOnce({ label: 'xrun', argv: xrunArgv, env: d.env, cwd: d.cwd }) / 1000));
      removeLogs();
      if (other) {
        relayed.push(mib / (timeOnce({ label: 'xrun (nobody)', argv: xrunArgv, env: d.env, cwd: d.cwd, ...other }) / 1000));
        removeLogs();
      }
    }
  } finally {
    await d.stop();
    fs.rmSync(file, { force: true });
  }
  const writerBase = { label: `job writing ${mib} MiB, no follower`, value: over(writer).median };
  /** @type {import('../lib/table').Row[]} */
  const rows = [{
    measure: `log relay ${mib} MiB through xrun`, unit: 'MiB/s', value: over(xrun),
    base: { label: `cat ${mib} MiB file`, value: over(cat).median },
    target: { text: '≥ 0.5× cat', on: /** @type {const} */ ('ratio'), min: 0.5 },
  }, {
    measure: `log relay ${mib} MiB through xrun vs the writer`, unit: 'MiB/s', value: over(xrun), base: writerBase,
  }];
  rows.push({
    measure: `log relay ${mib} MiB, xrun as another user (daemon relays)`, unit: 'MiB/s',
    value: other ? over(relayed) : null,
    base: other ? writerBase : { label: 'as nobody', value: null, note: 'needs root' },
  });
  return rows;
}

module.exports = { id: 'relay', title: 'log relay through xrun vs cat and vs the writer alone', run };
