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
