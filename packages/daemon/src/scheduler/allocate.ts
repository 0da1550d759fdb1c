/**
 * Device allocation (spec 5.3): pure functions, no I/O.
 */
import type { Device, DeviceKind } from '@xlurm/protocol';
import { KINDS } from '@xlurm/protocol';

/** What a job asks for. */
export interface Request {
  count: number;
  kind: DeviceKind | null;
  deviceIds?: number[];
  /** Per-job exclusion (`-x`): ids this job must not get (in every vendor). */
  excludeIds?: readonly number[];
}

/** Internal device key `<kind>:<id>`: unique because ids are unique per vendor. */
export function deviceKey(d: Pick<Device, 'kind' | 'id'>): string { return `${d.kind}:${d.id}`; }

/**
 * Pick devices for `req` among `inventory` (priority order), using only those
 * for which `usable` is true. Returns null when the request does not fit now.
 * Never mixes vendors.
 */
export function allocate(req: Request, inventory: readonly Device[], usableNow: (d: Device) => boolean): Device[] | null {
  if (req.count === 0) return [];
  const kinds = req.kind ? [req.kind] : KINDS;
  const excluded = req.excludeIds;
  const usable = excluded && excluded.length ? (d: Device) => !excluded.includes(d.id) && usableNow(d) : usableNow;
  if (req.deviceIds) {
    // Exact ids, in the order given, all within one vendor pool: the first
    // pool in priority order that has every id (documented in docs/scheduling.md).
    for (const kind of kinds) {
      const pool = inventory.filter((d) => d.kind === kind);
      const picked: Device[] = [];
      for (const id of req.deviceIds) {
        const d = pool.find((p) => p.id === id);
        if (!d) break;
        picked.push(d);
      }
      if (picked.length === req.deviceIds.length) return picked.every(usable) ? picked : null;
    }
    return null;
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

/** Can the request ever be satisfied by the enabled inventory (all idle)? */
export function feasible(req: Request, inventory: readonly Device[], enabled: (d: Device) => boolean): boolean {
  return allocate(req, inventory, enabled) !== null;
}

/** Vendors whose pools contain every id of `ids` (for the -i ambiguity check). */
export function poolsWithIds(ids: readonly number[], inventory: readonly Device[]): DeviceKind[] {
  return KINDS.filter((k) => ids.every((id) => inventory.some((d) => d.kind === k && d.id === id)));
}
