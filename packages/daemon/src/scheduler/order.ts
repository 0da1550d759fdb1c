/**
 * The order step: who is considered first (docs/behaviour.md §21.1).
 * Requested device count high first, then submission order (id) for equal
 * counts: the reference's rule. Issue 16 puts admin priority, nice and fair
 * share ahead of the count (in `compareJobs` and in the queue's bucket key,
 * pending-jobs.ts), so this file is the one place the order is defined.
 *
 * The daemon's queue keeps its jobs in this order (buckets by count, each in
 * id order), so a pass walks it lazily and may stop early without a sort per
 * pass. schedule.ts relies on "count high first" for one early stop: once a
 * job asks for fewer than `reserve_min_devices`, no later one can reserve. A
 * key placed ahead of the count must revisit that stop.
 */
import type { PendingJob } from './pending-job';

/** The order between two pending jobs: negative when `a` is considered first. */
export function compareJobs(a: PendingJob, b: PendingJob): number {
  return b.count - a.count || a.id - b.id;
}

/**
 * The jobs in the order the pass considers them. An array (tests, the
 * simulator) is sorted when it is not in order already (one cheap check);
 * any other iterable is the daemon's queue, trusted to be in order.
 */
export function order<J extends PendingJob>(pending: Iterable<J>): Iterable<J> {
  if (!Array.isArray(pending)) return pending;
  const a = pending as readonly J[];
  for (let i = 1; i < a.length; i++) {
    if (compareJobs(a[i - 1]!, a[i]!) > 0) return [...a].sort(compareJobs);
  }
  return a;
}

/**
 * The queue's bucket key of a job asking for `count` devices: buckets are
 * walked in ascending key order, each in id order, which is compareJobs's
 * order. (Issue 16's priority and nice join this key.)
 */
export function pendingOrderBucket(count: number): number {
  return -count;
}
