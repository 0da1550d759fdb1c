/**
 * The place step: which devices a job gets (docs/behaviour.md §5.3), and,
 * for a job that gets none, what blocks it (§20.4). Pure: device
 * states come in as arguments. Later: device groups and best fit, CPUs,
 * memory, slices of a card.
 */
import type { Device, DeviceKind, JobRequest, Reason } from '@xlurm/protocol';
import { KINDS, KIND_LABEL } from '@xlurm/protocol';

/** Internal device key `<kind>:<id>`: unique because ids are unique per vendor. */
export function deviceKey(d: Pick<Device, 'kind' | 'id'>): string { return `${d.kind}:${d.id}`; }

/** A device's label as users see it: `nv:0`. */
export function deviceLabel(d: Pick<Device, 'kind' | 'id'>): string { return `${KIND_LABEL[d.kind]}:${d.id}`; }

/**
 * Pick devices for `req` among `inventory` (priority order), using only those
 * for which `usableNow` is true. Returns null when the request does not fit now.
 * Never mixes vendors.
 */
export function place(req: JobRequest, inventory: readonly Device[], usableNow: (d: Device) => boolean): Device[] | null {
  if (req.count === 0) return [];
  const kinds = req.kind ? [req.kind] : KINDS;
  const excluded = req.excludeIds;
  const usable = excluded && excluded.length ? (d: Device) => !excluded.includes(d.id) && usableNow(d) : usableNow;
  if (req.deviceIds) {
    const picked = exactIds(req.deviceIds, kinds, inventory);
    return picked && picked.every(usable) ? picked : null;
  }
  for (const kind of kinds) {
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
export function checkPlaceable(req: JobRequest, inventory: readonly Device[], enabled: (d: Device) => boolean): PlaceError | null {
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
  return null;
}

/**
 * Why a device that is not free is not. `settling`: released by a job and
 * not yet probed again (a job may leave a process behind on it).
 */
export type DeviceBlock =
  | { state: 'held'; job: number; owner?: string }
  | { state: 'busy' | 'unknown' | 'unhealthy' | 'excluded' | 'settling' };

/** The devices at the end of a pass: what is free, and why the rest is not. */
export interface DeviceSituation {
  inventory: readonly Device[];
  /** Keys (deviceKey) of devices nobody holds, idle and enabled. */
  free: ReadonlySet<string>;
  /** Keys of devices that are not free, with why; a missing key reads as "not free". */
  blocked: ReadonlyMap<string, DeviceBlock>;
}

/** Devices in these states cannot be given to anyone until an administrator or the hardware acts. */
const UNAVAILABLE: ReadonlySet<string> = new Set(['unknown', 'unhealthy', 'excluded']);

function describe(b: DeviceBlock | undefined): string {
  if (!b) return 'not free';
  switch (b.state) {
    case 'held': return b.owner === undefined ? `held by job ${b.job}` : `held by job ${b.job} (${b.owner})`;
    case 'busy': return 'busy (not started by xlurm)';
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
 * `needs 2 nv devices: nv:0 held by job 12 (alice), nv:1 busy (not started by xlurm)`.
 * Null when it can be placed now. Only labels, job ids and owners: the message is
 * shown host-wide.
 */
export function explainPlace(req: JobRequest, s: DeviceSituation): Reason | null {
  if (place(req, s.inventory, (d) => s.free.has(deviceKey(d)))) return null;
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
