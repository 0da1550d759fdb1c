// @ts-check
'use strict';
/**
 * What a user's alternatives cost, measured in the same run: a running
 * single-node Slurm (started beforehand, e.g. with slurm-setup.sh) and
 * task-spooler (a private queue server this run starts and stops). Each is
 * used only when available; otherwise `why` says what is missing.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { out, which } = require('./proc');
const { nowMs } = require('./stats');
const { poll, tempDir } = require('./xlurm');

const SLURM_LOG = process.env.XLURM_BENCH_SLURMCTLD_LOG ?? '/var/log/slurm/slurmctld.log';

/** slurmctld.log timestamp (local time, ms) → epoch ms. @param {string} s */
const logTime = (s) => new Date(s).getTime();
const DONE_RE = /^\[(\S+)\] _job_complete: JobId=(\d+) done/;
const START_RE = /^\[(\S+)\] (?:sched: Allocate JobId=(\d+) |sched\/backfill: _start_job: Started JobId=(\d+) )/;

class Slurm {
  /** @returns {Slurm | { why: string }} */
  static detect() {
    if (!which('sbatch') || !which('scontrol')) return { why: 'Slurm not installed' };
    let ping = '';
    try { ping = out('scontrol', ['ping'], { timeout: 5000 }); } catch { /* down */ }
    if (!/is UP/.test(ping)) return { why: 'Slurm installed but slurmctld not running' };
    const state = (() => { try { return out('sinfo', ['-h', '-N', '-o', '%t'], { timeout: 5000 }).trim(); } catch { return '?'; } })();
    if (!/^(idle|mix|alloc)/.test(state)) return { why: `Slurm node not usable (state ${state})` };
    if (!fs.existsSync(SLURM_LOG)) return { why: `no ${SLURM_LOG} to read job times from` };
    return new Slurm();
  }

  constructor() {
    this.work = tempDir('xlb-slurm');
    const conf = (() => { try { return fs.readFileSync('/etc/slurm/slurm.conf', 'utf8'); } catch { return ''; } })();
    this.epilog = /^Epilog=/m.test(conf);
    this.partitions = out('sinfo', ['-h', '-o', '%P']).split('\n').map((p) => p.replace(/\*$/, '').trim()).filter(Boolean);
    /** Partition for many concurrent one-CPU jobs (slurm-setup.sh's `over`: 32 slots). */
    this.wide = this.partitions.includes('over') ? 'over' : this.partitions[0];
  }

  get label() { return `Slurm ${this.version()}${this.epilog ? ' (Epilog)' : ''}`; }

  version() { try { return out('sinfo', ['-V']).trim().replace(/^slurm(-wlm)?\s*/, ''); } catch { return '?'; } }

  /** @param {string[]} args */
  sbatch(args) {
    const r = spawnSync('sbatch', ['--parsable', '-o', '/dev/null', ...args], { cwd: this.work, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`sbatch failed: ${r.stderr}`);
    return r.stdout.trim().split(';')[0];
  }

  /** Cancel this user's jobs and wait until the queue is empty. */
  async drain() {
    spawnSync('scancel', ['-u', process.env.USER ?? 'root']);
    await poll(() => out('squeue', ['-h', '-o', '%i']).trim() === '', { timeoutMs: 300000, intervalMs: 200, what: 'Slurm queue to drain' });
  }

  logSize() { try { return fs.statSync(SLURM_LOG).size; } catch { return 0; } }

  /** Lines of slurmctld.log written after byte `offset`. @param {number} offset */
  logSince(offset) {
    const fd = fs.openSync(SLURM_LOG, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const buf = Buffer.alloc(Math.max(0, size - offset));
      fs.readSync(fd, buf, 0, buf.length, offset);
      return buf.toString('utf8').split('\n');
    } finally { fs.closeSync(fd); }
  }

  /**
   * Submit one `true` into an idle partition; ms from just before sbatch to
   * the job's start and to its completion, from slurmctld.log (ms stamps).
   */
  async turnaround() {
    const off = this.logSize();
    const t0 = Date.now();
    const id = this.sbatch(['--wrap', 'true']);
    let start = NaN;
    let done = NaN;
    await poll(() => {
      for (const l of this.logSince(off)) {
        const s = START_RE.exec(l);
        if (s && (s[2] === id || s[3] === id)) start = logTime(s[1]);
        const d = DONE_RE.exec(l);
        if (d && d[2] === id) done = logTime(d[1]);
      }
      return Number.isFinite(done);
    }, { timeoutMs: 60000, intervalMs: 5, what: `Slurm job ${id}` });
    return { start: start - t0, done: done - t0 };
  }

  /** N × `sbatch --wrap true` back to back; jobs/s from first submit to last completion. @param {number} n */
  async throughput(n) {
    const off = this.logSize();
    const t0 = Date.now();
    const ids = new Set();
    for (let i = 0; i < n; i++) ids.add(this.sbatch(['-p', this.wide, '--wrap', 'true']));
    let last = 0;
    await poll(() => {
      let seen = 0;
      for (const l of this.logSince(off)) {
        const d = DONE_RE.exec(l);
        if (d && ids.has(d[2])) { seen++; last = Math.max(last, logTime(d[1])); }
      }
      return seen === n;
    }, { timeoutMs: 1800000, intervalMs: 500, what: `${n} Slurm jobs` });
    return n / ((last - t0) / 1000);
  }
}

/** @param {string} bin */
function isTaskSpooler(bin) {
  const r = require('node:child_process').spawnSync(bin, ['-V'], { input: '', encoding: 'utf8', timeout: 2000 });
  return /task.spooler/i.test(`${r.stdout ?? ''}${r.stderr ?? ''}`);
}

class Tsp {
  /** @returns {Tsp | { why: string }} */
  static detect() {
    // Debian names task-spooler `tsp` because moreutils owns `ts` (a
    // timestamp filter that would sit reading stdin): accept `ts` only when
    // it says it is task-spooler.
    const ts = which('ts');
    const bin = which('tsp') ?? (ts && isTaskSpooler(ts) ? ts : null);
    if (!bin) return { why: 'task-spooler not installed' };
    try { return new Tsp(bin); } catch (e) { return { why: `task-spooler does not start: ${(/** @type {Error} */ (e)).message}` }; }
  }

  /** @param {string} bin */
  constructor(bin) {
    this.bin = bin;
    const dir = tempDir('xlb-tsp');
    // A private queue server (TS_SOCKET), stopped by stop().
    this.env = { ...process.env, TMPDIR: dir, TS_SOCKET: path.join(dir, 'tsp.sock'), TS_MAXFINISHED: '100000' };
    delete this.env.TS_SLOTS; delete this.env.TS_ONFINISH; delete this.env.TS_ENV; delete this.env.TS_SAVELIST;
    this.run(['-S', '32']);
    process.on('exit', () => this.stop());
  }

  get label() { return 'task-spooler'; }

  /** @param {string[]} args */
  run(args) {
    const r = spawnSync(this.bin, args, { env: this.env, encoding: 'utf8', cwd: this.env.TMPDIR });
    if (r.status !== 0) throw new Error(`tsp ${args.join(' ')}: ${r.stderr || r.status}`);
    return r.stdout;
  }

  /** argv and env for timing one call. @param {string[]} args */
  cmd(args) { return { argv: [this.bin, ...args], env: this.env, cwd: this.env.TMPDIR }; }

  busy() {
    return this.run(['-l']).split('\n').slice(1).filter((l) => / (queued|running) /.test(l)).length;
  }

  async idle() { await poll(() => this.busy() === 0, { timeoutMs: 600000, intervalMs: 50, what: 'tsp queue to drain' }); this.run(['-C']); }

  /** N × `tsp -n true` with 32 slots; jobs/s from first submit until the queue is empty (polled every 50 ms). @param {number} n */
  async throughput(n) {
    await this.idle();
    const t0 = nowMs();
    for (let i = 0; i < n; i++) this.run(['-n', 'true']);
    await poll(() => this.busy() === 0, { timeoutMs: 600000, intervalMs: 50, what: 'tsp jobs' });
    const rate = n / ((nowMs() - t0) / 1000);
    this.run(['-C']);
    return rate;
  }

  stop() { spawnSync(this.bin, ['-K'], { env: this.env, stdio: 'ignore' }); }
}

module.exports = { Slurm, Tsp };
