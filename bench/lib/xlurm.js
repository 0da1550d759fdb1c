// @ts-check
'use strict';
/**
 * xlurm under test: a real daemon in a temporary XLURM_HOME (backend none, or
 * the fake NVML from test/fixtures/fake-nvml), raw protocol requests from this
 * process (the "persistent client"), and the real CLI programs.
 */
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const CLI_BIN = path.join(ROOT, 'packages', 'cli', 'bin');
const DAEMON_MAIN = path.join(ROOT, 'packages', 'daemon', 'dist', 'main.js');
const DAEMON_DIST = path.join(ROOT, 'packages', 'daemon', 'dist');

/** Temporary directories made by this run; removed at exit. */
const temps = [];
process.on('exit', () => { for (const d of temps) { try { fs.rmSync(d, { recursive: true, force: true }); } catch { /* best effort */ } } });

/** A fresh directory under the system temp dir (short: socket paths are limited). @param {string} prefix */
function tempDir(prefix = 'xlb') {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  temps.push(d);
  return d;
}

/** Environment of daemons and clients: nothing of the caller's leaks in. @param {Record<string,string>} [extra] */
function baseEnv(extra = {}) {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', TZ: 'UTC', HOME: process.env.HOME ?? '/root', ...extra };
}

/**
 * One request on its own connection (the protocol), resolving with the reply frame.
 * @param {string} socket @param {string} op @param {unknown} args
 * @returns {Promise<any>}
 */
function request(socket, op, args) {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socket);
    const chunks = [];
    s.on('connect', () => s.write(JSON.stringify({ v: 1, op, args }) + '\n'));
    s.on('data', (b) => {
      chunks.push(b);
      if (b.includes(10)) {
        const text = Buffer.concat(chunks).toString();
        s.destroy();
        try { resolve(JSON.parse(text.slice(0, text.indexOf('\n')))); } catch (e) { reject(e); }
      }
    });
    s.on('error', reject);
    s.on('close', () => reject(new Error(`${op}: connection closed without a reply`)));
  });
}

/** A submission as xbatch/xrun would send it. @param {string[]} command @param {Partial<Record<string, unknown>>} [extra] */
function submission(command, extra = {}) {
  return { command, cwd: '/', env: baseEnv(), name: path.basename(command[0] ?? 'job'), count: 0, kind: null, time_limit: null, script: null, ...extra };
}

/** Poll `fn` every `intervalMs` until it returns a truthy value or the deadline passes. */
async function poll(fn, { timeoutMs = 60000, intervalMs = 5, what = 'condition' } = {}) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

class Daemon {
  /** @param {{ backend?: string, maxRunning?: number, env?: Record<string,string>, home?: string, args?: string[], nodeArgs?: string[] }} opts */
  constructor(opts = {}) {
    this.opts = opts;
    this.home = opts.home ?? path.join(tempDir(), 'home');
    this.env = baseEnv({ XLURM_HOME: this.home, ...(opts.env ?? {}) });
    /** @type {import('node:child_process').ChildProcess | undefined} */
    this.proc = undefined;
    this.output = '';
  }

  get socket() { return path.join(this.home, 'xlurm.sock'); }
  get db() { return path.join(this.home, 'xlurm.db'); }
  get pid() { return /** @type {number} */ (this.proc?.pid); }
  /** Clients run here (exists before the daemon creates the home). */
  get cwd() { return path.dirname(this.home); }

  async start() {
    const args = ['daemon', '--backend', this.opts.backend ?? 'none', '--max-running', String(this.opts.maxRunning ?? 32), ...(this.opts.args ?? [])];
    const proc = spawn(process.execPath, [...(this.opts.nodeArgs ?? []), DAEMON_MAIN, ...args], { env: this.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    this.proc = proc;
    proc.stdout?.on('data', (b) => { this.output += b; });
    proc.stderr?.on('data', (b) => { this.output += b; });
    let exited = false;
    proc.once('exit', () => { exited = true; });
    await poll(async () => {
      if (exited) throw new Error(`daemon exited during start-up:\n${this.output}`);
      try { return (await this.request('status', {})).ok === true; } catch { return false; }
    }, { timeoutMs: 30000, intervalMs: 10, what: 'daemon start' });
    return this;
  }

  /** @param {string} op @param {unknown} args */
  request(op, args) { return request(this.socket, op, args); }

  /** A successful request's result (throws on a refusal). @param {string} op @param {unknown} args */
  async call(op, args) {
    const r = await this.request(op, args);
    if (!r.ok) throw new Error(`${op}: ${r.error?.code}: ${r.error?.message}`);
    return r.result;
  }

  /** @param {string[]} command @param {Partial<Record<string, unknown>>} [extra] @returns {Promise<number>} */
  async submit(command, extra) { return (await this.call('submit', submission(command, extra))).id; }

  /** @param {number} id @param {string[]} states */
  async waitState(id, states, timeoutMs = 60000) {
    return poll(async () => { const j = await this.call('get', { id }); return states.includes(j.state) ? j : null; },
      { timeoutMs, intervalMs: 2, what: `job ${id} in ${states.join('|')}` });
  }

  /** Job counts by state (status op). @returns {Promise<Record<string, number>>} */
  async counts() { return (await this.call('status', {})).counts; }

  /** argv of a CLI program against this daemon. @param {string} bin @param {string[]} args */
  cli(bin, args) { return [process.execPath, path.join(CLI_BIN, bin), ...args]; }

  /** Graceful stop (running jobs continue under their supervisors). */
  async stop() {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    try { await this.request('stop', {}); } catch { p.kill('SIGTERM'); }
    const t = setTimeout(() => p.kill('SIGKILL'), 10000);
    await gone;
    clearTimeout(t);
  }
}

/** Start a daemon; the caller stops it. @param {ConstructorParameters<typeof Daemon>[0]} opts */
async function startDaemon(opts = {}) { return new Daemon(opts).start(); }

/**
 * The fake NVML (docs/behaviour.md §9.6), compiled from test/fixtures/fake-nvml like the
 * tests' helper does, into this run's temp dir. Its state file lists the
 * devices and the processes on them and may be rewritten while the daemon runs.
 */
class FakeNvml {
  constructor() {
    // As test/helpers/fixtures.ts does: the fake's own sources plus the shared
    // fake machinery (compiled in and on the include path).
    const dirs = ['fake-nvml', 'fake-common'].map((d) => path.join(ROOT, 'test', 'fixtures', d)).filter((d) => fs.existsSync(d));
    const sources = dirs.flatMap((d) => fs.readdirSync(d).filter((f) => f.endsWith('.c')).map((f) => path.join(d, f)));
    this.dir = tempDir('xlb-nvml');
    this.library = path.join(this.dir, 'libnvidia-ml.so.1');
    const includes = dirs.slice(1).map((d) => `-I${d}`);
    execFileSync('cc', ['-shared', '-fPIC', '-O2', ...includes, '-o', this.library, ...sources, '-lpthread'], { stdio: 'pipe' });
    this.state = path.join(this.dir, 'state');
    this.write(0);
  }

  /** n devices; `busy` lists indexes that show a foreign compute process. @param {number} n @param {number[]} [busy] */
  write(n, busy = []) {
    const lines = [];
    for (let i = 0; i < n; i++) lines.push(`device ${i} GPU-be4c0000-0000-4000-8000-${String(i).padStart(12, '0')} Fake H100`);
    for (const i of busy) lines.push(`procs ${i} 999999`);
    fs.writeFileSync(`${this.state}.tmp`, lines.join('\n') + '\n');
    fs.renameSync(`${this.state}.tmp`, this.state);
  }

  get env() { return { XLURM_NVML_LIBRARY: this.library, XLURM_FAKE_NVML_STATE: this.state }; }
}

module.exports = { ROOT, CLI_BIN, DAEMON_DIST, Daemon, FakeNvml, startDaemon, request, submission, poll, tempDir, baseEnv };
