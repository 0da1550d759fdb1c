import type { JobRequest } from '@xlurm/protocol';

/** A PENDING job as every step sees it: what it asks for, and who it is. */
export interface PendingJob extends JobRequest {
  id: number;
  /** The owner's account name, for the reasons of jobs that wait for this one's devices. */
  owner?: string;
  /** The owner's uid: root's jobs are exempt from per-user limits (docs/behaviour.md §22.4). */
  uid?: number;
  /** `xlurm priority` (−1000..1000, high first); absent: 0 (docs/behaviour.md §22.1). */
  priority?: number;
  /** `--nice` (0..10000, low first); absent: 0. */
  nice?: number;
  /** `xlurm top`: a sequence number, the latest moved first among the owner's jobs; absent or 0: not moved. */
  top?: number;
  /** An array task's array id, and its `%N` throttle (docs/behaviour.md §23.2); absent: none. */
  arrayId?: number;
  throttle?: number;
}

/**
 * What a walk over the daemon's queue (pending-jobs.ts) lets a pass skip
 * once it knows none of those jobs can start in it: all of them are still
 * explained by the pass's end state (schedule.ts). Each applies to the job
 * yielded last; a plain array of jobs has none of these.
 */
export interface QueueWalk {
  /** The rest of its owner's jobs (at their running-jobs limit). */
  skipOwner(): void;
  /** Its owner's jobs asking for `count` devices or more (over their device limit). */
  skipOwnerFrom(count: number): void;
  /** The rest of array `id`'s tasks (at its throttle). */
  skipArray(id: number): void;
}
