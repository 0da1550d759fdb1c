/**
 * `xinfo --pools` (docs/behaviour.md §21.7): per vendor pool, what it holds,
 * what is free, its groups, the largest request that could start now and the
 * largest that could ever fit under the host's group affinity, and its
 * reservation. A pure function of the device views and the policy, so the
 * figures are those the scheduling pass works from.
 */
import type { DeviceKind, DeviceView, PoolView } from '@xlurm/protocol';
import { KIND_LABEL } from '@xlurm/protocol';

export interface PoolReservation { job: number; devices: number[]; expectedStart: number | null }

export interface PoolsInput {
  /** Every device, in inventory order, with its status. */
  views: readonly DeviceView[];
  /** `kind:id` of the devices a job could get now (idle, not held, not excluded). */
  free: ReadonlySet<string>;
  /** The vendors discovered, in their order (a vendor with no device still gets a row). */
  kinds: readonly string[];
  /** Per vendor: its groups of device ids; a vendor without an entry has unknown topology. */
  groups?: ReadonlyMap<string, readonly (readonly number[])[]>;
  /** The host's affinity; `require` limits a request to one group. */
  affinity?: 'prefer' | 'require' | 'off';
  /** False while every `max_running` slot is taken: nothing starts now. */
  slotFree: boolean;
  /** Per vendor: the devices held back for the reserving job (docs/behaviour.md §21.3). */
  reservations?: ReadonlyMap<string, PoolReservation>;
}

export function pools(input: PoolsInput): PoolView[] {
  const byKind = new Map<string, DeviceView[]>();
  for (const k of input.kinds) byKind.set(k, []);
  for (const v of input.views) {
    const list = byKind.get(v.device.kind);
    if (list) list.push(v);
    else byKind.set(v.device.kind, [v]);
  }
  const out: PoolView[] = [];
  for (const [kind, views] of byKind) {
    const reservation = input.reservations?.get(kind);
    const reserved = new Set(reservation?.devices ?? []);
    const free = views.filter((v) => input.free.has(`${kind}:${v.device.id}`)).map((v) => v.device.id);
    // What a new job could be given now: free and not held back for the reservation
    // (backfill onto reserved devices depends on the job's own time limit, so not counted).
    const startable = new Set(free.filter((id) => !reserved.has(id)));
    // What could ever be given: every device not excluded by the administrator and not
    // known to be broken (the submission check refuses requests beyond it).
    const usable = new Set(views.filter((v) => v.status !== 'disabled' && v.status !== 'unhealthy').map((v) => v.device.id));
    const declared = input.groups?.get(kind);
    const groups = (declared ?? []).map((ids) => ({ devices: [...ids], free: ids.filter((id) => free.includes(id)) }));
    const largest = (ids: ReadonlySet<number>): number => {
      if (input.affinity !== 'require') return ids.size;
      // Unknown topology is not "fully connected": under require only single devices fit.
      if (!declared) return Math.min(ids.size, 1);
      let most = Math.min(ids.size, 1);
      for (const g of declared) most = Math.max(most, g.filter((id) => ids.has(id)).length);
      return most;
    };
    out.push({
      kind: kind as DeviceKind,
      label: (KIND_LABEL as Record<string, string>)[kind] ?? kind,
      total: views.length,
      free: free.length,
      excluded: views.filter((v) => v.status === 'disabled').length,
      unknown: views.filter((v) => v.status === 'unknown').length,
      groups,
      largest_now: input.slotFree ? largest(startable) : 0,
      largest_ever: largest(usable),
      reservation: reservation
        ? { job: reservation.job, devices: [...reservation.devices], expected_start: reservation.expectedStart }
        : null,
    });
  }
  return out;
}
