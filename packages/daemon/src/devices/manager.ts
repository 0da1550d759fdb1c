/**
 * Device state: inventory, latest probe results, administrator exclusions and
 * allocations. Fail closed: only a device whose latest probe said `idle`, that
 * is not excluded and not held by a running job, is free.
 */
import type { Device, DeviceKind, DeviceView } from '@xlurm/protocol';
import { KIND_LABEL } from '@xlurm/protocol';
import { deviceKey } from '../scheduler/place';
import type { CardRoom } from '../scheduler/sharing';
import type { Backend, DeviceReading, ProbeResult } from './backend';

/** A running slice of a card (docs/behaviour.md §25.2). */
export interface Slice { job: number; mem: number; compute: number }

export const POLL_INTERVAL_MS = 2000;

/**
 * The poll interval: 2 s, or `XLURM_POLL_INTERVAL_MS` (100–60000) from the
 * daemon's own environment — tests use a short one so device transitions
 * are seen quickly. A job's environment never reaches this.
 */
export function pollIntervalFrom(env: NodeJS.ProcessEnv): number {
  const v = env.XLURM_POLL_INTERVAL_MS;
  if (v === undefined || !/^\d+$/.test(v)) return POLL_INTERVAL_MS;
  return Math.min(60000, Math.max(100, Number(v)));
}

export class DeviceManager {
  readonly inventory: Device[];
  private readonly status = new Map<string, ProbeResult>();
  private readonly allocated = new Map<string, number>();
  /** Sliced devices: key → their running slices, in start order (docs/behaviour.md §25.2). */
  private readonly slices = new Map<string, Slice[]>();
  readonly excluded = new Set<number>();
  private timer: NodeJS.Timeout | undefined;
  private probing = new Set<Backend>();
  private reprobeWanted = new Set<Backend>();
  /**
   * Devices released by a job and not yet re-probed: key → the number of the
   * last probe started before the release. Such a device is not free until a
   * probe started after the release has answered (a job may leave a process
   * on it).
   */
  private readonly stale = new Map<string, number>();
  private probeSeq = 0;
  /** Per backend: the number of the latest probe that has answered (for slices its figures do not show yet). */
  private readonly answered = new Map<Backend, number>();
  /** Per sliced job: the last probe started before its slice was allocated. */
  private readonly sliceSeq = new Map<number, number>();
  /**
   * Vendors whose free memory places slices (sharing on, set by Core each
   * pass): a change of a card's free memory is then a change (a pass runs),
   * as a status change is. Empty: memory figures never wake the scheduler.
   */
  memoryWatched: ReadonlySet<DeviceKind> = new Set();
  /** Free memory at the latest probe, by device key, of watched vendors. */
  private readonly lastFree = new Map<string, number | undefined>();
  /** Utilisation and memory as the latest probes read them, by label (nv:0), for samples (accounting/sampler.ts). */
  readings(): ReadonlyMap<string, DeviceReading> {
    const m = new Map<string, DeviceReading>();
    for (const b of this.backends) for (const [id, r] of b.readings?.() ?? []) m.set(`${KIND_LABEL[b.kind]}:${id}`, r);
    return m;
  }

  constructor(
    private readonly backends: Backend[],
    private readonly onChange: () => void,
    private readonly log: (msg: string) => void,
    private readonly pollMs: number = POLL_INTERVAL_MS,
  ) {
    this.inventory = backends.flatMap((b) => b.devices.slice());
  }

  get kinds(): string[] { return this.backends.map((b) => b.kind); }

  /** Per vendor, the groups its library reported at discovery (vendors without: unknown topology). */
  discoveredGroups(): Map<DeviceKind, readonly (readonly number[])[]> {
    const m = new Map<DeviceKind, readonly (readonly number[])[]>();
    for (const b of this.backends) if (b.groups) m.set(b.kind, b.groups);
    return m;
  }

  /** All ids of the inventory (for validating exclusions). */
  hasId(id: number): boolean { return this.inventory.some((d) => d.id === id); }

  isEnabled(d: Device): boolean { return !this.excluded.has(d.id); }

  /** Keys of devices that may be allocated now. */
  freeKeys(): Set<string> {
    const free = new Set<string>();
    for (const d of this.inventory) {
      const k = deviceKey(d);
      if (this.status.get(k)?.status === 'idle' && !this.excluded.has(d.id) && !this.allocated.has(k) && !this.slices.has(k) && !this.stale.has(k)) free.add(k);
    }
    return free;
  }

  /** A job's devices; with `share`, a slice of each (docs/behaviour.md §25.2). */
  allocate(jobId: number, devices: readonly Device[], share?: { mem: number; compute: number } | null): void {
    for (const d of devices) {
      const k = deviceKey(d);
      if (!share) { this.allocated.set(k, jobId); continue; }
      const list = this.slices.get(k) ?? [];
      if (!list.some((s) => s.job === jobId)) list.push({ job: jobId, mem: share.mem, compute: share.compute });
      this.sliceSeq.set(jobId, this.probeSeq);
      this.slices.set(k, list);
    }
  }

  /**
   * A job's devices are released: re-probe them at once (no waiting for the
   * poll). A card still sliced by other jobs stays theirs; the last slice's
   * end releases it like a whole device.
   */
  release(devices: readonly Device[], jobId?: number): void {
    if (devices.length === 0) return;
    if (jobId !== undefined) this.sliceSeq.delete(jobId);
    const touched = new Set<Backend>();
    for (const d of devices) {
      const k = deviceKey(d);
      const sliced = this.slices.get(k);
      if (sliced && jobId !== undefined && sliced.some((s) => s.job === jobId)) {
        const left = sliced.filter((s) => s.job !== jobId);
        if (left.length) { this.slices.set(k, left); continue; }
        this.slices.delete(k);
      }
      if (this.allocated.get(k) === jobId || jobId === undefined) this.allocated.delete(k);
      const b = this.backends.find((x) => x.kind === d.kind);
      if (!b) continue;
      // Until a probe started from now on answers, the device is not known to be idle.
      this.stale.set(k, this.probeSeq);
      touched.add(b);
    }
    for (const b of touched) void this.probeBackend(b);
  }

  /** Initial probe (awaited at start-up) and the periodic poll. */
  async start(): Promise<void> {
    await Promise.all(this.backends.map((b) => this.probeBackend(b)));
    if (this.backends.length) {
      this.timer = setInterval(() => { for (const b of this.backends) void this.probeBackend(b); }, this.pollMs);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    for (const b of this.backends) {
      try { b.close(); } catch { /* closing a driver handle must not stop shutdown */ }
    }
  }

  /** Probe one backend; coalesces with a probe already in flight. */
  private async probeBackend(b: Backend): Promise<void> {
    if (this.probing.has(b)) { this.reprobeWanted.add(b); return; }
    this.probing.add(b);
    const seq = ++this.probeSeq;
    try {
      const ids = b.devices.map((d) => d.id);
      let results: Map<number, ProbeResult>;
      try {
        results = await b.probe(ids);
      } catch (e) {
        results = new Map(ids.map((id) => [id, { status: 'unknown' as const, error: (e as Error).message }]));
      }
      let changed = false;
      for (const d of b.devices) {
        const k = deviceKey(d);
        const r = results.get(d.id) ?? { status: 'unknown' as const, error: 'device missing from probe' };
        const staleSince = this.stale.get(k);
        if (staleSince !== undefined && staleSince < seq) {
          this.stale.delete(k);
          changed = true;
        }
        const prev = this.status.get(k);
        if (!prev || prev.status !== r.status || prev.error !== r.error || !samePids(prev.pids, r.pids)) {
          changed = true;
          this.logTransition(d, prev, r);
          this.status.set(k, r);
        }
      }
      this.answered.set(b, Math.max(this.answered.get(b) ?? 0, seq));
      if (this.memoryWatched.has(b.kind)) {
        const readings = b.readings?.();
        for (const d of b.devices) {
          const k = deviceKey(d);
          const free = readings?.get(d.id)?.memoryFree;
          if (this.lastFree.get(k) !== free) { this.lastFree.set(k, free); changed = true; }
        }
      }
      if (changed) this.onChange();
    } finally {
      this.probing.delete(b);
      if (this.reprobeWanted.delete(b)) void this.probeBackend(b);
    }
  }

  /** Log a change of error and the recovery once, not every poll. */
  private logTransition(d: Device, prev: ProbeResult | undefined, r: ProbeResult): void {
    const name = `${KIND_LABEL[d.kind]}:${d.id}`;
    if (r.status === 'unknown' && (prev?.error !== r.error)) this.log(`device ${name} unknown: ${r.error ?? 'no answer'}`);
    else if (prev?.status === 'unknown' && r.status !== 'unknown') this.log(`device ${name} recovered: ${r.status}`);
    else if (r.status === 'unhealthy' && prev?.status !== 'unhealthy') this.log(`device ${name} unhealthy`);
  }

  /**
   * The PIDs the last probe found on a busy device (at most a few), for a
   * pending job's reason (docs/behaviour.md §20.4); undefined when not busy or
   * the library does not name them. Not part of DeviceView: xinfo is unchanged.
   */
  busyPids(d: Device): readonly number[] | undefined {
    const probe = this.status.get(deviceKey(d));
    return probe?.status === 'busy' && probe.pids && probe.pids.length > 0 ? probe.pids : undefined;
  }

  /** The device's own node files from discovery (docs/behaviour.md §24.8); empty when none are known. */
  nodesOf(d: Device): readonly string[] {
    return this.backends.find((b) => b.kind === d.kind)?.nodes?.get(d.id) ?? [];
  }

  /** The device's NUMA node from discovery (docs/behaviour.md §24.3); null when unknown. */
  numaNodeOf(d: Device): number | null {
    return this.backends.find((b) => b.kind === d.kind)?.numa?.get(d.id) ?? null;
  }

  /** A device's total memory as its library last reported it (bytes), if it does. */
  memoryTotal(d: Device): number | undefined {
    return this.backends.find((b) => b.kind === d.kind)?.readings?.().get(d.id)?.memoryTotal;
  }

  /** The running slices of a device; empty when it has none. */
  slicesOf(d: Device): readonly Slice[] { return this.slices.get(deviceKey(d)) ?? []; }

  /**
   * The cards of `kinds` that may take slices now, with their room
   * (docs/behaviour.md §25.2): not excluded, held by no whole-device job,
   * probed idle or busy (processes of their own slices, or others' whose
   * memory the library's free figure already counts), with total and free
   * memory reported. `unknown` and `unhealthy` cards take none (fail closed).
   */
  sliceCards(kinds: ReadonlySet<DeviceKind>): Map<string, CardRoom> {
    const out = new Map<string, CardRoom>();
    if (kinds.size === 0) return out;
    const readings = new Map<string, DeviceReading>();
    for (const b of this.backends) {
      if (!kinds.has(b.kind)) continue;
      for (const [id, r] of b.readings?.() ?? []) readings.set(`${b.kind}:${id}`, r);
    }
    for (const d of this.inventory) {
      if (!kinds.has(d.kind) || this.excluded.has(d.id)) continue;
      const k = deviceKey(d);
      const st = this.status.get(k)?.status;
      if (this.allocated.has(k) || (st !== 'idle' && st !== 'busy')) continue;
      const r = readings.get(k);
      if (r?.memoryTotal === undefined || r.memoryFree === undefined) continue;
      const list = this.slices.get(k) ?? [];
      let sliced = 0, compute = 0;
      // A slice allocated after the latest answered probe started is not in its free figure yet:
      // counted there too, so foreign memory and a new slice are never both overlooked.
      const seen = this.answered.get(this.backends.find((x) => x.kind === d.kind)!) ?? 0;
      let unseen = 0;
      for (const s of list) {
        sliced += s.mem; compute += s.compute;
        if ((this.sliceSeq.get(s.job) ?? 0) >= seen) unseen += s.mem;
      }
      out.set(k, { total: r.memoryTotal, free: Math.max(0, r.memoryFree - unseen), sliced, compute, slices: list.length });
    }
    return out;
  }

  views(): DeviceView[] {
    return this.inventory.map((d) => {
      const k = deviceKey(d);
      const job = this.allocated.get(k) ?? null;
      const probe = this.status.get(k);
      const sliced = this.slices.get(k);
      let status: DeviceView['status'];
      if (this.excluded.has(d.id)) status = 'disabled';
      else if (job !== null) status = 'allocated';
      else if (sliced) status = 'shared';
      else status = probe?.status ?? 'unknown';
      const v: DeviceView = { device: d, job, status, nodes: [...this.nodesOf(d)] };
      if (sliced) v.slices = sliced.map((s) => ({ job: s.job, mem: s.mem, compute: s.compute }));
      if (probe?.status === 'unknown') v.monitoring_error = probe.error ?? 'no probe result yet';
      return v;
    });
  }
}

/** A new set of PIDs on a busy device is a change: the reasons that name them must follow. */
function samePids(a: readonly number[] | undefined, b: readonly number[] | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  return a.every((p, i) => p === b[i]);
}
