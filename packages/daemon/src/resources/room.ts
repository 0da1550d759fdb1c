/**
 * The host's CPUs and memory as a scheduling pass sees them (docs/behaviour.md
 * §24.2): what `[resources]` lets jobs have, what the running jobs asked
 * for, and MemAvailable read now. Core builds it for each pass that may
 * start a job; the pass itself (scheduler/host-fit.ts) reads no file.
 */
import type { Job } from '@xlurm/protocol';
import type { HostHolder, HostRoom } from '../scheduler/host-fit';
import { readMeminfo, type Meminfo } from './host';
import { defaultResources, type ResourcesSettings } from './settings';

let defaults: ResourcesSettings | undefined;

/** `[resources]` in force: the configured table, else every default (read from the host once). */
export function resourcesOf(cfg: { resources?: ResourcesSettings }): ResourcesSettings {
  return cfg.resources ?? (defaults ??= defaultResources());
}

/**
 * MemAvailable is read (with `meminfo`) only when the pass first considers a
 * job that asks for memory, at most once per pass: reading /proc/meminfo
 * was half of a pass over a queue that asks for none (host-fit.ts).
 */
export function hostRoom(r: ResourcesSettings, running: Iterable<Job>, meminfo: () => Meminfo | null = readMeminfo): HostRoom {
  let usedCpus = 0;
  let usedMem = 0;
  const holders: HostHolder[] = [];
  for (const j of running) {
    const cpus = j.spec.cpus ?? 0;
    const mem = j.spec.mem ?? 0;
    usedCpus += cpus;
    usedMem += mem;
    // A job without requests holds nothing here (docs/behaviour.md §28.6): only its own cgroup bounds it.
    if (cpus > 0 || mem > 0) holders.push({ id: j.id, owner: j.owner.name, cpus, mem });
  }
  const readAvailable = () => meminfo()?.available ?? null;
  return { cpus: r.cpuList.length, usedCpus, memory: r.memory, usedMem, memAvailable: null, readAvailable, minAvailable: r.minAvailable, holders };
}
