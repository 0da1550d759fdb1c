/**
 * The low-memory guard (docs/behaviour.md §24.7). Every 2 s it reads the
 * host's MemAvailable and, where the kernel has them, the memory and CPU
 * pressure (avg10). When MemAvailable stays below `low_memory_floor` for
 * `low_memory_samples` consecutive samples, it stops ONE running job: the one
 * using the most memory above its request (a job without a request counts
 * all its memory), measured from its cgroup. Stopping = SIGTERM to the job's
 * process groups, SIGKILL to what is left after the grace (at least 10 s);
 * the job then ends OUT_OF_MEMORY, exit 70, with the guard's error, a
 * transition Core makes (Core.stopForLowMemory marks it first).
 *
 * It never touches a process that xlurm did not start: only processes of a
 * job's own cgroup are signalled, never the job's supervisor, and a host that
 * is low because of something else stops no job whose use is within its
 * request. After a stop it waits for the stopped job to end and for the
 * samples to count again from zero before it picks another.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatSize } from '@xlurm/protocol';

/** Seconds between samples. */
export const GUARD_INTERVAL_MS = 2000;
/** The least time a job stopped by the guard gets between SIGTERM and SIGKILL. */
export const GUARD_MIN_GRACE_SECS = 10;

/** The `some`/`full` avg10 of a /proc/pressure file; null where the kernel has none. */
export interface Pressure { some: number; full: number | null }

/** One sample (kept in memory: the last one, for accounting's sampling). */
export interface HostMemorySample {
  /** Unix milliseconds. */
  at: number;
  /** MemAvailable in bytes; null when /proc/meminfo could not be read. */
  mem_available: number | null;
  memory_pressure: Pressure | null;
  cpu_pressure: Pressure | null;
}

/** A running job as the guard sees it. */
export interface GuardJob {
  id: number;
  /** Its memory request in bytes; 0 = none. */
  mem: number;
  /** Bytes its cgroup uses now; undefined when unknown (then it is never picked). */
  usage(): number | undefined;
  /** The PIDs of its cgroup (never the supervisor's). */
  procs(): number[];
}

/** The settings in force (read at every sample, so a reload applies at once). */
export interface GuardSettings {
  /** `[resources] low_memory_floor` in bytes; 0 disables the guard. */
  floor: number;
  /** `[resources] low_memory_samples`: consecutive samples below the floor before a stop. */
  samples: number;
  /** `[limits] kill_grace` in seconds (the guard gives at least GUARD_MIN_GRACE_SECS). */
  killGrace: number;
}

export interface GuardOptions {
  settings: () => GuardSettings;
  jobs: () => GuardJob[];
  /**
   * Record the stop with Core (the job will end OUT_OF_MEMORY, exit 70, with
   * `error`); false when the job is no longer running (nothing is signalled).
   */
  markStopped: (id: number, error: string) => boolean;
  log: (msg: string) => void;
  intervalMs?: number;
  /** Test helpers and the configuration only; never a job's environment. */
  meminfoPath?: string;
  pressureDir?: string;
  /** process.kill (tests record instead). */
  kill?: (pid: number, signal: NodeJS.Signals) => void;
  /** setTimeout for the SIGKILL (tests run it by hand); returns how to cancel it. */
  later?: (fn: () => void, ms: number) => () => void;
}

function later(fn: () => void, ms: number): () => void {
  const t = setTimeout(fn, ms);
  t.unref();
  return () => clearTimeout(t);
}

/** MemAvailable in bytes from /proc/meminfo's text; null when absent. */
export function parseMemAvailable(text: string): number | null {
  const m = /^MemAvailable:\s+(\d+)\s*kB/m.exec(text);
  return m ? Number(m[1]) * 1024 : null;
}

/** `some avg10=1.23 …` / `full avg10=…` of a pressure file. */
export function parsePressure(text: string): Pressure | null {
  const some = /^some avg10=([\d.]+)/m.exec(text);
  if (!some) return null;
  const full = /^full avg10=([\d.]+)/m.exec(text);
  return { some: Number(some[1]), full: full ? Number(full[1]) : null };
}

function readOr(file: string): string | null {
  try { return fs.readFileSync(file, 'utf8'); } catch { return null; }
}

/**
 * The job to stop: the most memory above its request (all of it for a job
 * without one), among jobs that use more than they asked for. Undefined when
 * every job is within its request or no usage is known.
 */
export function pickVictim(jobs: readonly GuardJob[]): { job: GuardJob; usage: number } | undefined {
  let best: { job: GuardJob; usage: number; over: number } | undefined;
  for (const job of jobs) {
    const usage = job.usage();
    if (usage === undefined) continue;
    const over = usage - job.mem;
    if (over <= 0) continue;
    if (!best || over > best.over || (over === best.over && job.id < best.job.id)) best = { job, usage, over };
  }
  return best && { job: best.job, usage: best.usage };
}

/** The process group of a PID (field 5 of /proc/<pid>/stat); undefined when it is gone. */
function pgrpOf(pid: number): number | undefined {
  const stat = readOr(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const pgrp = Number(fields[2]);
  return Number.isInteger(pgrp) && pgrp > 1 ? pgrp : undefined;
}

export class LowMemoryGuard {
  private timer: NodeJS.Timeout | undefined;
  private below = 0;
  private latest: HostMemorySample | null = null;
  /** The job being stopped (the guard waits for it to end before picking another). */
  private stopping: { id: number; cancelKill: () => void } | undefined;
  /** The last time a "nothing to stop" was logged (once per low episode). */
  private toldNothing = false;

  constructor(private readonly o: GuardOptions) {}

  get enabled(): boolean {
    const c = this.o.settings();
    return c.floor > 0 && c.samples > 0;
  }

  start(): void {
    if (this.timer) return;
    // With the guard off (floor 0) the tick reads nothing; a reload that sets a floor takes effect
    // at the next tick.
    this.timer = setInterval(() => { if (this.enabled) this.sample(); }, this.o.intervalMs ?? GUARD_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.stopping?.cancelKill();
  }

  /**
   * The latest sample, for accounting's samples: the guard's own when it is
   * on, else (or when it is older than two ticks) one taken now.
   */
  lastSample(): HostMemorySample {
    const tick = this.o.intervalMs ?? GUARD_INTERVAL_MS;
    if (this.latest && Date.now() - this.latest.at <= 2 * tick) return this.latest;
    return this.sample();
  }

  /** One sample, and a stop when the floor has been crossed long enough. Public for tests. */
  sample(): HostMemorySample {
    const meminfo = readOr(this.o.meminfoPath ?? '/proc/meminfo');
    const dir = this.o.pressureDir ?? '/proc/pressure';
    const mem = readOr(path.join(dir, 'memory'));
    const cpu = readOr(path.join(dir, 'cpu'));
    const s: HostMemorySample = {
      at: Date.now(),
      mem_available: meminfo === null ? null : parseMemAvailable(meminfo),
      memory_pressure: mem === null ? null : parsePressure(mem),
      cpu_pressure: cpu === null ? null : parsePressure(cpu),
    };
    this.latest = s;
    const c = this.o.settings();
    if (c.floor > 0 && c.samples > 0) this.check(s, c);
    else this.below = 0;
    return s;
  }

  private check(s: HostMemorySample, c: GuardSettings): void {
    if (s.mem_available === null || s.mem_available >= c.floor) {
      this.below = 0;
      this.toldNothing = false;
      return;
    }
    this.below++;
    if (this.below < c.samples) return;
    const running = this.o.jobs();
    if (this.stopping) {
      if (running.some((j) => j.id === this.stopping!.id)) return;  // still ending
      this.stopping.cancelKill();
      this.stopping = undefined;
      this.below = 0;  // count afresh: the freed memory takes a moment to show
      return;
    }
    const victim = pickVictim(running);
    if (!victim) {
      if (!this.toldNothing) this.log(`MemAvailable ${formatSize(s.mem_available)} below ${formatSize(c.floor)}, but no job uses more memory than it asked for`);
      this.toldNothing = true;
      return;
    }
    const secs = Math.round((this.below * (this.o.intervalMs ?? GUARD_INTERVAL_MS)) / 1000);
    const error = `stopped by the low-memory guard: MemAvailable ${formatSize(s.mem_available)} below ${formatSize(c.floor)} for ${secs} s`;
    if (!this.o.markStopped(victim.job.id, error)) return;
    this.log(`job ${victim.job.id}: ${error} (it used ${formatSize(victim.usage)})`);
    this.signal(victim.job, 'SIGTERM');
    const grace = Math.max(GUARD_MIN_GRACE_SECS, c.killGrace);
    const cancelKill = (this.o.later ?? later)(() => this.signal(victim.job, 'SIGKILL'), grace * 1000);
    this.stopping = { id: victim.job.id, cancelKill };
  }

  /**
   * SIGTERM to each process group led inside the job's cgroup, and to any
   * member whose group is led from outside it (so no outside process is ever
   * signalled through its group); SIGKILL to every member.
   */
  private signal(job: GuardJob, sig: NodeJS.Signals): void {
    const kill = this.o.kill ?? ((pid: number, signal: NodeJS.Signals) => process.kill(pid, signal));
    const members = new Set(job.procs());
    const targets = new Set<number>();
    for (const pid of members) {
      const g = sig === 'SIGKILL' ? undefined : pgrpOf(pid);
      targets.add(g !== undefined && members.has(g) ? -g : pid);
    }
    for (const t of targets) {
      try { kill(t, sig); } catch { /* gone already */ }
    }
  }

  private log(msg: string): void { this.o.log(`low-memory guard: ${msg}`); }
}

/**
 * Bytes a job's cgroup uses now: cgroup v2 `memory.current`, else v1
 * `memory.usage_in_bytes`, in the job's memory directory; undefined when unknown.
 */
export function cgroupMemoryUsage(dir: string | undefined): number | undefined {
  if (!dir) return undefined;
  for (const f of ['memory.current', 'memory.usage_in_bytes']) {
    const v = readOr(path.join(dir, f));
    if (v !== null && /^\d+\s*$/.test(v)) return Number(v);
  }
  return undefined;
}

/** The PIDs in a cgroup directory's `cgroup.procs`, the job's supervisor (xlurm-stepd) left out. */
export function cgroupProcs(dir: string | undefined): number[] {
  if (!dir) return [];
  const text = readOr(path.join(dir, 'cgroup.procs'));
  if (!text) return [];
  return text.split('\n').filter((l) => /^\d+$/.test(l)).map(Number)
    .filter((pid) => readOr(`/proc/${pid}/comm`)?.trim() !== 'xlurm-stepd');
}
