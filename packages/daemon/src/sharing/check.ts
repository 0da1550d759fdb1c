/**
 * The submission checks of `--share` that need the host (docs/behaviour.md
 * §25.1): sharing on, and a library for the vendor the job could get.
 * Refused at submission, like a request no pool can hold (INFEASIBLE:
 * `--immediate` exits 69).
 */
import type { Device, DeviceKind, JobRequest } from '@xlurm/protocol';
import { KINDS, KIND_LABEL } from '@xlurm/protocol';
import type { PlaceError } from '../scheduler/place';
import type { SharingSettings } from './settings';

export function checkShare(req: JobRequest, s: SharingSettings | undefined, inventory: readonly Device[]): PlaceError | null {
  if (!req.share) return null;
  if (!s?.enabled) return { code: 'INFEASIBLE', message: 'sharing is not enabled on this host' };
  // The pools that could hold the request at all, in priority order.
  const kinds: DeviceKind[] = req.kind ? [req.kind] : KINDS.filter((k) => inventory.some((d) => d.kind === k));
  const holding = kinds.filter((k) => {
    const ids = new Set(inventory.filter((d) => d.kind === k).map((d) => d.id));
    return req.deviceIds ? req.deviceIds.every((id) => ids.has(id)) : ids.size >= req.count;
  });
  if (holding.some((k) => s.vendors.has(k))) return null;
  const k = holding[0] ?? kinds[0];
  return { code: 'INFEASIBLE', message: `sharing is not available for ${k ? KIND_LABEL[k] : 'these'} devices` };
}
