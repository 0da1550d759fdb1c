/**
 * @xlurm/protocol: the only code the daemon and the clients share.
 * This entry point loads no schema library; the daemon imports
 * `@xlurm/protocol/dist/schemas` for the validators' source.
 */
export * from './version';
export * from './errors';
export * from './framing';
export * from './paths';
export * from './kinds';
export * from './duration';
export * from './size';
export * from './request';
export * from './array';
export * from './dependency';
export * from './begin-time';
export type * from './messages';
export type {
  DeviceKind, JobState, TerminalState, Device, Owner, Submission, Outcome, Job, JobSummary, ArrayRef, Reason, ReasonCode,
  DeviceStatus, DeviceView, PoolView, DaemonStatus, ConfigView, OpName, OpArgs, OpResult,
} from './schemas';
export type { ShareRow } from './schemas';
export * from './state-dir';
export * from './log-tail';
