/**
 * The submission checks of `--share` that need the host (docs/behaviour.md
 * §25.1): sharing on, a library for the vendor the job could get, and a slice
 * no larger than the memory of the largest card that could hold it (a
 * slice larger than every card would wait for ever). Refused at submission, like a request no pool can hold (INFEASIBLE:
 * `--immediate` exits 69).
 */
import type { Device, DeviceKind, JobRequest } from '@xlurm/protocol';
import { KINDS, KIND_LABEL, formatSize } from '@xlurm/protocol';
import type { PlaceError } from '../scheduler/place';
import type { SharingSettings } from './settings';

export function checkShare(req: JobRequest, s: SharingSettings | undefined, inventory: readonly Device[],
  memoryTotal: (d: Device) => number | undefined = () => undefined): PlaceError | null {
  if (!req.share) return null;
  if (!s?.enabled) return { code: 'INFEASIBLE', message: 'sharing is not enabled on this host' };
  // The pools that could hold the request at all, in priority order.
  const kinds: DeviceKind[] = req.kind ? [req.kind] : KINDS.filter((k) => inventory.some((d) => d.kind === k));
  const holding = kinds.filter((k) => {
    const ids = new Set(inventory.filter((d) => d.kind === k).map((d) => d.id));
    return req.deviceIds ? req.deviceIds.every((id) => ids.has(id)) : ids.size >= req.count;
  });
  const shared = holding.filter((k) => s.vendors.has(k));
  if (shared.length) return sliceTooLarge(req, inventory.filter((d) => shared.includes(d.kind)), memoryTotal);
  const k = holding[0] ?? kinds[0];
  return { code: 'INFEASIBLE', message: `sharing is not available for ${k ? KIND_LABEL[k] : 'these'} devices` };
}

/**
 * A slice whose memory is more than every card that could hold it has: refused. Decided only
 * where the library reported every such card's memory (a card of unknown size might hold it).
 */
function sliceTooLarge(req: JobRequest, cards: readonly Device[], memoryTotal: (d: Device) => number | undefined): PlaceError | null {
  const mem = req.share?.mem ?? 0;
  const candidates = req.deviceIds ? cards.filter((d) => req.deviceIds!.includes(d.id)) : cards;
  let largest = 0;
  for (const d of candidates) {
    const total = memoryTotal(d);
    if (total === undefined) return null;
    largest = Math.max(largest, total);
  }
  if (!candidates.length || mem <= largest) return null;
  return { code: 'INFEASIBLE', message: `a slice of ${formatSize(mem)} is larger than any card that could hold it (the largest has ${formatSize(largest)})` };
}
