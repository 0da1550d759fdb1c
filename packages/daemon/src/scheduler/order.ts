/**
 * The order step: who is considered first. Greedy today (docs/behaviour.md §5.2):
 * submission order, which is id order, and the pending set is kept in that
 * order, so a pass walks it lazily and may stop early. A policy that orders
 * otherwise (priority, nice, fair share, size) sorts here.
 */
import type { PendingJob } from './pending-job';

/** The jobs in the order the pass considers them (`pending` is in submission order). */
export function order<J extends PendingJob>(pending: Iterable<J>): Iterable<J> {
  return pending;
}

