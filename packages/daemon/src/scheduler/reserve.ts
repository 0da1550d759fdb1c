/**
 * The reservation and backfill rule of the `reserve` mode
 * (docs/behaviour.md §21.3). Pure: the holders' expected ends and the time
 * come in as arguments; nothing here reads the clock.
 *
 * A job that cannot start only because devices are held reserves exactly the
 * devices it will get: the free ones it may use first, then the held ones
 * whose holders end soonest (holders without a time limit last; ties in
 * inventory order). Its expected start is the latest end among those
 * holders, unknown when one of them has no limit. Later jobs may use a
 * reserved device only when their own time limit ends by that start.
 */
import type { Device, DeviceKind, JobRequest } from '@xlurm/protocol';
import { KINDS } from '@xlurm/protocol';
import { affinityOf, type Topology } from './place';

/** Who holds a device and when it is expected back (started_at + time limit; null: no limit). */
export interface Hold { job: number; owner?: string; end: number | null }

/** A reservation: one per vendor pool at a time. */
export interface Reservation {
  job: number;
  owner?: string;
  count: number;
  kind: DeviceKind;
  /** The devices it will get, in inventory order. */
  devices: Device[];
  /** Unix seconds when its last holder is expected to end; null: unknown (a holder has no limit). */
  expectedStart: number | null;
}

/** How a device looks to a job that would reserve: free for it, held (and until when), or neither. */
export type Availability = 'free' | Hold | null;

/**
 * The reservation `req` (job `job`) would make, in the first pool in
 * priority order that is not `closed` and has enough devices free or held
 * for it; null when none has (an impossible request never reserves:
 * busy, unknown, unhealthy or excluded devices are not waited for).
 */
export function reserveFor(
  job: { id: number; owner?: string },
  req: JobRequest,
  inventory: readonly Device[],
  availability: (d: Device) => Availability,
  closed: (kind: DeviceKind) => boolean,
  now: number,
  topo?: Topology,
): Reservation | null {
  if (req.count === 0) return null;
  const excluded = req.excludeIds;
  for (const kind of req.kind ? [req.kind] : KINDS) {
    if (closed(kind)) continue;
    // Candidates with their rank: free first, then by holder end (no limit last), then inventory order.
    const cands: { d: Device; i: number; end: number }[] = [];
    if (req.deviceIds) {
      for (const id of req.deviceIds) {
        const i = inventory.findIndex((p) => p.kind === kind && p.id === id);
        if (i < 0) break;
        const a = availability(inventory[i]!);
        if (a === null) break;
        cands.push({ d: inventory[i]!, i, end: a === 'free' ? -Infinity : a.end ?? Infinity });
      }
      if (cands.length !== req.deviceIds.length) continue;
    } else {
      inventory.forEach((d, i) => {
        if (d.kind !== kind || (excluded && excluded.includes(d.id))) return;
        const a = availability(d);
        if (a !== null) cands.push({ d, i, end: a === 'free' ? -Infinity : a.end ?? Infinity });
      });
      if (cands.length < req.count) continue;
      cands.sort((x, y) => (x.end === y.end ? 0 : x.end < y.end ? -1 : 1) || x.i - y.i);
      // Device groups (docs/behaviour.md §21.5): the group whose devices come
      // free soonest; under prefer only when that is no later than any devices.
      const mode = req.count > 1 ? affinityOf(req, topo) : 'off';
      const groupOf = mode === 'off' ? undefined : topo!.groupOf.get(kind);
      if (groupOf) {
        let best: typeof cands | undefined;
        for (let g = 0; g < topo!.groups.get(kind)!.length; g++) {
          const inGroup = cands.filter((c) => groupOf.get(c.d.id) === g).slice(0, req.count);
          if (inGroup.length === req.count && (!best || inGroup[req.count - 1]!.end < best[req.count - 1]!.end)) best = inGroup;
        }
        if (best && (mode === 'require' || best[req.count - 1]!.end <= cands[req.count - 1]!.end)) cands.splice(0, cands.length, ...best);
        else if (mode === 'require') continue;
      } else if (mode === 'require') continue; // unknown topology: refused at submission
      cands.length = req.count;
    }
    let latest = now;
    for (const c of cands) if (c.end > latest) latest = c.end;
    cands.sort((x, y) => x.i - y.i);
    const r: Reservation = {
      job: job.id, count: req.count, kind, devices: cands.map((c) => c.d),
      expectedStart: latest === Infinity ? null : latest,
    };
    if (job.owner !== undefined) r.owner = job.owner;
    return r;
  }
  return null;
}

/** May a job with this time limit use `r`'s devices now: does it end by `r`'s expected start? */
export function mayBackfill(timeLimit: number | null, r: Reservation, now: number): boolean {
  return timeLimit !== null && r.expectedStart !== null && now + timeLimit <= r.expectedStart;
}
