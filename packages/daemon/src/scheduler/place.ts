/**
 * The place step: which devices a job gets (docs/behaviour.md §5.3), and,
 * for a job that gets none, what blocks it (§20.4). Pure: device
 * states come in as arguments. Device groups and affinity (prefer, best
 * fit; require; off) as in docs/behaviour.md §21.5. Later: CPUs, memory,
 * slices of a card.
 */
import type { Device, DeviceKind, JobRequest, Reason } from '@xlurm/protocol';
import { KINDS, KIND_LABEL } from '@xlurm/protocol';

/** Internal device key `<kind>:<id>`: unique because ids are unique per vendor. */
export function deviceKey(d: Pick<Device, 'kind' | 'id'>): string { return `${d.kind}:${d.id}`; }

/** A device's label as users see it: `nv:0`. */
export function deviceLabel(d: Pick<Device, 'kind' | 'id'>): string { return `${KIND_LABEL[d.kind]}:${d.id}`; }

/** How strongly a multi-device job is kept within one device group (docs/behaviour.md §21.5). */
export type GroupAffinity = 'prefer' | 'require' | 'off';

/**
 * The host's device groups and its affinity. A vendor without an entry in
 * `groups` has unknown topology: that is never read as "fully connected".
 */
export interface Topology {
  affinity: GroupAffinity;
  /** Per vendor: its groups of device ids (disjoint), in declared order. */
  groups: ReadonlyMap<DeviceKind, readonly (readonly number[])[]>;
  /** Per vendor: device id → index of its group (built once by makeTopology). */
  groupOf: ReadonlyMap<DeviceKind, ReadonlyMap<number, number>>;
}

export function makeTopology(affinity: GroupAffinity, groups: ReadonlyMap<DeviceKind, readonly (readonly number[])[]>): Topology {
  const groupOf = new Map<DeviceKind, Map<number, number>>();
  for (const [kind, gs] of groups) {
    const m = new Map<number, number>();
    gs.forEach((g, i) => { for (const id of g) m.set(id, i); });
    groupOf.set(kind, m);
  }
  return { affinity, groups, groupOf };
}

/**
 * The affinity that applies to `req`: its own (--group-affinity /
 * --ignore-group-affinity), else the host's; without a topology (a caller
 * that asks whether the host could hold it at all), first fit.
 */
export function affinityOf(req: JobRequest, topo: Topology | undefined): GroupAffinity {
  return topo ? req.groupAffinity ?? topo.affinity : 'off';
}

/** A group's ids as the admin writes them: `0-3`, `0,2,5-7`. */
export function formatIds(ids: readonly number[]): string {
  const sorted = [...ids].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : `${sorted[i]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/**
 * Pick devices for `req` among `inventory` (priority order), using only those
 * for which `usableNow` is true. Returns null when the request does not fit now.
 * Never mixes vendors. With `topo`, a multi-device job is kept within one
 * group of its vendor as its affinity says (docs/behaviour.md §21.5).
 */
export function place(req: JobRequest, inventory: readonly Device[], usableNow: (d: Device) => boolean, topo?: Topology): Device[] | null {
  if (req.count === 0) return [];
  const kinds = req.kind ? [req.kind] : KINDS;
  const excluded = req.excludeIds;
  const usable = excluded && excluded.length ? (d: Device) => !excluded.includes(d.id) && usableNow(d) : usableNow;
  if (req.deviceIds) {
    // Whether the ids share a group under `require` is a submission check (checkPlaceable).
    const picked = exactIds(req.deviceIds, kinds, inventory);
    return picked && picked.every(usable) ? picked : null;
  }
  const mode = req.count > 1 ? affinityOf(req, topo) : 'off';
  for (const kind of kinds) {
    if (mode !== 'off') {
      const groupOf = topo!.groupOf.get(kind);
      if (groupOf) {
        const inGroup = bestGroup(req.count, kind, inventory, usable, groupOf, topo!.groups.get(kind)!.length);
        if (inGroup) return inGroup;
      }
      // Unknown topology is not "fully connected": under require nothing fits there.
      if (mode === 'require') continue;
    }
    const picked: Device[] = [];
    for (const d of inventory) {
      if (d.kind !== kind || !usable(d)) continue;
      picked.push(d);
      if (picked.length === req.count) return picked;
    }
  }
  return null;
}

/**
 * Best fit: of the groups of `kind` with at least `count` usable devices, the
 * one with the fewest (ties: the first declared), so the larger free blocks
 * stay whole for larger jobs; its first `count` usable devices in inventory order.
 */
function bestGroup(count: number, kind: DeviceKind, inventory: readonly Device[], usable: (d: Device) => boolean,
  groupOf: ReadonlyMap<number, number>, groups: number): Device[] | null {
  const free: Device[][] = Array.from({ length: groups }, () => []);
  for (const d of inventory) {
    if (d.kind !== kind) continue;
    const g = groupOf.get(d.id);
    if (g !== undefined && usable(d)) free[g]!.push(d);
  }
  let best = -1;
  for (let g = 0; g < groups; g++) {
    const n = free[g]!.length;
    if (n >= count && (best < 0 || n < free[best]!.length)) best = g;
  }
  return best < 0 ? null : free[best]!.slice(0, count);
}

/**
 * Exact ids, in the order given, all within one vendor pool: the first pool
 * in priority order that has every id (docs/behaviour.md §5.3).
 */
function exactIds(ids: readonly number[], kinds: readonly DeviceKind[], inventory: readonly Device[]): Device[] | null {
  for (const kind of kinds) {
    const picked: Device[] = [];
    for (const id of ids) {
      const d = inventory.find((p) => p.kind === kind && p.id === id);
      if (!d) break;
      picked.push(d);
    }
    if (picked.length === ids.length) return picked;
  }
  return null;
}

/** Vendors whose pools contain every id of `ids` (for the -i ambiguity check). */
export function poolsWithIds(ids: readonly number[], inventory: readonly Device[]): DeviceKind[] {
  return KINDS.filter((k) => ids.every((id) => inventory.some((d) => d.kind === k && d.id === id)));
}

/** A refusal at submission: the daemon's error code and message. */
export interface PlaceError { code: 'INVALID_ARGUMENT' | 'INFEASIBLE'; message: string }

/**
 * Can the host ever hold this request (with every enabled device idle)? The
 * submission checks that need the inventory, after the host-free ones of
 * checkRequest (protocol/request.ts): the first that fails, or null.
 */
export function checkPlaceable(req: JobRequest, inventory: readonly Device[], enabled: (d: Device) => boolean, topo?: Topology): PlaceError | null {
  if (req.count === 0) return null;
  if (req.deviceIds && !req.kind) {
    const pools = poolsWithIds(req.deviceIds, inventory);
    if (pools.length > 1) {
      const ids = req.deviceIds;
      const which = ids.length === 1 ? `device ID ${ids[0]} exists` : `device IDs ${ids.join(',')} exist`;
      const labels = pools.map((k) => KIND_LABEL[k]);
      return {
        code: 'INVALID_ARGUMENT',
        message: `${which} in several vendors (${labels.join(', ')}); choose one with --device, e.g. --device ${labels[0]}`,
      };
    }
  }
  if (!place(req, inventory, enabled)) {
    return { code: 'INFEASIBLE', message: `requested ${req.count} device(s), but no matching pool has enough devices` };
  }
  if (req.count > 1 && affinityOf(req, topo) === 'require') return checkRequired(req, inventory, enabled, topo!);
  return null;
}

/**
 * Under `require`, a request that fits the host without affinity: refused
 * when no group can ever hold it (docs/behaviour.md §21.5).
 */
function checkRequired(req: JobRequest, inventory: readonly Device[], enabled: (d: Device) => boolean, topo: Topology): PlaceError | null {
  const kinds = req.kind ? [req.kind] : KINDS;
  if (req.deviceIds) {
    const picked = exactIds(req.deviceIds, kinds, inventory)!;
    const kind = picked[0]!.kind;
    const groupOf = topo.groupOf.get(kind);
    if (!groupOf) return unknownTopology(kind);
    const spanned: string[] = [];
    const seen = new Set<number | string>();
    for (const d of picked) {
      const g = groupOf.get(d.id);
      const key = g ?? `id${d.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      spanned.push(g === undefined ? `${d.id} (in no group)` : formatIds(topo.groups.get(kind)![g]!));
    }
    if (spanned.length === 1) return null;
    const names = spanned.length === 2 ? spanned.join(' and ') : `${spanned.slice(0, -1).join(', ')} and ${spanned[spanned.length - 1]}`;
    return { code: 'INVALID_ARGUMENT', message: `device ids ${req.deviceIds.join(',')} span groups ${names} (group affinity is required)` };
  }
  if (place(req, inventory, enabled, topo)) return null;
  // The pool it would get without affinity says why.
  const excluded = req.excludeIds;
  const may = (d: Device) => enabled(d) && (!excluded || !excluded.includes(d.id));
  const kind = kinds.find((k) => inventory.filter((d) => d.kind === k && may(d)).length >= req.count)!;
  const groups = topo.groups.get(kind);
  if (!groups) return unknownTopology(kind);
  let largest: readonly number[] = [];
  let most = 0;
  for (const g of groups) {
    const n = inventory.filter((d) => d.kind === kind && g.includes(d.id) && may(d)).length;
    if (n > most) { most = n; largest = g; }
  }
  const what = most === 0 ? `no group of ${KIND_LABEL[kind]} has a device it may use`
    : `the largest group of ${KIND_LABEL[kind]} (${formatIds(largest)}) has ${plural(most, 'device')}${most < largest.length ? ' it may use' : ''}`;
  return { code: 'INFEASIBLE', message: `requested ${req.count} devices within one group, but ${what} (group affinity is required)` };
}

function unknownTopology(kind: DeviceKind): PlaceError {
  return { code: 'INFEASIBLE', message: `device topology of ${KIND_LABEL[kind]} is unknown; the administrator must declare [devices.groups]` };
}

/**
 * Why a device that is not free is not. `settling`: released by a job and
 * not yet probed again (a job may leave a process behind on it).
 */
export type DeviceBlock =
  | { state: 'held'; job: number; owner?: string }
  | { state: 'busy'; pids?: readonly number[] }
  /** Running slices of jobs that asked for `--share` (docs/behaviour.md §25.2): held for whole-device jobs. */
  | { state: 'shared'; jobs: readonly number[] }
  | { state: 'unknown' | 'unhealthy' | 'excluded' | 'settling' };

/** The devices at the end of a pass: what is free, and why the rest is not. */
export interface DeviceSituation {
  inventory: readonly Device[];
  /** Keys (deviceKey) of devices nobody holds, idle and enabled. */
  free: ReadonlySet<string>;
  /** Keys of devices that are not free, with why; a missing key reads as "not free". */
  blocked: ReadonlyMap<string, DeviceBlock>;
  /** The device groups and affinity that placement used. */
  topology?: Topology;
}

/** Devices in these states cannot be given to anyone until an administrator or the hardware acts. */
const UNAVAILABLE: ReadonlySet<string> = new Set(['unknown', 'unhealthy', 'excluded']);

/** `pid 4242, ` / `pids 4242,4243, ` / nothing when the library did not name them. */
function busyWho(pids: readonly number[] | undefined): string {
  if (!pids || pids.length === 0) return '';
  return `${pids.length === 1 ? 'pid' : 'pids'} ${pids.join(',')}, `;
}

/** Why a device is not free, in a reason's words. */
export function describeBlock(b: DeviceBlock | undefined): string { return describe(b); }

function describe(b: DeviceBlock | undefined): string {
  if (!b) return 'not free';
  switch (b.state) {
    case 'shared': return `shared by ${b.jobs.length === 1 ? 'job' : 'jobs'} ${b.jobs.join(',')} (slices)`;
    case 'held': return b.owner === undefined ? `held by job ${b.job}` : `held by job ${b.job} (${b.owner})`;
    case 'busy': return `busy (${busyWho(b.pids)}not started by xlurm)`;
    case 'unknown': return 'state unknown';
    case 'unhealthy': return 'unhealthy';
    case 'excluded': return 'excluded by the administrator';
    case 'settling': return 'released, not yet probed again';
  }
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/**
 * Why `req` cannot be placed in `s` (`Resources` or `DevicesUnavailable`),
 * naming each device it may use that is not free, grouped by what blocks it:
 * `needs 2 nv devices: nv:0 held by job 12 (alice), nv:1 busy (pid 4242, not started by xlurm)`.
 * Null when it can be placed now. Only labels, job ids, owners and foreign PIDs: the
 * message is shown host-wide.
 */
export function explainPlace(req: JobRequest, s: DeviceSituation): Reason | null {
  if (place(req, s.inventory, (d) => s.free.has(deviceKey(d)), s.topology)) return null;
  const excluded = req.excludeIds;
  const mayUse = (d: Device) => !excluded || !excluded.includes(d.id);
  let candidates: Device[];
  let needs: string;
  if (req.deviceIds) {
    const picked = exactIds(req.deviceIds, req.kind ? [req.kind] : KINDS, s.inventory);
    if (!picked) {
      const which = req.deviceIds.length === 1 ? `device ID ${req.deviceIds[0]}` : `device IDs ${req.deviceIds.join(',')}`;
      return { code: 'DevicesUnavailable', message: `no ${req.kind ? `${KIND_LABEL[req.kind]} ` : ''}pool has ${which}` };
    }
    candidates = picked.filter(mayUse);
    if (candidates.length < picked.length) return { code: 'DevicesUnavailable', message: `needs ${picked.map(deviceLabel).join(',')}, some of them excluded for this job` };
    needs = `needs ${candidates.map(deviceLabel).join(',')}`;
  } else {
    // The pools that could ever hold it: those with enough devices it may use.
    const kinds = (req.kind ? [req.kind] : KINDS).filter((k) => {
      let n = 0;
      for (const d of s.inventory) if (d.kind === k && mayUse(d)) n++;
      return n >= req.count;
    });
    const what = req.kind ? `${KIND_LABEL[req.kind]} device` : kinds.length === 1 ? `${KIND_LABEL[kinds[0]!]} device` : 'device';
    needs = `needs ${plural(req.count, what)}${!req.kind && kinds.length > 1 ? ' of one vendor' : ''}`;
    if (kinds.length === 0) return { code: 'DevicesUnavailable', message: `${needs}; no pool has that many${excluded?.length ? ' it may use' : ''}` };
    candidates = s.inventory.filter((d) => kinds.includes(d.kind) && mayUse(d));
    if (req.count > 1 && affinityOf(req, s.topology) === 'require') {
      const t = explainTopology(req.count, kinds, candidates, s);
      if (t) return t;
    }
  }
  // Group the devices by what blocks them, in inventory order of each group's first device.
  const groups = new Map<string, string[]>();
  let available = false;
  for (const d of candidates) {
    const k = deviceKey(d);
    let why: string;
    if (s.free.has(k)) { why = 'free'; available = true; } else {
      const b = s.blocked.get(k);
      if (!b || !UNAVAILABLE.has(b.state)) available = true;
      why = describe(b);
    }
    const g = groups.get(why);
    if (g) g.push(deviceLabel(d)); else groups.set(why, [deviceLabel(d)]);
  }
  const parts: string[] = [];
  for (const [why, labels] of groups) parts.push(`${labels.join(',')} ${why}`);
  return { code: available ? 'Resources' : 'DevicesUnavailable', message: `${needs}: ${parts.join(', ')}` };
}

/**
 * `Topology`: a pool has enough free devices for the job, but no group of
 * it has: names each group's free devices. Null when no pool has enough free.
 */
function explainTopology(count: number, kinds: readonly DeviceKind[], candidates: readonly Device[], s: DeviceSituation): Reason | null {
  for (const kind of kinds) {
    const free = candidates.filter((d) => d.kind === kind && s.free.has(deviceKey(d)));
    if (free.length < count) continue;
    const label = KIND_LABEL[kind];
    const groups = s.topology!.groups.get(kind);
    if (!groups) return { code: 'Topology', message: `device topology of ${label} is unknown; the administrator must declare [devices.groups]` };
    const parts = groups.map((g) => {
      const f = free.filter((d) => g.includes(d.id));
      return `group ${formatIds(g)} has ${f.length ? `${f.map(deviceLabel).join(',')} free` : 'none free'}`;
    });
    return { code: 'Topology', message: `needs ${plural(count, `${label} device`)} within one group: ${parts.join(', ')}` };
  }
  return null;
}
