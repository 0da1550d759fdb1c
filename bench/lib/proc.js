// @ts-check
'use strict';
/** Running processes: wall time of one call, interleaved comparisons, helpers. */
const { spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { median, nowMs, over } = require('./stats');

/**
 * @typedef {{ label: string, argv: string[], env?: NodeJS.ProcessEnv, cwd?: string, uid?: number, gid?: number, stdout?: number, ok?: (code: number|null) => boolean }} Cmd
 */

/**
 * Wall time (ms) of one call, stdio to /dev/null (stdout: to that descriptor
 * if given), as a user's shell sees it minus the shell; as uid/gid if given.
 * @param {Cmd} c
 */
function timeOnce(c) {
  const t0 = nowMs();
  const r = spawnSync(c.argv[0], c.argv.slice(1), {
    stdio: ['ignore', c.stdout ?? 'ignore', 'ignore'], env: c.env ?? process.env, cwd: c.cwd, uid: c.uid, gid: c.gid,
  });
  const ms = nowMs() - t0;
  const ok = c.ok ? c.ok(r.status) : r.status === 0;
  if (!ok) throw new Error(`${c.argv.join(' ')} failed: ${r.error?.message ?? `status ${r.status} signal ${r.signal}`}`);
  return ms;
}

/**
 * Time several commands in the same run, interleaved call by call so that a
 * change in machine load hits all of them alike. Each repetition gives one
 * median per command; the result per command is the median of repetitions
 * and their spread.
 * @param {Cmd[]} cmds
 * @param {{ calls: number, reps: number, warmup?: number }} o
 */
function compare(cmds, o) {
  for (const c of cmds) for (let i = 0; i < (o.warmup ?? 2); i++) timeOnce(c);
  /** @type {number[][]} */
  const perRep = cmds.map(() => []);
  for (let r = 0; r < o.reps; r++) {
    /** @type {number[][]} */
    const samples = cmds.map(() => []);
    for (let i = 0; i < o.calls; i++) {
      // rotate the order so no command always runs right after another
      for (let k = 0; k < cmds.length; k++) {
        const j = (k + i) % cmds.length;
        samples[j].push(timeOnce(cmds[j]));
      }
    }
    samples.forEach((s, j) => perRep[j].push(median(s)));
  }
  return cmds.map((c, j) => ({ label: c.label, ...over(perRep[j]) }));
}

/** Is `bin` on PATH? @param {string} bin */
function which(bin) {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir || '.', bin);
    try { fs.accessSync(p, fs.constants.X_OK); return p; } catch { /* next */ }
  }
  return null;
}

/** Run a command, return stdout (throws on failure). @param {string} cmd @param {string[]} args @param {object} [opts] */
function out(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
}

/** VmRSS and Pss (KiB) of a process, or null if it is gone. @param {number} pid */
function memory(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    let pss = NaN;
    try { pss = Number(/Pss:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? NaN); } catch { /* old kernel */ }
    return { rssKiB: rss, pssKiB: pss };
  } catch { return null; }
}

/** Pids whose parent is `ppid` and whose command name is `comm`. @param {number} ppid @param {string} comm */
function childrenNamed(ppid, comm) {
  const pids = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      const parent = Number(stat.slice(close + 2).split(' ')[1]);
      if (parent === ppid && name === comm) pids.push(Number(e));
    } catch { /* gone */ }
  }
  return pids;
}

/**
 * The durability floor: median ms of one 4 KiB append plus fdatasync(2) in
 * `dir` (what one SQLite WAL commit with synchronous=FULL costs at least).
 * @param {string} dir @param {number} [n]
 */
function fsyncFloor(dir, n = 200) {
  const file = path.join(dir, `fsync-${process.pid}`);
  const fd = fs.openSync(file, 'w');
  const buf = Buffer.alloc(4096, 1);
  const ts = [];
  try {
    for (let i = 0; i < n; i++) {
      const t0 = nowMs();
      fs.writeSync(fd, buf);
      fs.fdatasyncSync(fd);
      ts.push(nowMs() - t0);
    }
  } finally { fs.closeSync(fd); fs.rmSync(file, { force: true }); }
  return median(ts);
}

module.exports = { timeOnce, compare, which, out, memory, childrenNamed, fsyncFloor };
