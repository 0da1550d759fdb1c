/**
 * One scheduling pass (spec 5.2 with the preface's event-driven change): a
 * pure function of pending jobs, the number running, the limit, and which
 * devices are free. Submission order, no reservation: a later small job may
 * overtake an earlier large one that does not fit.
 */
import type { Device } from '@xlurm/protocol';
import { allocate, deviceKey, type Request } from './allocate';

export interface PendingJob extends Request { id: number }

export interface Decision { id: number; devices: Device[] }

export interface SchedulerInput {
  pending: Iterable<PendingJob>;     // submission (id) order
  /**
   * How many of `pending` ask for no device, when the caller knows: the pass
   * then stops once no device is free and none of those is left.
   */
  cpuOnlyPending?: number;
  running: number;                   // RUNNING jobs, CPU-only included
  maxRunning: number;
  inventory: readonly Device[];
  /** Keys of devices that are idle, enabled and unallocated right now. */
  free: ReadonlySet<string>;
}

export function schedule(input: SchedulerInput): Decision[] {
  const decisions: Decision[] = [];
  let running = input.running;
  if (running >= input.maxRunning) return decisions;
  const taken = new Set<string>();
  const usable = (d: Device) => { const k = deviceKey(d); return input.free.has(k) && !taken.has(k); };
  // Free devices per vendor: a job asking for more than any pool has free
  // cannot fit, so it is skipped without allocation work (keeps a pass over a
  // long queue of large requests cheap).
  const freeOf = new Map<string, number>();
  for (const d of input.inventory) if (input.free.has(deviceKey(d))) freeOf.set(d.kind, (freeOf.get(d.kind) ?? 0) + 1);
  let mostFree = Math.max(0, ...freeOf.values());
  let cpuOnlyLeft = input.cpuOnlyPending ?? Infinity;
  for (const job of input.pending) {
    if (running >= input.maxRunning) break;
    if (mostFree === 0 && cpuOnlyLeft <= 0) break; // nothing left that could fit
    if (job.count === 0) cpuOnlyLeft--;
    if (job.count > (job.kind ? freeOf.get(job.kind) ?? 0 : mostFree)) continue;
    const devices = allocate(job, input.inventory, usable);
    if (!devices) continue;
    for (const d of devices) taken.add(deviceKey(d));
    if (devices.length) {
      freeOf.set(devices[0]!.kind, freeOf.get(devices[0]!.kind)! - devices.length);
      mostFree = Math.max(0, ...freeOf.values());
    }
    decisions.push({ id: job.id, devices });
    running++;
  }
  return decisions;
}
