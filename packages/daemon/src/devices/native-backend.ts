/**
 * The shared half of every vendor backend that talks to a management library
 * through the native addon (src/addon/device.cc): library lookup (docs/behaviour.md §9.2),
 * bounded discovery, probes off the event loop with a deadline, and the
 * vendor-neutral mapping of probe rows to statuses (docs/behaviour.md §9.4, fail closed).
 * A vendor module only describes itself (see nvidia.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Device, DeviceKind } from '@xlurm/protocol';
import { KIND_LABEL } from '@xlurm/protocol';
import {
  deviceClose, deviceDiscover, deviceOpen, deviceProbe,
  type DeviceHandle, type ProbeRow, type RawDevice,
} from '@xlurm/native';
import { pciNumaNode, sysfsRoot } from '../resources/numa';
import type { Backend, BackendFactory, DeviceReading, ProbeResult } from './backend';
import { busyPids } from './backend';

/** Opening and discovery run once at start-up, synchronously, at most this long each. */
export const DISCOVERY_TIMEOUT_MS = 10_000;
/** A probe (all devices of one library) must answer within this; then its devices are unknown. */
export const PROBE_DEADLINE_MS = 1_500;
/** Shutting a library down at daemon stop. */
export const CLOSE_TIMEOUT_MS = 2_000;

export interface NativeVendor {
  kind: DeviceKind;
  /** The daemon-environment variable that names the library (an absolute path; disables the search). */
  libraryEnv: string;
  /** Tried in order; a bare file name goes through the dynamic loader's search. */
  search: readonly string[];
  /** Raw discovery entry → inventory device (default: id, name, visible = uuid, npu, chip). */
  toDevice?: (raw: RawDevice) => Device;
  /** Probe row → status (default: statusFromRow). */
  status?: (device: Device, row: ProbeRow | undefined) => ProbeResult;
}

/** docs/behaviour.md §9.2: the override (absolute, from the daemon's environment only) or the search list. */
export function libraryPaths(v: Pick<NativeVendor, 'libraryEnv' | 'search'>, env: NodeJS.ProcessEnv): string[] {
  const override = env[v.libraryEnv];
  if (override !== undefined && override !== '') {
    if (!path.isAbsolute(override)) throw new Error(`${v.libraryEnv} must be an absolute path: ${override}`);
    return [override];
  }
  return [...v.search];
}

/** The files mapped into this process (/proc/self/maps), by absolute path; empty where unreadable. */
export function mappedFiles(maps = '/proc/self/maps'): Set<string> {
  const out = new Set<string>();
  let text: string;
  try { text = fs.readFileSync(maps, 'utf8'); } catch { return out; }
  for (const line of text.split('\n')) {
    // address perms offset dev inode path (the path may hold blanks; "(deleted)" marks a replaced file)
    const m = /^\S+\s+\S+\s+\S+\s+\S+\s+\d+\s+(\/.*)$/.exec(line);
    if (m) out.add(m[1]!.replace(/ \(deleted\)$/, ''));
  }
  return out;
}

/**
 * The file the library of `paths` (libraryPaths) was loaded from once deviceOpen succeeded, as
 * the loader mapped it (links resolved); undefined when that cannot be told. An absolute entry
 * counts only when it is what is mapped; a bare file name (the loader's own search) only when
 * exactly one mapped file has that name (or a versioned one: librocm_smi64.so.2).
 */
export function loadedFrom(paths: readonly string[], mapped: ReadonlySet<string> = mappedFiles()): string | undefined {
  for (const p of paths) {
    if (path.isAbsolute(p)) {
      let real: string;
      try { real = fs.realpathSync(p); } catch { continue; }
      if (mapped.has(real)) return real;
    } else {
      const named = [...mapped].filter((f) => { const b = path.basename(f); return b === p || b.startsWith(`${p}.`); });
      if (named.length === 1) return named[0];
    }
  }
  return undefined;
}

/**
 * Fail closed: an error, a changed identity, or an answer without process
 * information is `unknown`; then health; then any compute process → `busy`.
 */
export function statusFromRow(device: Device, row: ProbeRow | undefined): ProbeResult {
  if (!row) return { status: 'unknown', error: 'device missing from the probe answer' };
  if (row.error) return { status: 'unknown', error: row.error };
  if (row.uuid !== null && row.uuid !== device.visible) {
    return { status: 'unknown', error: `device identity changed since discovery: ${device.visible} is now ${row.uuid}` };
  }
  if (row.uuid === null) return { status: 'unknown', error: 'device identity not reported' };
  if (row.health === 'unhealthy') return { status: 'unhealthy' };
  if (row.processes === null) return { status: 'unknown', error: 'compute processes not reported' };
  return row.processes.length > 0 ? { status: 'busy', pids: busyPids(row.processes) } : { status: 'idle' };
}

/**
 * The device groups the library reported at discovery (docs/behaviour.md §21.5):
 * only when every device of the inventory has one; else unknown.
 */
export function groupsOf(raws: readonly RawDevice[], devices: readonly Device[]): number[][] | undefined {
  if (devices.length === 0) return undefined;
  const byGroup = new Map<number, number[]>();
  for (const d of devices) {
    const g = raws.find((r) => r.id === d.id)?.group;
    if (g === undefined) return undefined;
    const ids = byGroup.get(g);
    if (ids) ids.push(d.id); else byGroup.set(g, [d.id]);
  }
  return [...byGroup.keys()].sort((a, b) => a - b).map((g) => byGroup.get(g)!);
}

/**
 * The devices' node files as discovery named them (docs/behaviour.md §24.8). `XLURM_DEV_DIR`
 * from the daemon's own environment (tests: a directory of stand-in nodes) replaces the leading
 * `/dev/` of each; a job's environment never reaches this.
 */
export function nodesOf(raws: readonly RawDevice[], devices: readonly Device[], env: NodeJS.ProcessEnv): Map<number, string[]> {
  const dir = env.XLURM_DEV_DIR;
  const map = (p: string) => (dir && path.isAbsolute(dir) && p.startsWith('/dev/') ? path.join(dir, p.slice(5)) : p);
  const out = new Map<number, string[]>();
  for (const d of devices) {
    const nodes = raws.find((r) => r.id === d.id)?.nodes;
    if (nodes && nodes.length > 0) out.set(d.id, nodes.map(map));
  }
  return out;
}

/**
 * The devices' NUMA nodes from the PCI addresses discovery reported (docs/behaviour.md §24.3),
 * read once from sysfs (XLURM_SYSFS_ROOT from the daemon's own environment replaces /sys);
 * devices whose node is unknown have no entry.
 */
export function numaOf(raws: readonly RawDevice[], devices: readonly Device[], env: NodeJS.ProcessEnv): Map<number, number> {
  const sysfs = sysfsRoot(env);
  const out = new Map<number, number>();
  for (const d of devices) {
    const pci = raws.find((r) => r.id === d.id)?.pci;
    const node = pci ? pciNumaNode(pci, sysfs) : null;
    if (node !== null) out.set(d.id, node);
  }
  return out;
}

function defaultDevice(kind: DeviceKind, raw: RawDevice): Device {
  return { kind, id: raw.id, name: raw.name, visible: raw.uuid, npu: raw.npu, chip: raw.chip };
}

export class NativeBackend implements Backend {
  private closed = false;
  /** Utilisation and memory in use from the latest probe, by device id (samples, docs/behaviour.md §26.2). */
  private readonly latest = new Map<number, DeviceReading>();

  constructor(
    readonly kind: DeviceKind,
    readonly devices: readonly Device[],
    private readonly handle: DeviceHandle,
    private readonly statusOf: (device: Device, row: ProbeRow | undefined) => ProbeResult,
    readonly groups?: readonly (readonly number[])[],
    readonly nodes?: ReadonlyMap<number, readonly string[]>,
    readonly numa?: ReadonlyMap<number, number>,
  ) {}

  async probe(ids: readonly number[]): Promise<Map<number, ProbeResult>> {
    const out = new Map<number, ProbeResult>();
    let rows: ProbeRow[];
    try {
      if (this.closed) throw new Error('library closed');
      rows = await deviceProbe(this.handle, ids, PROBE_DEADLINE_MS);
    } catch (e) {
      for (const id of ids) out.set(id, { status: 'unknown', error: (e as Error).message });
      for (const id of ids) this.latest.delete(id); // a stalled driver's old figures are not current
      return out;
    }
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of ids) {
      const d = this.devices.find((x) => x.id === id);
      out.set(id, d ? this.statusOf(d, byId.get(id)) : { status: 'unknown', error: `device ${id} was not discovered` });
      this.keepReadings(id, byId.get(id));
    }
    return out;
  }

  readings(): ReadonlyMap<number, DeviceReading> { return this.latest; }

  /** Utilisation as a ratio, memory in bytes, where the row reports them. */
  private keepReadings(id: number, row: ProbeRow | undefined): void {
    const r: DeviceReading = {};
    if (typeof row?.utilization === 'number') r.utilization = row.utilization / 100;
    if (typeof row?.memory_used === 'number') r.memoryUsed = row.memory_used;
    if (typeof row?.memory_total === 'number' && typeof row.memory_free === 'number') { r.memoryTotal = row.memory_total; r.memoryFree = row.memory_free; }
    if (r.utilization === undefined && r.memoryUsed === undefined) this.latest.delete(id); else this.latest.set(id, r);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    deviceClose(this.handle, CLOSE_TIMEOUT_MS);
  }
}

/**
 * A BackendFactory for a native vendor: open the library (override or search),
 * discover, leave out (and log) devices that could not be identified.
 * Throws with the reason; discovery() prefixes `<label> discovery: `.
 */
export function nativeBackend(v: NativeVendor): BackendFactory {
  return ({ env, log }) => {
    const paths = libraryPaths(v, env);
    const handle = deviceOpen(v.kind, paths, DISCOVERY_TIMEOUT_MS);
    let raws: RawDevice[];
    try {
      raws = deviceDiscover(handle, DISCOVERY_TIMEOUT_MS);
    } catch (e) {
      try { deviceClose(handle, CLOSE_TIMEOUT_MS); } catch { /* already failing */ }
      throw e;
    }
    const devices: Device[] = [];
    for (const raw of raws) {
      if (raw.error) {
        log(`${KIND_LABEL[v.kind]} discovery: device ${raw.id} left out: ${raw.error}`);
        continue;
      }
      devices.push(v.toDevice ? v.toDevice(raw) : defaultDevice(v.kind, raw));
    }
    return new NativeBackend(v.kind, devices, handle, v.status ?? statusFromRow, groupsOf(raws, devices), nodesOf(raws, devices, env), numaOf(raws, devices, env));
  };
}
