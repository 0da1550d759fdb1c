/**
 * A slice's weight in fair-share usage (docs/behaviour.md §25.4): a job with
 * a slice of each of its devices is charged those devices weighted by its
 * share of their memory (8G of a 16G card: half a device-second per
 * second). Where the card's memory is not known (the library stopped
 * reporting it), a slice is charged as the whole device: never less than
 * it may have used.
 */
import type { Device } from '@xlurm/protocol';

type MemoryOf = (d: Device) => number | undefined;
let memoryOf: MemoryOf = () => undefined;

/** Where the cards' total memory is read (the daemon's device manager), set once at start-up. */
export function setCardMemory(fn: MemoryOf): void { memoryOf = fn; }

/** Device-seconds per second for a job's devices: one each, or each slice's share of its card's memory. */
export function deviceRate(devices: readonly unknown[], share: { mem: number } | null | undefined): number {
  if (!share) return devices.length;
  let rate = 0;
  for (const d of devices) {
    const total = memoryOf(d as Device);
    rate += total && total > 0 ? Math.min(1, share.mem / total) : 1;
  }
  return rate;
}
