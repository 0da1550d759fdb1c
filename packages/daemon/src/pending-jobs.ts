/**
 * The PENDING jobs in submission order (the Map's own order), also kept in
 * the scheduling order (scheduler/order.ts): one queue per owner, in buckets
 * of the within-owner key (priority, `xlurm top`, nice, count), each in id
 * order; `ordered()` merges the owners' queues lazily by their heads, with
 * the owners' fair-share usage of the moment, so a key that changes with
 * usage needs no re-sort. It counts the jobs per requested count (CPU-only
 * ones too) and per owner: a scheduling pass over a long queue can then stop
 * as soon as no job left could fit, instead of walking every pending job
 * (10k of them: milliseconds per pass), and Core refuses a submission over a
 * user's pending_jobs limit without a scan.
 *
 * It also keeps each pending job's reason (docs/behaviour.md §20.4) without
 * work per job per pass: a pass hands over its reasonOf (explain), and a
 * job's `reason` asks the latest pass when it is read. A job that entered
 * the queue after that pass has not been considered yet: null.
 */
import type { Reason } from '@xlurm/protocol';
import type { Pass, PendingJob } from './scheduler/schedule';
import type { QueueWalk } from './scheduler/pending-job';
import { compareBuckets, compareKeys, type BucketKey, type UsageOf } from './scheduler/order';
import type { StoredJob } from './store/store';

/**
 * A pending job as the scheduler sees it (protocol's requestOf, plus who it
 * is). Built as one literal so every such object has the same shape: the
 * steps then stay fast on a queue of 10k (a spread costs ~10x).
 */
export function pendingJob(j: StoredJob): PendingJob {
  const s = j.spec;
  return {
    id: j.id, owner: j.owner.name, count: s.count, kind: s.kind ?? null, timeLimit: s.time_limit ?? null,
    cpus: s.cpus ?? 0, mem: s.mem ?? 0,
    deviceIds: s.device_ids, excludeIds: s.exclude_ids, groupAffinity: s.group_affinity ?? undefined,
    uid: j.owner.uid, priority: j.priority ?? 0, nice: s.nice ?? 0, top: j.top ?? 0,
    arrayId: j.array?.id, throttle: j.array?.throttle ?? undefined,
    share: s.share ?? undefined,
  };
}

/**
 * Where a queued job's reason is read: its queue, and how many passes that
 * queue had run when it entered. A property of the job under a symbol, not a
 * WeakMap entry: every major GC walks a WeakMap's entries as ephemerons, and
 * with 10k queued jobs that showed as multi-millisecond pauses inside
 * scheduling passes.
 */
const QUEUED = Symbol('queued');
/** The order bucket a queued job is in (so a changed key finds the old one). */
const BUCKET = Symbol('bucket');
interface Queued { queue: PendingJobs; since: number }
type QueuedJob = StoredJob & { [QUEUED]?: Queued | undefined; [BUCKET]?: Bucket | undefined };

/**
 * A queued job's `reason`: an accessor, so that toWireJob, toSummary and
 * followers all read the current reason without a write per job per pass.
 * One descriptor (one getter function) for every job: a getter per job
 * would give each job object its own hidden class, and V8's property
 * access on every job object would slow down by orders of magnitude.
 */
const QUEUED_REASON: PropertyDescriptor = {
  get(this: StoredJob): Reason | null {
    return (this as QueuedJob)[QUEUED]?.queue.reasonOf(this) ?? null;
  },
  enumerable: true, configurable: true,
};
const NO_REASON: PropertyDescriptor = { value: null, writable: true, enumerable: true, configurable: true };

/** The jobs of one order bucket, in id order once `sorted`. */
interface Bucket extends BucketKey { jobs: Map<number, StoredJob>; maxId: number; sorted: boolean; name: string }

/** One owner's pending jobs, in buckets of the within-owner key (scheduler/order.ts). */
interface OwnerQueue { name: string; size: number; buckets: Map<string, Bucket>; keys: Bucket[] }

/** A job's key within its owner's queue. */
function keyOf(j: StoredJob): BucketKey {
  return { priority: j.priority ?? 0, top: j.top ?? 0, nice: j.spec.nice ?? 0, count: j.spec.count };
}

const bucketName = (k: BucketKey) => `${k.priority},${k.top},${k.nice},${k.count}`;

export class PendingJobs extends Map<number, StoredJob> {
  /** Pending jobs with count 0. */
  cpuOnly = 0;
  private latest: Pass['reasonOf'] | undefined;
  private passes = 0;
  /** Each owner's queue, by uid. */
  private owners = new Map<number, OwnerQueue>();
  /** Pending jobs per requested device count (few distinct counts). */
  private readonly byCount = new Map<number, number>();

  override set(id: number, j: StoredJob): this {
    const old = super.get(id);
    if (old) this.unbucket(old);
    this.bucket(j);
    const q = j as QueuedJob;
    if (q[QUEUED]?.queue !== this) {
      q[QUEUED] = { queue: this, since: this.passes };
      Object.defineProperty(j, 'reason', QUEUED_REASON);
    }
    return super.set(id, j);
  }

  override delete(id: number): boolean {
    const old = super.get(id);
    if (old) {
      this.unbucket(old);
      (old as QueuedJob)[QUEUED] = undefined;
      Object.defineProperty(old, 'reason', NO_REASON);
    }
    return super.delete(id);
  }

  /** Empties the map only; the jobs keep their reasons (a re-sort sets them again at once). */
  override clear(): void {
    this.cpuOnly = 0;
    this.owners.clear();
    this.byCount.clear();
    super.clear();
  }

  /** How many pending jobs the owner with this uid has (docs/behaviour.md §22.4, pending_jobs). */
  countOf(uid: number): number { return this.owners.get(uid)?.size ?? 0; }

  /** Pending jobs per requested device count (the scheduler's early stop). */
  countsBySize(): ReadonlyMap<number, number> { return this.byCount; }

  /** How many pending jobs ask for at least `n` devices. */
  countAtLeast(n: number): number {
    let sum = 0;
    for (const [c, k] of this.byCount) if (c >= n) sum += k;
    return sum;
  }

  /**
   * A queued job's order key changed (priority, nice, `xlurm top`): put it in
   * its new place. Call with the job as it was before the change applied to
   * `change`, which changes it.
   */
  rekey(j: StoredJob, change: () => void): void {
    const queued = super.get(j.id) === j;
    if (queued) this.unbucket(j);
    change();
    if (queued) this.bucket(j);
  }

  /** Mark a queued job as moved by `xlurm top` with sequence number `seq`. */
  setTop(j: StoredJob, seq: number): void { this.rekey(j, () => { j.top = seq; }); }

  /** A job's `xlurm top` sequence number (0: not moved). */
  topOf(j: StoredJob): number { return j.top ?? 0; }

  /**
   * The pending jobs in scheduling order (scheduler/order.ts), lazily: a
   * pass may stop early. Each owner's queue is kept in order (no sort per
   * pass: a bucket is re-sorted only after a job entered it out of id order,
   * a deferred start going back); the owners are merged by their heads,
   * with `usage` (owner name → decayed usage; absent: fair share off).
   */
  ordered(usage?: UsageOf): IterableIterator<StoredJob> & QueueWalk {
    return new OrderedWalk(this.owners.values(), usage);
  }

  /** `ordered`, as the scheduler sees the jobs (pendingJob), lazily. */
  requests(usage?: UsageOf): IterableIterator<PendingJob> & QueueWalk {
    const walk = this.ordered(usage);
    const r = { done: false, value: undefined as unknown as PendingJob };
    const it: IterableIterator<PendingJob> & QueueWalk = {
      [Symbol.iterator]: () => it,
      skipOwner: () => walk.skipOwner(),
      skipOwnerFrom: (count: number) => walk.skipOwnerFrom(count),
      skipArray: (id: number) => walk.skipArray(id),
      next: () => {
        const n = walk.next();
        if (n.done) return { done: true, value: undefined };
        r.value = pendingJob(n.value);
        return r;
      },
    };
    return it;
  }

  private bucket(j: StoredJob): void {
    if (j.spec.count === 0) this.cpuOnly++;
    this.byCount.set(j.spec.count, (this.byCount.get(j.spec.count) ?? 0) + 1);
    const uid = j.owner?.uid ?? -1;
    let o = this.owners.get(uid);
    if (!o) this.owners.set(uid, o = { name: j.owner?.name ?? '', size: 0, buckets: new Map(), keys: [] });
    o.size++;
    const k = keyOf(j);
    const name = bucketName(k);
    let b = o.buckets.get(name);
    if (!b) {
      b = { ...k, name, jobs: new Map(), maxId: 0, sorted: true };
      o.buckets.set(name, b);
      // Few distinct keys per owner: a sorted insert is cheap.
      let i = 0;
      while (i < o.keys.length && compareBuckets(o.keys[i]!, b) < 0) i++;
      o.keys.splice(i, 0, b);
    }
    if (j.id < b.maxId) b.sorted = false; else b.maxId = j.id;
    b.jobs.set(j.id, j);
    (j as QueuedJob)[BUCKET] = b;
  }

  private unbucket(j: StoredJob): void {
    const b = (j as QueuedJob)[BUCKET];
    if (!b || !b.jobs.delete(j.id)) return;
    (j as QueuedJob)[BUCKET] = undefined;
    if (j.spec.count === 0) this.cpuOnly--;
    const n = (this.byCount.get(j.spec.count) ?? 1) - 1;
    if (n) this.byCount.set(j.spec.count, n); else this.byCount.delete(j.spec.count);
    const uid = j.owner?.uid ?? -1;
    const o = this.owners.get(uid);
    if (!o) return;
    o.size--;
    if (b.jobs.size === 0) {
      o.buckets.delete(b.name);
      o.keys.splice(o.keys.indexOf(b), 1);
    }
    if (o.size === 0) this.owners.delete(uid);
  }

  /** A scheduling pass over every job now pending has finished: its reasons are theirs. */
  explain(reasonOf: Pass['reasonOf']): void {
    this.latest = reasonOf;
    this.passes++;
  }

  /** What a queued job's `reason` reads: the latest pass's, or null until a pass has considered it. */
  reasonOf(j: StoredJob): Reason | null {
    const q = (j as QueuedJob)[QUEUED];
    if (!q || q.queue !== this || j.state !== 'PENDING' || q.since === this.passes || !this.latest) return null;
    return this.latest(pendingJob(j));
  }
}

/**
 * One owner's jobs in order, bucket by bucket (each in id order), with the
 * cross-user key of its head kept as numbers: the merge compares these
 * without touching the jobs.
 */
class Cursor {
  head: StoredJob | undefined;
  p = 0; n = 0; c = 0; id = 0;
  /** Skipped for the rest of this walk (OrderedWalk.skipOwner). */
  dead = false;
  /** Jobs asking for this many devices or more are skipped for the rest of this walk (OrderedWalk.skipOwnerFrom). */
  maxCount = Infinity;
  private bi = -1;
  // The current bucket's jobs as an array (one native copy per bucket reached:
  // stepping a Map's iterator allocates a result per job).
  private jobs: StoredJob[] = [];
  private k = 0;
  /** `deadArrays`: the walk's skipped arrays (OrderedWalk.skipArray), shared by its cursors. */
  constructor(private readonly o: OwnerQueue, readonly usage: number, private readonly deadArrays: ReadonlySet<number>) { this.advance(); }

  /**
   * Where the current bucket's jobs go on after the run of array `a`'s tasks
   * from `k`: the tasks of an array have the ids id..id+count-1 (one
   * transaction), so the run ends at the first job with a larger id, found
   * by bisection: skipping 10k tasks costs no walk over them.
   */
  private pastArray(a: { id: number; count: number }): number {
    const jobs = this.jobs;
    const end = a.id + a.count;
    let lo = this.k; let hi = jobs.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (jobs[mid]!.id < end) lo = mid + 1; else hi = mid; }
    return lo;
  }

  /** Is the head one this walk now skips? */
  stale(): boolean {
    const j = this.head;
    return !!j && (this.c >= this.maxCount || (this.deadArrays.size > 0 && j.array != null && this.deadArrays.has(j.array.id)));
  }

  /** Move to the next job not skipped; false when the owner has none left. */
  advance(): boolean {
    for (;;) {
      const j = this.jobs[this.k++];
      if (j) {
        // The bucket's count is over the owner's device room: none of its jobs (skipped at once, whatever its size).
        if (this.c >= this.maxCount) { this.k = this.jobs.length; continue; }
        if (this.deadArrays.size > 0 && j.array != null && this.deadArrays.has(j.array.id)) { this.k = this.pastArray(j.array); continue; }
        this.head = j; this.id = j.id; return true;
      }
      const b = this.o.keys[++this.bi];
      if (!b) { this.head = undefined; return false; }
      if (b.count >= this.maxCount) { this.jobs = NO_JOBS; this.k = 0; continue; } // a bucket skipped whole
      if (!b.sorted) {
        b.jobs = new Map([...b.jobs].sort((x, y) => x[0] - y[0]));
        b.sorted = true;
      }
      this.p = b.priority; this.n = b.nice; this.c = b.count;
      this.jobs = Array.from(b.jobs.values());
      this.k = 0;
    }
  }
}

const NO_JOBS: StoredJob[] = [];

const before = (a: Cursor, b: Cursor) => compareKeys(a.p, a.n, a.usage, a.c, a.id, b.p, b.n, b.usage, b.c, b.id) < 0;

/**
 * The owners' queues merged by their heads (scheduler/order.ts's cross-user
 * key) through a binary heap: about log2(owners) comparisons of numbers per
 * job. An iterator object rather than a generator: a pass may pull 10k jobs
 * through it, and each generator step costs several times a plain call.
 */
class OrderedWalk implements IterableIterator<StoredJob>, QueueWalk {
  private readonly heap: Cursor[] = [];
  private readonly result: IteratorResult<StoredJob> = { done: false, value: undefined as unknown as StoredJob };
  /** Arrays skipped for the rest of this walk (skipArray). */
  private readonly deadArrays = new Set<number>();

  constructor(owners: Iterable<OwnerQueue>, usage: UsageOf | undefined) {
    for (const o of owners) {
      const c = new Cursor(o, usage?.get(o.name) ?? 0, this.deadArrays);
      if (c.head) this.heap.push(c);
    }
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  [Symbol.iterator](): IterableIterator<StoredJob> { return this; }

  /** The owner of the job yielded last: skipOwner() drops the rest of its queue from this walk. */
  private last: Cursor | undefined;

  /**
   * Skip the rest of the last job's owner in this walk: the pass found the
   * owner at a limit that none of their later jobs can pass either (running
   * jobs, docs/behaviour.md §22.4). Their reasons still come from the pass's
   * end state.
   */
  skipOwner(): void { if (this.last) this.last.dead = true; }

  /**
   * Skip the last job's owner's jobs that ask for `count` devices or more:
   * the owner's device limit leaves room for fewer (docs/behaviour.md §22.4),
   * and their holding only grows in a pass. Whole buckets go at once (the
   * count is part of a bucket's key), so this costs per bucket, not per job.
   */
  skipOwnerFrom(count: number): void { if (this.last) this.last.maxCount = Math.min(this.last.maxCount, count); }

  /**
   * Skip the rest of array `id`'s tasks: its throttle is reached
   * (docs/behaviour.md §23.2), and its running tasks only grow in a pass. A
   * task of it met later is passed over without leaving the queue's cursor.
   */
  skipArray(id: number): void { this.deadArrays.add(id); }

  next(): IteratorResult<StoredJob> {
    const h = this.heap;
    // Heads a skip made stale move on (their key only grows: a sift down
    // keeps the heap); a skipped or spent owner leaves it. Other owners'
    // stale heads are dealt with when they reach the top.
    while (h.length) {
      const t = h[0]!;
      if (!t.dead && !t.stale()) break;
      if (!t.dead && t.advance()) { this.down(0); continue; }
      const last = h.pop()!;
      if (h.length === 0) break;
      h[0] = last;
      this.down(0);
    }
    const top = h[0];
    if (!top) return { done: true, value: undefined };
    this.last = top;
    const r = this.result as { done: false; value: StoredJob };
    r.value = top.head!;
    if (!top.advance()) {
      const last = h.pop()!;
      if (h.length === 0) return r;
      h[0] = last;
    }
    if (h.length > 1) this.down(0);
    return r;
  }

  private down(i: number): void {
    const h = this.heap;
    const v = h[i]!;
    const size = h.length;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && before(h[c + 1]!, h[c]!)) c++;
      if (!before(h[c]!, v)) break;
      h[i] = h[c]!;
      i = c;
    }
    h[i] = v;
  }
}
