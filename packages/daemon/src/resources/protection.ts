/**
 * Wires device isolation and the low-memory guard (docs/behaviour.md §24.7,
 * §24.8) to the daemon: Core for the transitions and the running jobs, the
 * device layer for the nodes, the cgroup layer (cgroup.ts) for each job's
 * directories. Isolation runs as the cgroup layer's `isolation` hook, after
 * the limits are written and before the payload joins.
 */
import type { Core } from '../core';
import type { DeviceManager } from '../devices/manager';
import type { Cgroups, IsolationHook, JobCgroup } from './cgroup';
import { resourcesOf } from './room';
import { DeviceIsolation, findMounts, type IsolationDirs } from './isolation';
import { LowMemoryGuard, cgroupMemoryUsage, cgroupProcs, type GuardJob, type HostMemorySample } from './guard';

export interface HostProtection {
  isolation: DeviceIsolation;
  guard: LowMemoryGuard;
  /** Logs isolation's off state (main.ts: right after the serving line); a daemon that makes no job cgroups says nothing. */
  announce(): void;
  stop(): void;
}

/** Where isolation writes for a job: v1 `devices` where the job has it, else its cgroup v2 directory. */
export function isolationDirs(cg: JobCgroup): IsolationDirs {
  if (cg.v1.devices) return { v1Devices: cg.v1.devices };
  return cg.unified ? { v2: cg.unified } : {};
}

/** The job's memory directory (the unified one on v2, v1 `memory` elsewhere) and where its processes are listed. */
function guardDirs(cgroups: Cgroups, cg: JobCgroup): { memory?: string; procs?: string } {
  const memory = cgroups.layout.kind === 'v2' ? cg.unified : cg.v1.memory;
  return { memory, procs: cg.unified ?? cg.v1.memory ?? cg.dirs[0] };
}

/**
 * Says that jobs run with visibility variables only, once per change of
 * state: at start-up (with the serving line, so it is not the first line a
 * daemon writes much later, once a job starts) and again as a job starts if
 * a reload or the devices changed it. Where `require_cgroup` fails such
 * starts instead, it says nothing.
 */
export function isolationNotice(isolation: DeviceIsolation, requireCgroup: () => boolean, log: (msg: string) => void): () => void {
  let told = 'on';
  return () => {
    const why = isolation.offReason();
    if (why === null) return;
    if (requireCgroup() && why.startsWith('no devices cgroup controller')) return;
    const state = `off (${why})`;
    if (state === told) return;
    told = state;
    log(`jobs run with visibility variables only: device isolation: ${state}`);
  };
}

/**
 * The cgroup layer's isolation hook. Rules the job's cgroup will not take
 * throw (the layer then fails the start, or runs the job without its cgroup,
 * as the job's limits require). Isolation that is off runs the job with its
 * visibility variables only, except where `require_cgroup` is set and the
 * host cannot carry device rules at all: then the start fails too.
 */
export function isolationHook(isolation: DeviceIsolation, requireCgroup: () => boolean, log: (msg: string) => void,
  notice = isolationNotice(isolation, requireCgroup, log)): IsolationHook {
  return (cg, devs) => {
    if (isolation.apply(isolationDirs(cg), devs) !== 'off') return;
    const why = isolation.offReason() ?? '';
    if (requireCgroup() && why.startsWith('no devices cgroup controller')) throw new Error(why);
    notice();
  };
}

export interface ProtectionOptions {
  /** The cgroup layer; null: this daemon makes no job cgroups (`why` says why). */
  cgroups: Cgroups | null;
  why?: string;
  log: (msg: string) => void;
  /** Test helpers only: another meminfo file and pressure directory. */
  meminfoPath?: string;
  pressureDir?: string;
}

export function startHostProtection(core: Core, devices: DeviceManager, o: ProtectionOptions): HostProtection {
  const cgroups = o.cgroups;
  const isolation = new DeviceIsolation({
    get enabled() { return resourcesOf(core.cfg).deviceIsolation; },
    source: devices,
    noCgroups: () => (cgroups?.available ? null : o.why ?? 'no cgroup hierarchy is mounted on this host'),
    support: findMounts(),
  });
  core.isolation = isolation;
  const requireCgroup = () => resourcesOf(core.cfg).requireCgroup;
  const notice = isolationNotice(isolation, requireCgroup, o.log);
  if (cgroups) cgroups.isolation = isolationHook(isolation, requireCgroup, o.log, notice);
  // Only where jobs get cgroups (the hook runs): elsewhere isolation was never said to be off in the log.
  const announce = () => { if (cgroups?.available) notice(); };
  const guard = new LowMemoryGuard({
    settings: () => {
      const r = resourcesOf(core.cfg);
      return { floor: r.lowMemoryFloor, samples: r.lowMemorySamples, killGrace: core.cfg.killGrace };
    },
    jobs: () => core.activeJobs().filter((j) => j.state === 'RUNNING').map((j): GuardJob => {
      const cg = cgroups?.get(j.id);
      const dirs = cg && cgroups ? guardDirs(cgroups, cg) : {};
      return { id: j.id, mem: j.spec.mem ?? 0, usage: () => cgroupMemoryUsage(dirs.memory), procs: () => cgroupProcs(dirs.procs) };
    }),
    markStopped: (id, error) => core.stopForLowMemory(id, error),
    log: o.log,
    ...(o.meminfoPath ? { meminfoPath: o.meminfoPath } : {}),
    ...(o.pressureDir ? { pressureDir: o.pressureDir } : {}),
  });
  guard.start();
  current = guard;
  return { isolation, guard, announce, stop: () => { guard.stop(); if (current === guard) current = undefined; } };
}

let current: LowMemoryGuard | undefined;

/**
 * The host's latest memory sample (MemAvailable, memory and CPU pressure;
 * docs/behaviour.md §24.7), for accounting's samples; null when no daemon
 * guard runs in this process.
 */
export function hostMemorySample(): HostMemorySample | null { return current?.lastSample() ?? null; }
