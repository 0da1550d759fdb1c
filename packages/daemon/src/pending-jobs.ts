/**
 * The PENDING jobs in submission order, counting those that ask for no
 * device. A scheduling pass over a long queue can then stop as soon as no
 * device is free and no CPU-only job is left to consider, instead of walking
 * every pending job (10k of them: milliseconds per pass).
 */
import type { StoredJob } from './store/store';

export class PendingJobs extends Map<number, StoredJob> {
  /** Pending jobs with count 0. */
  cpuOnly = 0;

  override set(id: number, j: StoredJob): this {
    const old = super.get(id);
    if (old && old.spec.count === 0) this.cpuOnly--;
    if (j.spec.count === 0) this.cpuOnly++;
    return super.set(id, j);
  }

  override delete(id: number): boolean {
    const old = super.get(id);
    if (old && old.spec.count === 0) this.cpuOnly--;
    return super.delete(id);
  }

  override clear(): void {
    this.cpuOnly = 0;
    super.clear();
  }
}
