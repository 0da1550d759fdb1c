/**
 * A cgroup per job (docs/behaviour.md §24.3–§24.6): made and configured by
 * the daemon before the supervisor starts, joined by the payload's own child
 * before it execs (the supervisor's spec lists each hierarchy's directory,
 * see native/src/stepd/spec.c), emptied by the supervisor when the job ends
 * (cgroup.kill where the unified hierarchy has it, else SIGKILL to every
 * listed process until none is left), measured (peak memory, CPU time, OOM
 * kills) and removed by the daemon after the job is reaped.
 *
 * Layers, by what the host mounts (layout.ts):
 *   v2      one directory in the unified hierarchy: cpu.max, cpuset.cpus,
 *           memory.max, memory.high, memory.swap.max, memory.oom.group, pids.max
 *   v1      one directory per controller: cpu (CFS quota), cpuset, memory
 *           (limit_in_bytes, memsw.limit_in_bytes), pids, devices
 *   hybrid  the v1 controllers for the limits, plus the unified directory
 *           for membership, cgroup.kill, CPU time and pressure
 *
 * Device isolation (docs/behaviour.md §24.8) is applied through the
 * `isolation` hook, given the job's cgroup (with its v1 `devices` directory
 * or its unified one) and its devices, after the limits are written and
 * before anything joins. A hook that throws fails the job's start only when
 * the job must be enforced (see `create`); otherwise it is logged.
 *
 * Every file operation is synchronous: a job's cgroup is a dozen small
 * writes (well under a millisecond; measured in bench/measures/cgroup.js).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Device } from '@xlurm/protocol';
import { formatSize } from '@xlurm/protocol';
import { formatCpuList, parseCpuList } from './host';
import type { CgroupBases, CgroupLayout, V1Controller } from './layout';
import { SafeDir } from '../safe-fs';

/** What a job's cgroup enforces. */
export interface CgroupLimits {
  /** CPUs (the CFS quota); 0: none. */
  cpus: number;
  /** The CPUs it is pinned to; null: not pinned. */
  cpuset: readonly number[] | null;
  /** Bytes; 0: no limit. */
  mem: number;
  memoryHighRatio: number;
  swap: boolean;
  /** 0: not set. */
  pidsMax: number;
}

/**
 * What a cgroup is for: the job itself (`job-<id>`), or its `--notify` command (`notify-<id>`,
 * docs/behaviour.md §28.5), which runs after the job under the same limits but no devices.
 */
export type CgroupRole = 'job' | 'notify';

/** A job's cgroup: the directory per hierarchy the payload joins, and where it is killed. */
export interface JobCgroup {
  id: number;
  role: CgroupRole;
  /** The unified hierarchy's directory, if any. */
  unified?: string;
  /** Each v1 controller's directory the job has (a shared mount appears under each of its controllers). */
  v1: Partial<Record<V1Controller, string>>;
  /** Every distinct directory, in the order the payload joins them. */
  dirs: string[];
  /** `<unified dir>/cgroup.kill` where the kernel has it; else null (the supervisor kills each listed process). */
  killFile: string | null;
  /** The memory limit it was given (for the OOM message); 0: none. */
  mem: number;
  /** The CPUs it is pinned to; empty: not pinned. */
  cpus: number[];
}

/** What a job's cgroup measured, read before it is removed. */
export interface CgroupUsage {
  /** Bytes; null when the kernel does not keep a peak. */
  peakMemory: number | null;
  cpuSeconds: number | null;
  /** The kernel killed a process of it for exceeding its memory. */
  oomKilled: boolean;
}

/** The reason a job's limits cannot be enforced: its start fails with `cannot enforce the job's limits: <message>`. */
export class EnforceError extends Error { override name = 'EnforceError'; }

export type IsolationHook = (cg: JobCgroup, devices: readonly Device[]) => void;

export interface CgroupOptions {
  layout: CgroupLayout;
  bases: CgroupBases;
  log?: (msg: string) => void;
  /** Tests on a fake tree: make the files the kernel would make in a new directory. */
  onMkdir?: (dir: string) => void;
}

const CPU_PERIOD_US = 100000;

/** Controllers a job's v2 cgroup needs enabled in each ancestor's subtree_control. */
const V2_CONTROLLERS = ['cpu', 'cpuset', 'memory', 'pids'];

const errText = (e: unknown) => {
  const err = e as NodeJS.ErrnoException;
  return err.code ? `${err.code}${err.path ? ` (${err.path})` : ''}` : err.message;
};

export class Cgroups {
  readonly layout: CgroupLayout;
  private readonly bases: CgroupBases;
  private readonly log: (msg: string) => void;
  private readonly onMkdir: ((dir: string) => void) | undefined;
  /** Ancestors already set up in this daemon's life. */
  private readonly ready = new Set<string>();
  /** The cgroup of each job (and notification) that has one (made here, or found after a restart), by its name. */
  private readonly jobs = new Map<string, JobCgroup>();
  /** Removals that found processes still exiting (names): retried on a timer. */
  private readonly lingering = new Set<string>();
  /** The memory limit last written to the daemon's subtree (limitTotal), per directory. */
  private readonly totals = new Map<string, number>();
  private lingerTimer: NodeJS.Timeout | undefined;
  isolation: IsolationHook | undefined;

  constructor(o: CgroupOptions) {
    this.layout = o.layout;
    this.bases = o.bases;
    this.log = o.log ?? (() => undefined);
    this.onMkdir = o.onMkdir;
  }

  /** Can this host give jobs cgroups at all? */
  get available(): boolean { return this.layout.kind !== 'none'; }

  /** The directory per hierarchy a job's cgroup has (whether or not it exists). */
  private dirsOf(name: string): { unified?: string; v1: Partial<Record<V1Controller, string>> } {
    const v1: Partial<Record<V1Controller, string>> = {};
    for (const [c, b] of Object.entries(this.bases.v1) as Array<[V1Controller, string]>) v1[c] = path.join(b, name);
    return this.bases.unified ? { unified: path.join(this.bases.unified, name), v1 } : { v1 };
  }

  /** The cgroup of a job (or of its notification) this daemon knows (made, or adopted). */
  get(id: number, role: CgroupRole = 'job'): JobCgroup | undefined { return this.jobs.get(cgroupName(id, role)); }

  /** CPUs pinned by the jobs that have cgroups. */
  takenCpus(): Set<number> {
    const s = new Set<number>();
    for (const cg of this.jobs.values()) for (const c of cg.cpus) s.add(c);
    return s;
  }

  /**
   * Make and configure job `id`'s cgroup. Throws EnforceError when it
   * cannot; the caller decides whether that fails the job (it must when the
   * job asked for CPUs or memory, or `require_cgroup` is set). Anything made
   * before the failure is removed again.
   */
  create(id: number, limits: CgroupLimits, devices: readonly Device[] = [], role: CgroupRole = 'job'): JobCgroup {
    if (!this.available) throw new EnforceError('no cgroup hierarchy is mounted on this host');
    const name = cgroupName(id, role);
    const want = this.dirsOf(name);
    const v2 = this.layout.kind === 'v2';
    const cg: JobCgroup = { id, role, v1: {}, dirs: [], killFile: null, mem: limits.mem, cpus: limits.cpuset ? [...limits.cpuset] : [] };
    const made: string[] = [];
    const mk = (dir: string) => {
      if (cg.dirs.includes(dir)) return;
      try { fs.mkdirSync(dir); } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new EnforceError(`cannot create cgroup ${dir}: ${errText(e)}`);
      }
      made.push(dir);
      cg.dirs.push(dir);
      this.onMkdir?.(dir);
    };
    try {
      if (want.unified) {
        this.prepareAncestors(this.bases.unified!, v2 ? 'v2' : 'unified');
        mk(want.unified);
        cg.unified = want.unified;
        const kill = path.join(want.unified, 'cgroup.kill');
        if (fs.existsSync(kill)) cg.killFile = kill;
        if (v2) this.configureV2(want.unified, limits);
      }
      if (!v2) this.configureV1(want.v1, limits, cg, mk);
      if (this.isolation) {
        try { this.isolation(cg, devices); } catch (e) { throw new EnforceError(`cannot isolate the job's devices: ${(e as Error).message}`); }
      }
    } catch (e) {
      for (const d of made.reverse()) { try { removeTree(d); } catch { /* left for the sweep */ } }
      throw e instanceof EnforceError ? e : new EnforceError((e as Error).message);
    }
    this.jobs.set(name, cg);
    return cg;
  }

  /**
   * The daemon's subtree (the parent of every job's cgroup) limited to `bytes`, so that jobs
   * without `--mem`, each bounded only by `[resources] memory` (docs/behaviour.md §28.6), cannot
   * take the host together either. Written when it changes (a reload); 0: not limited.
   */
  limitTotal(bytes: number): void {
    if (!this.available) return;
    const v2 = this.layout.kind === 'v2';
    const at: Array<[string, string[]]> = [];
    if (v2 && this.bases.unified) at.push([this.bases.unified, ['memory.max']]);
    if (!v2 && this.bases.v1.memory) at.push([this.bases.v1.memory, ['memory.limit_in_bytes']]);
    for (const [base, files] of at) {
      if (this.totals.get(base) === bytes) continue;
      this.prepareAncestors(base, v2 ? 'v2' : 'memory');
      const value = bytes > 0 ? String(bytes) : v2 ? 'max' : '-1';
      for (const f of files) this.put(base, f, value);
      this.totals.set(base, bytes);
    }
  }

  /** Writes a control file; `what` words the failure. */
  private put(dir: string, file: string, value: string): void {
    try { fs.writeFileSync(path.join(dir, file), value); } catch (e) {
      throw new EnforceError(`cannot set ${file} to ${value} in ${dir}: ${errText(e)}`);
    }
  }

  /** Writes a control file the kernel may not have (swap accounting off, an older kernel): absent is fine. */
  private putOptional(dir: string, file: string, value: string): boolean {
    const p = path.join(dir, file);
    if (!fs.existsSync(p)) return false;
    this.put(dir, file, value);
    return true;
  }

  private configureV2(dir: string, l: CgroupLimits): void {
    if (l.cpus > 0) this.put(dir, 'cpu.max', `${l.cpus * CPU_PERIOD_US} ${CPU_PERIOD_US}`);
    if (l.cpuset && l.cpuset.length) this.put(dir, 'cpuset.cpus', formatCpuList(l.cpuset));
    if (l.mem > 0) {
      this.put(dir, 'memory.max', String(l.mem));
      this.put(dir, 'memory.high', String(Math.floor(l.mem * l.memoryHighRatio)));
      if (!l.swap) this.putOptional(dir, 'memory.swap.max', '0');
    }
    // One OOM kill takes the whole job: a half-killed job would only limp on.
    this.putOptional(dir, 'memory.oom.group', '1');
    if (l.pidsMax > 0) this.put(dir, 'pids.max', String(l.pidsMax));
  }

  private configureV1(want: Partial<Record<V1Controller, string>>, l: CgroupLimits, cg: JobCgroup, mk: (dir: string) => void): void {
    const use = (c: V1Controller): string | undefined => {
      const dir = want[c];
      if (!dir) return undefined;
      this.prepareAncestors(this.bases.v1[c]!, c);
      mk(dir);
      cg.v1[c] = dir;
      return dir;
    };
    // Memory always (the peak and OOM kills are measured there), CPU time
    // from cpuacct where there is no unified hierarchy to read it from.
    const mem = use('memory');
    if (!mem && l.mem > 0) throw new EnforceError('the memory controller is not mounted');
    if (mem && l.mem > 0) {
      this.put(mem, 'memory.limit_in_bytes', String(l.mem));
      // The soft limit is v1's nearest to memory.high: reclaimed first under pressure.
      this.putOptional(mem, 'memory.soft_limit_in_bytes', String(Math.floor(l.mem * l.memoryHighRatio)));
      if (!l.swap) this.putOptional(mem, 'memory.memsw.limit_in_bytes', String(l.mem));
    }
    if (!this.layout.unified) use('cpuacct');
    if (l.cpus > 0) {
      const cpu = use('cpu');
      if (!cpu) throw new EnforceError('the cpu controller is not mounted');
      this.put(cpu, 'cpu.cfs_period_us', String(CPU_PERIOD_US));
      this.put(cpu, 'cpu.cfs_quota_us', String(l.cpus * CPU_PERIOD_US));
    }
    if (l.cpuset && l.cpuset.length) {
      const cs = use('cpuset');
      if (!cs) throw new EnforceError('the cpuset controller is not mounted');
      this.put(cs, 'cpuset.cpus', formatCpuList(l.cpuset));
      this.put(cs, 'cpuset.mems', this.readParent(cs, 'cpuset.mems'));
    }
    if (l.pidsMax > 0) {
      const p = use('pids');
      if (!p) throw new EnforceError('the pids controller is not mounted');
      this.put(p, 'pids.max', String(l.pidsMax));
    }
    // Even a CPU-only job is denied the accelerators' nodes (docs/behaviour.md §24.8).
    if (this.isolation) use('devices');
  }

  private readParent(dir: string, file: string): string {
    try { return fs.readFileSync(path.join(path.dirname(dir), file), 'latin1').trim(); } catch (e) {
      throw new EnforceError(`cannot read ${file} of ${path.dirname(dir)}: ${errText(e)}`);
    }
  }

  /**
   * The daemon's subtree in one hierarchy, made once: on v2 the controllers
   * enabled in every ancestor's cgroup.subtree_control (under systemd the
   * daemon first moves itself out of its unit's cgroup into `daemon/`, as
   * the no-internal-process rule asks); on v1 cpuset, each new level gets
   * its parent's CPUs and memory nodes (a cpuset without them takes no process).
   */
  private prepareAncestors(base: string, kind: 'v2' | 'unified' | V1Controller): void {
    if (this.ready.has(base)) return;
    const delegated = kind === 'v2' ? this.bases.delegated : undefined;
    const top = delegated ?? (kind === 'v2' || kind === 'unified' ? this.layout.unified : this.layout.v1[kind as V1Controller]);
    if (delegated) this.leaveDelegatedRoot(delegated);
    // The chain from the mount (or the delegated cgroup) down to base.
    const chain: string[] = [];
    for (let d = base; top && d.startsWith(top) && d !== top; d = path.dirname(d)) chain.unshift(d);
    if (!top || !base.startsWith(top)) chain.splice(0, chain.length, ...ancestorsOf(base));
    let parent = top ?? path.dirname(chain[0] ?? base);
    for (const dir of chain) {
      if (kind === 'v2') this.enableControllers(parent);
      let fresh = false;
      try { fs.mkdirSync(dir); fresh = true; } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new EnforceError(`cannot create cgroup ${dir}: ${errText(e)}`);
      }
      if (fresh) this.onMkdir?.(dir);
      if (kind === 'cpuset') {
        for (const f of ['cpuset.cpus', 'cpuset.mems']) {
          let cur = '';
          try { cur = fs.readFileSync(path.join(dir, f), 'latin1').trim(); } catch { /* set below */ }
          if (cur === '') this.put(dir, f, this.readParent(dir, f));
        }
      }
      parent = dir;
    }
    if (kind === 'v2') this.enableControllers(base);
    this.ready.add(base);
  }

  /** `+cpu +cpuset +memory +pids` (those the parent offers) in dir's cgroup.subtree_control. */
  private enableControllers(dir: string): void {
    let offered: string[] = V2_CONTROLLERS;
    try { offered = fs.readFileSync(path.join(dir, 'cgroup.controllers'), 'latin1').trim().split(/\s+/); } catch { /* try them all */ }
    let on: string[] = [];
    try { on = fs.readFileSync(path.join(dir, 'cgroup.subtree_control'), 'latin1').trim().split(/\s+/); } catch { /* none yet */ }
    const add = V2_CONTROLLERS.filter((c) => offered.includes(c) && !on.includes(c));
    if (add.length) this.put(dir, 'cgroup.subtree_control', add.map((c) => `+${c}`).join(' '));
  }

  /** Under systemd: move this daemon (and so its later children) from its unit's cgroup into `daemon/`, once. */
  private leaveDelegatedRoot(unit: string): void {
    const own = path.join(unit, 'daemon');
    if (this.ready.has(own)) return;
    try { fs.mkdirSync(own); } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new EnforceError(`cannot create cgroup ${own}: ${errText(e)}`);
    }
    let procs: string[] = [];
    try { procs = fs.readFileSync(path.join(unit, 'cgroup.procs'), 'latin1').split('\n').filter(Boolean); } catch { /* none */ }
    for (const pid of procs) { try { fs.writeFileSync(path.join(own, 'cgroup.procs'), pid); } catch { /* exited */ } }
    this.ready.add(own);
  }

  /**
   * After a daemon restart: the cgroups of jobs still running, found by
   * their names; their CPUs stay taken and they are measured and removed
   * when the job ends, as if this daemon had made them.
   */
  adopt(ids: readonly number[], role: CgroupRole = 'job'): void {
    for (const id of ids) {
      const name = cgroupName(id, role);
      if (this.jobs.has(name)) continue;
      const want = this.dirsOf(name);
      const cg: JobCgroup = { id, role, v1: {}, dirs: [], killFile: null, mem: 0, cpus: [] };
      if (want.unified && fs.existsSync(want.unified)) {
        cg.unified = want.unified;
        cg.dirs.push(want.unified);
        if (fs.existsSync(path.join(want.unified, 'cgroup.kill'))) cg.killFile = path.join(want.unified, 'cgroup.kill');
      }
      for (const [c, dir] of Object.entries(want.v1) as Array<[V1Controller, string]>) {
        if (!fs.existsSync(dir)) continue;
        cg.v1[c] = dir;
        if (!cg.dirs.includes(dir)) cg.dirs.push(dir);
      }
      if (cg.dirs.length === 0) continue;
      const cpusetDir = this.layout.kind === 'v2' ? cg.unified : cg.v1.cpuset;
      if (cpusetDir) cg.cpus = parseCpuList(readText(path.join(cpusetDir, 'cpuset.cpus')) ?? '') ?? [];
      const memDir = this.layout.kind === 'v2' ? cg.unified : cg.v1.memory;
      const max = memDir ? readText(path.join(memDir, this.layout.kind === 'v2' ? 'memory.max' : 'memory.limit_in_bytes')) : null;
      if (max && /^\d+$/.test(max) && Number(max) < 2 ** 62) cg.mem = Number(max);
      this.jobs.set(name, cg);
    }
  }

  /** What the job's cgroup measured (before `remove`); null when it has none. */
  usage(id: number): CgroupUsage | null {
    const cg = this.get(id);
    if (!cg) return null;
    const v2 = this.layout.kind === 'v2';
    let peakMemory: number | null = null;
    let oomKilled = false;
    const memDir = v2 ? cg.unified : cg.v1.memory;
    if (memDir) {
      peakMemory = readNumber(path.join(memDir, v2 ? 'memory.peak' : 'memory.max_usage_in_bytes'));
      const events = readText(path.join(memDir, v2 ? 'memory.events' : 'memory.oom_control'));
      const kills = events ? /^oom_kill (\d+)$/m.exec(events) : null;
      oomKilled = kills !== null && Number(kills[1]) > 0;
    }
    let cpuSeconds: number | null = null;
    if (cg.unified) {
      const stat = readText(path.join(cg.unified, 'cpu.stat'));
      const m = stat ? /^usage_usec (\d+)$/m.exec(stat) : null;
      if (m) cpuSeconds = Number(m[1]) / 1e6;
    }
    if (cpuSeconds === null && cg.v1.cpuacct) {
      const ns = readNumber(path.join(cg.v1.cpuacct, 'cpuacct.usage'));
      if (ns !== null) cpuSeconds = ns / 1e9;
    }
    if (cpuSeconds !== null) cpuSeconds = Math.round(cpuSeconds * 1000) / 1000;
    return { peakMemory, cpuSeconds, oomKilled };
  }

  /**
   * Kill whatever is left in the job's cgroup (the supervisor has normally
   * emptied it already) and remove it. Directories whose last processes are
   * still exiting are removed on a short timer.
   */
  remove(id: number, role: CgroupRole = 'job'): void {
    const name = cgroupName(id, role);
    const cg = this.jobs.get(name);
    if (!cg) return;
    this.killAll(cg);
    if (this.rmdirs(cg)) this.jobs.delete(name);
    else this.linger(name);
  }

  /** Every process of the job's cgroup gets SIGKILL (cgroup.kill, or each listed pid). */
  killAll(cg: JobCgroup): void {
    if (cg.killFile) { try { fs.writeFileSync(cg.killFile, '1'); return; } catch { /* fall back to the lists */ } }
    for (const dir of cg.dirs) {
      for (const pid of readPids(dir)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    }
  }

  /** Is any process left in the job's cgroup? */
  populated(id: number, role: CgroupRole = 'job'): boolean {
    const cg = this.get(id, role);
    return !!cg && cg.dirs.some((d) => readPids(d).length > 0);
  }

  private rmdirs(cg: JobCgroup): boolean {
    let ok = true;
    for (const dir of [...cg.dirs].reverse()) {
      try { removeTree(dir); cg.dirs = cg.dirs.filter((d) => d !== dir); } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') { cg.dirs = cg.dirs.filter((d) => d !== dir); continue; }
        ok = false;
      }
    }
    return ok;
  }

  private linger(name: string): void {
    this.lingering.add(name);
    if (this.lingerTimer) return;
    let tries = 0;
    this.lingerTimer = setInterval(() => {
      tries++;
      for (const j of [...this.lingering]) {
        const cg = this.jobs.get(j);
        if (!cg) { this.lingering.delete(j); continue; }
        this.killAll(cg);
        if (this.rmdirs(cg)) { this.jobs.delete(j); this.lingering.delete(j); } else if (tries % 100 === 0) {
          this.log(`${cg.role === 'job' ? 'job' : 'notification of job'} ${cg.id}: cannot remove its cgroup yet (processes still exiting); will retry`);
        }
      }
      if (!this.lingering.size && this.lingerTimer) { clearInterval(this.lingerTimer); this.lingerTimer = undefined; }
    }, 50);
    this.lingerTimer.unref();
  }

  /**
   * At start-up: remove the cgroups of jobs that are not running (left by a
   * daemon that stopped before it could), killing what is still in them.
   */
  sweep(running: ReadonlySet<number>): void {
    const bases = [this.bases.unified, ...Object.values(this.bases.v1)].filter((b): b is string => !!b);
    const stale = { job: new Set<number>(), notify: new Set<number>() };
    for (const b of bases) {
      let names: string[] = [];
      try { names = fs.readdirSync(b); } catch { continue; }
      for (const n of names) {
        const m = /^(job|notify)-(\d+)$/.exec(n);
        if (m && !(m[1] === 'job' && running.has(Number(m[2])))) stale[m[1] as CgroupRole].add(Number(m[2]));
      }
    }
    for (const role of ['job', 'notify'] as const) {
      if (!stale[role].size) continue;
      this.adopt([...stale[role]], role);
      for (const id of stale[role]) this.remove(id, role);
    }
  }

  /** At shutdown: the daemon's own subtree goes if no job is left in it. */
  close(): void {
    if (this.lingerTimer) clearInterval(this.lingerTimer);
    if (this.jobs.size) return;
    for (const b of [this.bases.unified, ...Object.values(this.bases.v1)]) {
      if (b) { try { fs.rmdirSync(b); } catch { /* in use, or shared */ } }
    }
  }
}

/** The cgroup's directory name: `job-<id>`, `notify-<id>`. */
export function cgroupName(id: number, role: CgroupRole = 'job'): string { return `${role}-${id}`; }

/** `out of memory: the job exceeded its memory limit of 16G (peak 16.0G)` (docs/behaviour.md §24.5). */
export function oomError(limit: number, peak: number | null): string {
  return `out of memory: the job exceeded its memory limit of ${formatSize(limit)} (peak ${formatSize(peak ?? limit, true)})`;
}

function readText(file: string): string | null {
  try { return fs.readFileSync(file, 'latin1'); } catch { return null; }
}

function readNumber(file: string): number | null {
  const t = readText(file)?.trim();
  return t && /^\d+$/.test(t) ? Number(t) : null;
}

function readPids(dir: string): number[] {
  const t = readText(path.join(dir, 'cgroup.procs'));
  return t ? t.split('\n').filter((l) => /^\d+$/.test(l)).map(Number).filter((p) => p > 1) : [];
}

function ancestorsOf(dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; d !== path.dirname(d); d = path.dirname(d)) out.unshift(d);
  return out.slice(-2);
}

/**
 * rmdir a cgroup (and any child cgroups a job made in it, deepest first), through the one
 * descriptor-based module (safe-fs.ts, docs/behaviour.md §28.1): it descends by descriptor,
 * never follows a link and never leaves the cgroup file system. On cgroupfs a directory holding
 * only control files is removed by rmdir; on a fake tree (tests) the regular files go too.
 * A cgroup already gone is nothing to do.
 */
function removeTree(dir: string): void {
  let parent: SafeDir;
  try { parent = SafeDir.open(path.dirname(dir)); } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  try { parent.removeTree(path.basename(dir)); } finally { parent.close(); }
}

/**
 * Pick `n` CPUs from `allowed` (ascending): distinct from those taken where the counts allow,
 * else the least-shared; among either, those `near` the job's devices first (their NUMA node's,
 * docs/behaviour.md §24.3). Distinct CPUs come before near ones: `near` only orders, it never
 * makes a pick fail or share a CPU that a free one could replace.
 */
export function pickCpus(n: number, allowed: readonly number[], taken: ReadonlySet<number>, near: ReadonlySet<number> = new Set()): number[] {
  if (n <= 0) return [];
  const nearFirst = (l: number[]) => [...l.filter((c) => near.has(c)), ...l.filter((c) => !near.has(c))];
  const free = nearFirst(allowed.filter((c) => !taken.has(c)));
  const shared = nearFirst(allowed.filter((c) => taken.has(c)));
  return [...free, ...shared].slice(0, Math.min(n, allowed.length)).sort((a, b) => a - b);
}
