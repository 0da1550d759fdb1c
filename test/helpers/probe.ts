/**
 * Measuring a running daemon from the outside: descriptors and memory from
 * /proc, request latency from a well-behaved client, and a seeded PRNG so
 * fault-injection runs can be replayed.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { ERROR_CODES } from '@xlurm/protocol';

/** Open descriptors of a process (/proc/<pid>/fd). */
export function fdCount(pid: number): number {
  return fs.readdirSync(`/proc/${pid}/fd`).length;
}

/**
 * The lowest `n` descriptor numbers a process has free. RLIMIT_NOFILE bounds
 * descriptor numbers, so a limit equal to the first one leaves it no
 * descriptor at all, and a limit equal to the second leaves exactly one.
 */
export function freeFdNumbers(pid: number, n: number): number[] {
  const open = new Set(fs.readdirSync(`/proc/${pid}/fd`).map(Number));
  const out: number[] = [];
  for (let fd = 0; out.length < n; fd++) if (!open.has(fd)) out.push(fd);
  return out;
}

/** Resident set size of a process in KiB (/proc/<pid>/status VmRSS). */
export function rssKiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]);
}

/** Pids of processes whose comm is `name` (e.g. `xlurm-stepd`). */
export function pidsByComm(name: string): number[] {
  const out: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (fs.readFileSync(`/proc/${e}/comm`, 'utf8').trim() === name) out.push(Number(e));
    } catch { /* gone */ }
  }
  return out;
}

/** The daemon's supervisor launcher (its child `xlurm-stepd --launcher`), if one runs. */
export function launcherOf(daemonPid: number): number | undefined {
  return pidsByComm('xlurm-stepd').find((pid) => {
    try {
      const ppid = Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      return ppid === daemonPid && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('--launcher');
    } catch { return false; }
  });
}

/**
 * SIGTERM (a cancel request) every supervisor whose log lies under `home`:
 * a failed test must not leave its jobs running after its daemon is gone.
 */
export function stopSupervisorsOf(home: string): void {
  const jobs = `${home}/jobs/`;
  for (const pid of pidsByComm('xlurm-stepd')) {
    if (fdTarget(pid, 1)?.startsWith(jobs)) {
      try { process.kill(pid, 'SIGTERM'); } catch { /* already gone */ }
    }
  }
}

/** Where a descriptor of a process points (readlink /proc/<pid>/fd/<fd>), or null. */
export function fdTarget(pid: number, fd: number): string | null {
  try { return fs.readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { return null; }
}

/** mulberry32: a small seeded PRNG; `next()` in [0, 1). */
export class Rng {
  private s: number;
  constructor(seed: number) { this.s = seed >>> 0; }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number { return lo + Math.floor(this.next() * (hi - lo + 1)); }
  pick<T>(xs: readonly T[]): T { return xs[Math.floor(this.next() * xs.length)]!; }
  chance(p: number): boolean { return this.next() < p; }
}

export interface Reply {
  /** The first line the daemon sent, parsed; undefined when it sent none. */
  frame?: unknown;
  /** Bytes received in all. */
  bytes: number;
  /** The connection ended without a full line. */
  closedEmpty: boolean;
  /** Connecting failed (code). */
  connectError?: string;
}

/**
 * Send `payload` on a fresh connection (optionally ending our side after
 * it) and collect what comes back until the daemon closes or `timeout` ms.
 */
export function exchange(socket: string, payload: Buffer | string, opts: { end?: boolean; timeout?: number } = {}): Promise<Reply> {
  return new Promise((resolve) => {
    const s = net.createConnection(socket);
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    let connected = false;
    const finish = (connectError?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      const text = Buffer.concat(chunks);
      const nl = text.indexOf(0x0a);
      let frame: unknown;
      if (nl >= 0) {
        try { frame = JSON.parse(text.subarray(0, nl).toString()); } catch { frame = { unparsable: text.subarray(0, 200).toString() }; }
      }
      resolve({ frame, bytes, closedEmpty: nl < 0, ...(connectError ? { connectError } : {}) });
    };
    const timer = setTimeout(() => finish(), opts.timeout ?? 15000);
    s.on('connect', () => {
      connected = true;
      s.write(payload, () => { if (opts.end !== false) s.end(); });
    });
    s.on('data', (b: Buffer) => { if (chunks.length < 64) chunks.push(b); bytes += b.length; });
    // Failing to connect means the daemon never saw the request.
    s.on('error', (e: NodeJS.ErrnoException) => { if (connected) finish(); else finish(e.code ?? e.message); });
    s.on('close', () => finish());
  });
}

/**
 * Measures `status` round trips on fresh connections, one after another,
 * until stopped: the latency a well-behaved client sees.
 */
export class LatencyProbe {
  readonly samples: number[] = [];
  failures = 0;
  private running = true;
  private loop: Promise<void>;

  constructor(socket: string, gapMs = 20) {
    this.loop = (async () => {
      while (this.running) {
        const t0 = performance.now();
        const r = await exchange(socket, '{"v":1,"op":"status","args":{}}\n', { timeout: 5000 });
        const ms = performance.now() - t0;
        const ok = (r.frame as { ok?: boolean } | undefined)?.ok === true;
        if (ok) this.samples.push(ms); else this.failures++;
        if (gapMs) await new Promise((res) => setTimeout(res, gapMs));
      }
    })();
  }

  async stop(): Promise<{ n: number; max: number; p50: number; p99: number; failures: number }> {
    this.running = false;
    await this.loop;
    const s = [...this.samples].sort((a, b) => a - b);
    const q = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : NaN);
    return { n: s.length, max: s.length ? s[s.length - 1]! : NaN, p50: q(0.5), p99: q(0.99), failures: this.failures };
  }
}

const CODES = new Set<string>(ERROR_CODES);

/** Check one reply: a coded error, a valid result, or a closed connection; never INTERNAL. */
export function judge(r: Reply): { ok: boolean; label: string } {
  if (r.connectError) return { ok: false, label: `connect:${r.connectError}` };
  if (r.frame === undefined) return { ok: true, label: 'closed' };
  const f = r.frame as { v?: unknown; ok?: unknown; error?: { code?: unknown; message?: unknown }; event?: unknown };
  if (f.v !== 1) return { ok: false, label: 'bad-envelope' };
  if (f.ok === true) return { ok: true, label: 'ok' };
  if (f.ok !== false || !f.error || typeof f.error.code !== 'string' || typeof f.error.message !== 'string' || f.error.message === '') {
    return { ok: false, label: 'bad-error' };
  }
  if (!CODES.has(f.error.code) || f.error.code === 'INTERNAL') return { ok: false, label: `code:${f.error.code}` };
  return { ok: true, label: f.error.code };
}
