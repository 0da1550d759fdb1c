/**
 * `[resources]` (docs/behaviour.md §24): the host CPUs and memory jobs may
 * be given, the floor MemAvailable must keep, the defaults of jobs that ask
 * for nothing, and how strictly cgroups are required. Checked against the
 * host when the file is read (start and reload).
 */
import { formatSize, sizeBytes } from '@xlurm/protocol';
import { formatCpuList, onlineCpus, parseCpuList, readMeminfo } from './host';

export interface ResourcesSettings {
  /** The CPUs jobs may be pinned to, ascending (`cpus`; "all": every online CPU). */
  cpuList: number[];
  /** As the file writes it ("all" unless set). */
  cpusText: string;
  /** Bytes jobs may be given in all (`memory`; default MemTotal - reserve_memory). */
  memory: number;
  /** The file's `memory` text, when set. */
  memoryText?: string;
  reserveMemory: number;
  minAvailable: number;
  memoryHighRatio: number;
  swap: boolean;
  defaultCpus: number;
  defaultMemory: number;
  requireCgroup: boolean;
  deviceIsolation: boolean;
  /** The low-memory guard (docs/behaviour.md §24.7); 0: off. */
  lowMemoryFloor: number;
  lowMemorySamples: number;
  /** pids.max of each job's cgroup (docs/behaviour.md §28.6); 0: unlimited. */
  pidsMax: number;
  /** The host's MemTotal when the settings were read: `--mem M` with M + min_available above it can never start (§28.6). */
  memTotal: number;
  /** A fresh tmpfs /tmp and /dev/shm per job (docs/behaviour.md §28.12). */
  privateTmp: boolean;
  /** The size of each of them, in bytes. */
  privateTmpSize: number;
}

/** The file's table as parsed (the schema has checked types and the size texts). */
export interface ResourcesTable {
  cpus?: string; memory?: Size; reserve_memory?: Size; min_available?: Size; memory_high_ratio?: number;
  swap?: boolean; default_cpus?: number; default_memory?: Size; require_cgroup?: boolean; device_isolation?: boolean;
  low_memory_floor?: Size; low_memory_samples?: number; pids_max?: number; private_tmp?: boolean; private_tmp_size?: Size;
}

const G = 1024 ** 3;

/** A job's processes (and threads) at most, unless `pids_max` says otherwise: a fork bomb stops in its own cgroup. */
export const DEFAULT_PIDS_MAX = 4096;
/**
 * `private_tmp_size`: room for a build's or a library's scratch files; tmpfs pages are charged
 * to the job's memory cgroup as they are written, so it is a bound, not a reservation.
 */
export const DEFAULT_PRIVATE_TMP_SIZE = 4 * G;

/** A size as the file writes it: text (docs/behaviour.md §20.1), or a bare integer of MiB. */
type Size = string | number;
const bytesOf = (v: Size): number => (typeof v === 'number' ? v * 1024 * 1024 : sizeBytes(v)!);

/** What the settings are checked against; read from the host unless given (tests). */
export interface HostFacts {
  cpus: readonly number[];
  memTotal: number;
  /** false: a daemon (or `config check`) not running as root, which cannot mount a job's private /tmp; absent: not checked. */
  root?: boolean;
}

export function hostFacts(): HostFacts {
  const m = readMeminfo();
  return { cpus: onlineCpus(), memTotal: m ? m.total : 0, root: process.geteuid?.() === 0 };
}

/** The settings from `[resources]`, or the first problem (dotted key and message). */
export function resourcesSettings(t: ResourcesTable | undefined, host: HostFacts = hostFacts()): ResourcesSettings | { key: string; problem: string } {
  const tb = t ?? {};
  const size = (v: Size | undefined, d: number) => (v === undefined ? d : bytesOf(v));
  let cpuList = [...host.cpus];
  let cpusText = 'all';
  if (tb.cpus !== undefined && tb.cpus !== 'all') {
    const l = parseCpuList(tb.cpus);
    if (!l || l.length === 0) return { key: 'resources.cpus', problem: `invalid CPU list '${tb.cpus}': use "all" or a list such as "2-63" or "0-3,8-11"` };
    const online = new Set(host.cpus);
    const missing = l.filter((c) => !online.has(c));
    if (missing.length) return { key: 'resources.cpus', problem: `CPU ${formatCpuList(missing)} not online on this host (online: ${formatCpuList(host.cpus)})` };
    cpuList = l;
    cpusText = tb.cpus;
  }
  const reserveMemory = size(tb.reserve_memory, 4 * G);
  const s: ResourcesSettings = {
    cpuList, cpusText,
    memory: tb.memory !== undefined ? bytesOf(tb.memory) : Math.max(0, host.memTotal - reserveMemory),
    reserveMemory,
    minAvailable: size(tb.min_available, 8 * G),
    memoryHighRatio: tb.memory_high_ratio ?? 0.85,
    swap: tb.swap ?? false,
    defaultCpus: tb.default_cpus ?? 0,
    defaultMemory: size(tb.default_memory, 0),
    requireCgroup: tb.require_cgroup ?? false,
    deviceIsolation: tb.device_isolation ?? true,
    lowMemoryFloor: size(tb.low_memory_floor, 4 * G),
    lowMemorySamples: tb.low_memory_samples ?? 3,
    pidsMax: tb.pids_max ?? DEFAULT_PIDS_MAX,
    memTotal: host.memTotal,
    privateTmp: tb.private_tmp ?? false,
    privateTmpSize: size(tb.private_tmp_size, DEFAULT_PRIVATE_TMP_SIZE),
  };
  if (tb.memory !== undefined) s.memoryText = String(tb.memory);
  if (s.defaultCpus > s.cpuList.length) {
    return { key: 'resources.default_cpus', problem: `${s.defaultCpus} CPUs, but the host gives jobs at most ${s.cpuList.length}` };
  }
  if (s.privateTmp && host.root === false) {
    return { key: 'resources.private_tmp', problem: "needs a daemon running as root (a job's private /tmp is a mount namespace of its own)" };
  }
  if (s.privateTmp && s.privateTmpSize === 0) {
    return { key: 'resources.private_tmp_size', problem: 'must be more than 0 while private_tmp is on' };
  }
  if (s.defaultMemory > s.memory) {
    return { key: 'resources.default_memory', problem: `${formatSize(s.defaultMemory)}, but the host gives jobs at most ${formatSize(s.memory)}` };
  }
  return s;
}

/** Every default, for a daemon (or a test) without `[resources]`. */
export function defaultResources(host: HostFacts = hostFacts()): ResourcesSettings {
  return resourcesSettings(undefined, host) as ResourcesSettings;
}

/** The dotted keys whose value differs (for a reload's list of changes). */
export function changedResourcesKeys(a: ResourcesSettings | undefined, b: ResourcesSettings | undefined): string[] {
  if (!a || !b) return a === b ? [] : ['resources'];
  const out: string[] = [];
  const cmp: Array<[string, unknown, unknown]> = [
    ['cpus', a.cpusText, b.cpusText], ['memory', a.memory, b.memory], ['reserve_memory', a.reserveMemory, b.reserveMemory],
    ['min_available', a.minAvailable, b.minAvailable], ['memory_high_ratio', a.memoryHighRatio, b.memoryHighRatio],
    ['swap', a.swap, b.swap], ['default_cpus', a.defaultCpus, b.defaultCpus], ['default_memory', a.defaultMemory, b.defaultMemory],
    ['require_cgroup', a.requireCgroup, b.requireCgroup], ['device_isolation', a.deviceIsolation, b.deviceIsolation],
    ['low_memory_floor', a.lowMemoryFloor, b.lowMemoryFloor], ['low_memory_samples', a.lowMemorySamples, b.lowMemorySamples],
    ['pids_max', a.pidsMax, b.pidsMax], ['private_tmp', a.privateTmp, b.privateTmp], ['private_tmp_size', a.privateTmpSize, b.privateTmpSize],
  ];
  for (const [k, x, y] of cmp) if (x !== y) out.push(`resources.${k}`);
  return out;
}
