import type { JobRequest } from '@xlurm/protocol';

/** A PENDING job as every step sees it: what it asks for, and who it is. */
export interface PendingJob extends JobRequest {
  id: number;
  /** The owner's account name, for the reasons of jobs that wait for this one's devices. */
  owner?: string;
}
