/**
 * The PENDING jobs in submission order (the Map's own order), also kept in
 * the scheduling order (scheduler/order.ts: buckets by requested count, high
 * first, each in id order; `ordered()`), counting those that ask for no
 * device. A scheduling pass over a long queue can then stop as soon as no
 * device is free and no CPU-only job is left to consider, instead of walking
 * every pending job (10k of them: milliseconds per pass).
 *
 * It also keeps each pending job's reason (docs/behaviour.md §20.4) without
 * work per job per pass: a pass hands over its reasonOf (explain), and a
 * job's `reason` asks the latest pass when it is read. A job that entered
 * the queue after that pass has not been considered yet: null.
 */
import type { Reason } from '@xlurm/protocol';
import type { Pass, PendingJob } from './scheduler/schedule';
import { pendingOrderBucket } from './scheduler/order';
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
    deviceIds: s.device_ids, excludeIds: s.exclude_ids, groupAffinity: s.group_affinity ?? undefined,
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
interface Queued { queue: PendingJobs; since: number }
type QueuedJob = StoredJob & { [QUEUED]?: Queued | undefined };

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
interface Bucket { jobs: Map<number, StoredJob>; maxId: number; sorted: boolean }

export class PendingJobs extends Map<number, StoredJob> {
  /** Pending jobs with count 0. */
  cpuOnly = 0;
  private latest: Pass['reasonOf'] | undefined;
  private passes = 0;
  /** The order's buckets (scheduler/order.ts), and their keys in walking order. */
  private buckets = new Map<number, Bucket>();
  private bucketKeys: number[] = [];

  override set(id: number, j: StoredJob): this {
    const old = super.get(id);
    if (old && old.spec.count === 0) this.cpuOnly--;
    if (j.spec.count === 0) this.cpuOnly++;
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
      if (old.spec.count === 0) this.cpuOnly--;
      this.unbucket(old);
      (old as QueuedJob)[QUEUED] = undefined;
      Object.defineProperty(old, 'reason', NO_REASON);
    }
    return super.delete(id);
  }

  /** Empties the map only; the jobs keep their reasons (a re-sort sets them again at once). */
  override clear(): void {
    this.cpuOnly = 0;
    this.buckets.clear();
    this.bucketKeys = [];
    super.clear();
  }

  /**
   * The pending jobs in scheduling order (scheduler/order.ts), lazily: a
   * pass may stop early. No sort per pass: a bucket is re-sorted only after
   * a job entered it out of id order (a deferred start going back).
   */
  *ordered(): Generator<StoredJob> {
    for (const key of this.bucketKeys) {
      const b = this.buckets.get(key);
      if (!b) continue;
      if (!b.sorted) {
        b.jobs = new Map([...b.jobs].sort((x, y) => x[0] - y[0]));
        b.sorted = true;
      }
      yield* b.jobs.values();
    }
  }

  private bucket(j: StoredJob): void {
    const key = pendingOrderBucket(j.spec.count);
    let b = this.buckets.get(key);
    if (!b) {
      b = { jobs: new Map(), maxId: 0, sorted: true };
      this.buckets.set(key, b);
      // Few distinct keys (device counts): a sorted insert is cheap.
      let i = 0;
      while (i < this.bucketKeys.length && this.bucketKeys[i]! < key) i++;
      this.bucketKeys.splice(i, 0, key);
    }
    if (j.id < b.maxId) b.sorted = false; else b.maxId = j.id;
    b.jobs.set(j.id, j);
  }

  private unbucket(j: StoredJob): void {
    const key = pendingOrderBucket(j.spec.count);
    const b = this.buckets.get(key);
    if (!b || !b.jobs.delete(j.id) || b.jobs.size) return;
    this.buckets.delete(key);
    this.bucketKeys.splice(this.bucketKeys.indexOf(key), 1);
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
