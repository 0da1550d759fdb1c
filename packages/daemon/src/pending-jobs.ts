/**
 * The PENDING jobs in submission order, counting those that ask for no
 * device. A scheduling pass over a long queue can then stop as soon as no
 * device is free and no CPU-only job is left to consider, instead of walking
 * every pending job (10k of them: milliseconds per pass).
 *
 * It also keeps each pending job's reason (docs/behaviour.md, Pending
 * reasons) without work per job per pass: a pass hands over its reasonOf
 * (explain), and a job's `reason` asks the latest pass when it is read. A job
 * that entered the queue after that pass has not been considered yet: null.
 */
import type { Reason } from '@xlurm/protocol';
import { requestOf } from '@xlurm/protocol';
import type { Pass, PendingJob } from './scheduler/schedule';
import type { StoredJob } from './store/store';

/** A pending job as the scheduler sees it. */
export function pendingJob(j: StoredJob): PendingJob {
  return { ...requestOf(j.spec), id: j.id, owner: j.owner.name };
}

export class PendingJobs extends Map<number, StoredJob> {
  /** Pending jobs with count 0. */
  cpuOnly = 0;
  private latest: Pass['reasonOf'] | undefined;
  private passes = 0;
  /** Jobs whose `reason` reads from this queue (entered it and not left since). */
  private readonly explained = new WeakSet<StoredJob>();

  override set(id: number, j: StoredJob): this {
    const old = super.get(id);
    if (old && old.spec.count === 0) this.cpuOnly--;
    if (j.spec.count === 0) this.cpuOnly++;
    if (!this.explained.has(j)) {
      this.explained.add(j);
      const since = this.passes;
      // An accessor, so that toWireJob, toSummary and followers all read
      // the current reason without a write per job per pass.
      Object.defineProperty(j, 'reason', {
        get: (): Reason | null => (j.state !== 'PENDING' || this.passes === since || !this.latest ? null : this.latest(pendingJob(j))),
        enumerable: true, configurable: true,
      });
    }
    return super.set(id, j);
  }

  override delete(id: number): boolean {
    const old = super.get(id);
    if (old) {
      if (old.spec.count === 0) this.cpuOnly--;
      this.explained.delete(old);
      Object.defineProperty(old, 'reason', { value: null, writable: true, enumerable: true, configurable: true });
    }
    return super.delete(id);
  }

  /** Empties the map only; the jobs keep their reasons (a re-sort sets them again at once). */
  override clear(): void {
    this.cpuOnly = 0;
    super.clear();
  }

  /** A scheduling pass over every job now pending has finished: its reasons are theirs. */
  explain(reasonOf: Pass['reasonOf']): void {
    this.latest = reasonOf;
    this.passes++;
  }
}
