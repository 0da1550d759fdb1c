/**
 * A real daemon in a temporary XLURM_HOME, and the real CLIs run as
 * processes against it. Every path derives from the home, so test files run
 * in parallel.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI_BIN, DAEMON_MAIN, baseEnv } from './env';
import { addFailureContext, waitFor } from './wait';
import type { Scope as Tap } from './tap';

export interface RunResult { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; stdoutBuf: Buffer }

export interface RunOpts {
  env?: Record<string, string>;
  cwd?: string;
  uid?: number;
  gid?: number;
  input?: string;
  timeout?: number;
}


export interface DaemonOpts {
  backend?: string;
  maxRunning?: number;
  args?: string[];
  env?: Record<string, string>;
  home?: string;
  /** Run the daemon as this uid/gid (default: the test's own). */
  uid?: number;
  gid?: number;
  /** A command the daemon is started through, e.g. `['unshare', '--mount', '--']`. */
  wrap?: string[];
  /** Where the CLIs and the daemon entry point live (default: this checkout). */
  runtime?: { cliBin: string; daemonMain: string };
}

/** Make a short temporary directory (Unix socket paths are limited to 107 bytes). */
export function tempHome(t: Tap, prefix = 'xl'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'home');
}

/**
 * How to start node with `args`: always through `env -u NODE_OPTIONS`. The
 * test runner instruments every child through NODE_OPTIONS; that
 * instrumentation triples a node start-up (coverage is off, so it buys
 * nothing), loads from this checkout and writes under its .tap/, which
 * another account may not be able to do.
 */
export function nodeCommand(args: string[], _uid?: number): [string, string[]] {
  return ['/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, ...args]];
}

export function runProcess(cmd: string, args: string[], opts: SpawnOptions & { input?: string; timeout?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    // Without the runner's NODE_OPTIONS, so node processes started by scripts stay uninstrumented too.
    const child = spawn('/usr/bin/env', ['-u', 'NODE_OPTIONS', cmd, ...args], { ...opts, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(opts.input ?? '');
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeout ?? 60000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdoutBuf = Buffer.concat(out);
      resolve({ code, signal, stdout: stdoutBuf.toString(), stderr: Buffer.concat(err).toString(), stdoutBuf });
    });
  });
}

export class Daemon {
  proc: ChildProcess | undefined;
  output = '';
  readonly env: Record<string, string>;

  constructor(readonly t: Tap, readonly home: string, readonly opts: DaemonOpts) {
    // A short device poll (daemon environment only) so device transitions are
    // seen quickly; tests about the poll itself set their own interval.
    this.env = baseEnv({ XLURM_HOME: home, XLURM_POLL_INTERVAL_MS: '250', ...(opts.env ?? {}) });
    // A wait that fails while this daemon is around shows what it logged.
    t.teardown(addFailureContext(() => this.logTail()));
  }

  /**
   * The end of what the daemon logged: its output when started in the
   * foreground (start()), else its daemon.log (started by `xlurm start`).
   */
  logTail(max = 6000): string {
    let text = this.output;
    let where = 'output';
    if (!this.proc) {
      where = path.join(this.home, 'daemon.log');
      try { text = fs.readFileSync(where, 'utf8'); } catch { return ''; }
    }
    if (!text) return '';
    const tail = text.length > max ? `[…]${text.slice(-max)}` : text;
    return `--- daemon ${this.home}: ${where} ---\n${tail}${tail.endsWith('\n') ? '' : '\n'}--- end of daemon ${where} ---`;
  }

  /** Clients run in the home's parent (world-traversable, exists before the daemon creates the home). */
  defaultCwd(): string { return path.dirname(this.home); }

  get socket(): string { return path.join(this.home, 'xlurm.sock'); }
  get cliBin(): string { return this.opts.runtime?.cliBin ?? CLI_BIN; }
  get jobsDir(): string { return path.join(this.home, 'jobs'); }

  daemonArgs(): string[] {
    return ['daemon', '--backend', this.opts.backend ?? 'none', '--max-running', String(this.opts.maxRunning ?? 32), ...(this.opts.args ?? [])];
  }

  /** Start in the foreground (as a child of the test) and wait until it answers. */
  async start(): Promise<this> {
    const node = nodeCommand([this.opts.runtime?.daemonMain ?? DAEMON_MAIN, ...this.daemonArgs()], this.opts.uid);
    const [cmd, ...pre] = [...(this.opts.wrap ?? []), node[0]];
    const proc = spawn(cmd!, [...pre, ...node[1]], {
      env: this.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true, uid: this.opts.uid, gid: this.opts.gid,
    });
    this.proc = proc;
    proc.stdout!.on('data', (b: Buffer) => { this.output += b.toString(); });
    proc.stderr!.on('data', (b: Buffer) => { this.output += b.toString(); });
    // A daemon that exits before it answers fails the start at once, with
    // everything it wrote (read to the end of its pipes, which close with it).
    let exited: Promise<string> | undefined;
    proc.once('exit', (code, signal) => {
      const drained = Promise.all([proc.stdout!, proc.stderr!].map((s) => new Promise((r) => {
        if (s.readableEnded || s.destroyed) r(undefined); else s.once('close', r);
      })));
      // A pipe that a child of the daemon still holds never closes: give up on it after a while.
      const bounded = Promise.race([drained, new Promise((r) => setTimeout(r, 2000).unref())]);
      exited = bounded.then(() => `daemon exited during start-up (${signal ?? `exit status ${code}`})`);
    });
    await waitFor(async () => {
      if (exited) throw new Error(await exited);
      return this.ping();
    }, { timeout: 20000, what: 'daemon start' });
    return this;
  }

  /** Does a daemon answer on the socket? */
  async ping(): Promise<boolean> {
    try {
      const r = await this.request('status', {});
      return (r as { ok?: boolean }).ok === true;
    } catch { return false; }
  }

  /** One raw request, as a client would send it; resolves to the decoded reply frame. */
  request(op: string, args: unknown, extra: Record<string, unknown> = {}): Promise<unknown> {
    return rawRequest(this.socket, JSON.stringify({ v: 1, op, args, ...extra }) + '\n');
  }

  /** Run a CLI (xrun, xqueue, …, or xlurm) against this daemon. */
  run(bin: string, args: string[], opts: RunOpts = {}): Promise<RunResult> {
    return runProcess(...nodeCommand([path.join(this.cliBin, bin), ...args], opts.uid), {
      env: { ...this.env, ...(opts.env ?? {}) }, cwd: opts.cwd ?? this.defaultCwd(), uid: opts.uid, gid: opts.gid,
      input: opts.input, timeout: opts.timeout,
    });
  }

  /** Start a CLI without waiting for it. */
  spawnCli(bin: string, args: string[], opts: RunOpts = {}): ChildProcess {
    return spawn(...nodeCommand([path.join(this.cliBin, bin), ...args], opts.uid), {
      env: { ...this.env, ...(opts.env ?? {}) }, cwd: opts.cwd ?? this.defaultCwd(), uid: opts.uid, gid: opts.gid,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  async jobs(all = true): Promise<Array<Record<string, unknown>>> {
    const r = await this.request('queue', { all }) as { ok: boolean; result: Array<Record<string, unknown>> };
    if (!r.ok) throw new Error(JSON.stringify(r));
    return r.result;
  }

  async job(id: number): Promise<Record<string, any>> {
    const r = await this.request('get', { id }) as { ok: boolean; result: Record<string, any>; error?: unknown };
    if (!r.ok) throw new Error(JSON.stringify(r.error));
    return r.result;
  }

  /** Wait until job `id` reaches one of `states`. */
  async waitState(id: number, states: string | string[], timeout = 20000): Promise<Record<string, any>> {
    const want = Array.isArray(states) ? states : [states];
    return waitFor(async () => { const j = await this.job(id); return want.includes(j.state) ? j : undefined; },
      { timeout, what: `job ${id} in ${want.join('|')}` });
  }

  /** Submit through xbatch --wrap and return the id. */
  async batch(cmd: string, args: string[] = [], opts: RunOpts = {}): Promise<number> {
    const r = await this.run('xbatch', [...args, '--wrap', cmd], opts);
    if (r.code !== 0) throw new Error(`xbatch failed (${r.code}): ${r.stderr}`);
    return Number(r.stdout.trim());
  }

  /** SIGKILL the daemon (jobs keep running under their supervisors). */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    p.kill(signal);
    await gone;
  }

  /** Graceful stop through the protocol, then wait for exit. */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    try { await this.request('stop', {}); } catch { p.kill('SIGTERM'); }
    const timer = setTimeout(() => p.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  }
}

/** Start a daemon; it is stopped (and SIGKILLed if need be) at teardown. */
export async function startDaemon(t: Tap, opts: DaemonOpts = {}): Promise<Daemon> {
  const home = opts.home ?? tempHome(t);
  const d = new Daemon(t, home, opts);
  t.teardown(async () => {
    await d.stop();
  });
  try {
    await d.start();
  } catch (e) {
    t.comment(d.output);
    throw e;
  }
  return d;
}

export function rawRequest(socket: string, payload: string | Buffer, timeout = 10000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socket);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => { s.destroy(); reject(new Error('request timed out')); }, timeout);
    s.on('connect', () => s.write(payload));
    s.on('data', (b: Buffer) => chunks.push(b));
    s.on('error', (e) => { clearTimeout(timer); reject(e); });
    s.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString();
      const line = text.split('\n')[0]!;
      try { resolve(JSON.parse(line)); } catch { reject(new Error(`bad reply: ${JSON.stringify(text.slice(0, 200))}`)); }
    });
  });
}
