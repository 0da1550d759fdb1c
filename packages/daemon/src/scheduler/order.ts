/**
 * The order step: who is considered first (docs/behaviour.md §21.1, §22).
 *
 * Across users: admin priority high first, then nice low first, then (fair
 * share on) the owner's decayed usage low first, then requested device count
 * high first (the reference's rule), then submission order (id). Within one
 * owner's jobs the same, except that a job moved by `xlurm top` comes before
 * the owner's other jobs of its priority (the latest moved first): it never
 * passes another user's job, because the owners' queues are merged by their
 * heads' keys (`merge`), and a moved job is compared there by its own key.
 * Without moved jobs the merge is exactly the sort by the cross-user key.
 *
 * Usage is an input (the owner name → decayed device-seconds, made by
 * accounting/usage.ts before the pass): the step reads no clock or store.
 *
 * The daemon's queue keeps each owner's jobs in buckets of the within-owner
 * key (pending-jobs.ts), so a pass merges a few sorted lists lazily instead
 * of sorting the queue: usage changes between passes, so a key that contains
 * it cannot be kept in one sorted list, but it is one number per owner, read
 * only when the merge compares two owners' heads.
 */
import type { PendingJob } from './pending-job';

/** Owner name → decayed usage; a missing owner has none. */
export type UsageOf = ReadonlyMap<string, number>;

/**
 * The cross-user key, field by field (numbers only: the merge calls this for
 * every job it yields). Negative when `a` goes first.
 */
export function compareKeys(
  pa: number, na: number, ua: number, ca: number, ida: number,
  pb: number, nb: number, ub: number, cb: number, idb: number,
): number {
  return pb - pa || na - nb || ua - ub || cb - ca || ida - idb;
}

const usageOf = (u: UsageOf | undefined, owner: string | undefined) => (u && owner !== undefined ? u.get(owner) ?? 0 : 0);

/** The order between two pending jobs of different owners (or with no moved job): negative when `a` is considered first. */
export function compareJobs(a: PendingJob, b: PendingJob, usage?: UsageOf): number {
  return compareKeys(
    a.priority ?? 0, a.nice ?? 0, usageOf(usage, a.owner), a.count, a.id,
    b.priority ?? 0, b.nice ?? 0, usageOf(usage, b.owner), b.count, b.id,
  );
}

/** Within one owner's jobs: priority, then moved (`xlurm top`, latest first), then nice, count, id. */
export function compareWithinOwner(a: PendingJob, b: PendingJob): number {
  return (b.priority ?? 0) - (a.priority ?? 0) || (b.top ?? 0) - (a.top ?? 0) ||
    (a.nice ?? 0) - (b.nice ?? 0) || b.count - a.count || a.id - b.id;
}

/** One owner's jobs in their order, and the owner's usage. */
export interface OwnerSource<J> { usage: number; jobs: Iterator<J> }

/**
 * Merge owners' ordered jobs lazily: each step yields the head with the
 * smallest cross-user key (`cmp(a, usageA, b, usageB)`), through a binary
 * heap of the owners (100 owners: about 7 comparisons per job).
 */
export function* merge<J>(sources: Iterable<OwnerSource<J>>, cmp: (a: J, ua: number, b: J, ub: number) => number): Generator<J> {
  const heads: J[] = [];
  const us: number[] = [];
  const its: Iterator<J>[] = [];
  for (const s of sources) {
    const r = s.jobs.next();
    if (r.done) continue;
    heads.push(r.value); us.push(s.usage); its.push(s.jobs);
  }
  const n0 = heads.length;
  if (n0 === 0) return;
  if (n0 === 1) {
    yield heads[0]!;
    for (let r = its[0]!.next(); !r.done; r = its[0]!.next()) yield r.value;
    return;
  }
  // heap[i] = index of a source; ordered by its head.
  const heap = Array.from({ length: n0 }, (_, i) => i);
  let size = n0;
  const less = (x: number, y: number) => cmp(heads[x]!, us[x]!, heads[y]!, us[y]!) < 0;
  const down = (i: number) => {
    const v = heap[i]!;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && less(heap[c + 1]!, heap[c]!)) c++;
      if (!less(heap[c]!, v)) break;
      heap[i] = heap[c]!;
      i = c;
    }
    heap[i] = v;
  };
  for (let i = (size >> 1) - 1; i >= 0; i--) down(i);
  while (size > 0) {
    const s = heap[0]!;
    yield heads[s]!;
    const r = its[s]!.next();
    if (r.done) { heap[0] = heap[--size]!; } else heads[s] = r.value;
    if (size > 0) down(0);
  }
}

/**
 * The jobs in the order the pass considers them. An array (tests, the
 * simulator) is ordered here: returned as it is when already in order and
 * nothing was moved (one cheap check), else grouped by owner and merged.
 * Any other iterable is the daemon's queue, trusted to be in order.
 */
export function order<J extends PendingJob>(pending: Iterable<J>, usage?: UsageOf): Iterable<J> {
  if (!Array.isArray(pending)) return pending;
  const a = pending as readonly J[];
  let sorted = true;
  for (let i = 0; i < a.length; i++) {
    if (a[i]!.top || (i > 0 && compareJobs(a[i - 1]!, a[i]!, usage) > 0)) { sorted = false; break; }
  }
  if (sorted) return a;
  const owners = new Map<string, J[]>();
  for (const j of a) {
    const k = j.owner ?? '';
    let l = owners.get(k);
    if (!l) owners.set(k, l = []);
    l.push(j);
  }
  const sources: OwnerSource<J>[] = [];
  for (const [k, l] of owners) sources.push({ usage: usageOf(usage, k), jobs: l.sort(compareWithinOwner)[Symbol.iterator]() });
  return [...merge(sources, (x, ux, y, uy) => compareKeys(
    x.priority ?? 0, x.nice ?? 0, ux, x.count, x.id, y.priority ?? 0, y.nice ?? 0, uy, y.count, y.id,
  ))];
}

/**
 * The bucket key within one owner's queue (pending-jobs.ts): buckets are
 * walked in ascending `compareBuckets` order, each in id order, which is
 * compareWithinOwner's order.
 */
export interface BucketKey { priority: number; top: number; nice: number; count: number }

export function compareBuckets(a: BucketKey, b: BucketKey): number {
  return b.priority - a.priority || b.top - a.top || a.nice - b.nice || b.count - a.count;
}

/** The queue's bucket key of a job asking for `count` devices with no priority, nice or move. */
export function pendingOrderBucket(count: number): number {
  return -count;
}
