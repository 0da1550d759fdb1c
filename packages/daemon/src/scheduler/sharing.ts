/**
 * Packing slices of cards (docs/behaviour.md §25.2): a job that asks for
 * `--share MEM[,COMPUTE%]` gets a slice of each of its devices. A card takes
 * slices while its room — the least of the memory its library reports free
 * now and its total less the memory of its slices — holds MEM and the compute
 * of its slices stays within 100 %. Among the cards that fit, the one left
 * with the least room (best fit), so large rooms stay for large slices. A
 * card hosts whole-device jobs or slices, never both: the caller offers only
 * cards that no whole-device job holds, and a sliced card is never free for
 * whole-device jobs. Pure: the cards come in as arguments.
 */
import type { Device, DeviceKind, JobRequest, Reason } from '@xlurm/protocol';
import { KINDS, KIND_LABEL, formatSize } from '@xlurm/protocol';
import { deviceKey, deviceLabel } from './place';

/** A card that may take slices now, as the latest probe and the running slices leave it. */
export interface CardRoom {
  /** Device memory in bytes, as its library reports it. */
  total: number;
  /** Free device memory in bytes, as its library reported it at the latest probe (others' processes count). */
  free: number;
  /** The memory of its running slices. */
  sliced: number;
  /** The compute percent of its running slices. */
  compute: number;
  /** How many slices run on it. */
  slices: number;
}

/** What slices may use: key (deviceKey) → its room; a device missing here takes no slice now. */
export type SliceCards = ReadonlyMap<string, CardRoom>;

/** The memory a card can still give a slice. */
export function roomOf(c: CardRoom): number {
  return Math.max(0, Math.min(c.free, c.total - c.sliced));
}

/** A pass's working copy: placing a slice updates its card. */
export class SliceBook {
  private readonly cards: Map<string, CardRoom>;
  constructor(cards: SliceCards) {
    this.cards = new Map([...cards].map(([k, c]) => [k, { ...c }]));
  }

  get size(): number { return this.cards.size; }

  card(key: string): CardRoom | undefined { return this.cards.get(key); }

  /**
   * The cards for `req`'s slices, or null when they do not fit now. `may`:
   * whether the pass still lets the job use a device (not taken whole in it).
   */
  place(req: JobRequest, inventory: readonly Device[], may: (d: Device) => boolean = () => true): Device[] | null {
    const share = req.share!;
    const fits = (d: Device): boolean => {
      const c = this.cards.get(deviceKey(d));
      return !!c && may(d) && roomOf(c) >= share.mem && c.compute + share.compute <= 100;
    };
    const excluded = req.excludeIds;
    const kinds: readonly DeviceKind[] = req.kind ? [req.kind] : KINDS;
    let picked: Device[] | null = null;
    if (req.deviceIds) {
      for (const kind of kinds) {
        const ds = req.deviceIds.map((id) => inventory.find((d) => d.kind === kind && d.id === id));
        if (ds.every((d) => d !== undefined)) { picked = ds.every((d) => fits(d!)) ? ds as Device[] : null; break; }
      }
    } else {
      for (const kind of kinds) {
        const candidates: Array<{ d: Device; left: number; at: number }> = [];
        inventory.forEach((d, at) => {
          if (d.kind !== kind || (excluded && excluded.includes(d.id)) || !fits(d)) return;
          candidates.push({ d, left: roomOf(this.cards.get(deviceKey(d))!) - share.mem, at });
        });
        if (candidates.length < req.count) continue;
        candidates.sort((a, b) => a.left - b.left || a.at - b.at);
        picked = candidates.slice(0, req.count).map((c) => c.d);
        break;
      }
    }
    if (!picked) return null;
    for (const d of picked) {
      const c = this.cards.get(deviceKey(d))!;
      c.sliced += share.mem;
      // Its memory is not yet in the library's figure: count it there too until the next probe.
      c.free -= share.mem;
      c.compute += share.compute;
      c.slices++;
    }
    return picked;
  }
}

/**
 * Why a slice request does not fit (a `Resources` reason), naming each device
 * it may use with what blocks it: `needs a slice of 8G, 50% on 1 nv device:
 * nv:0 has 4G, 70% left; nv:1 held by job 3 (alice)`. `blocked(d)`: the words
 * for a device that takes no slice now (held whole, unknown…).
 */
export function explainShare(req: JobRequest, book: SliceBook, inventory: readonly Device[], blocked: (d: Device) => string): Reason {
  const share = req.share!;
  const kinds: readonly DeviceKind[] = req.kind ? [req.kind] : KINDS.filter((k) => inventory.some((d) => d.kind === k));
  const excluded = req.excludeIds;
  const candidates = req.deviceIds
    ? inventory.filter((d) => kinds.includes(d.kind) && req.deviceIds!.includes(d.id))
    : inventory.filter((d) => kinds.includes(d.kind) && !(excluded && excluded.includes(d.id)));
  const what = kinds.length === 1 ? `${KIND_LABEL[kinds[0]!]} device` : 'device';
  const needs = `needs a slice of ${formatSize(share.mem)}, ${share.compute}% on ${req.count} ${what}${req.count === 1 ? '' : 's'}`;
  const parts: string[] = [];
  for (const d of candidates) {
    const c = book.card(deviceKey(d));
    if (!c) { parts.push(`${deviceLabel(d)} ${blocked(d)}`); continue; }
    const room = roomOf(c);
    const foreign = c.free < c.total - c.sliced ? ' (memory in use by processes not started by xlurm counts)' : '';
    parts.push(`${deviceLabel(d)} has ${formatSize(room)}, ${100 - c.compute}% left${c.slices ? ` beside ${c.slices} slice${c.slices === 1 ? '' : 's'}` : ''}${room < share.mem ? foreign : ''}`);
  }
  return { code: candidates.length ? 'Resources' : 'DevicesUnavailable', message: parts.length ? `${needs}: ${parts.join(', ')}` : `${needs}; no pool has such devices` };
}
