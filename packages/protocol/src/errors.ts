/**
 * Stable error codes of the wire protocol. Append only: never rename or reuse
 * a code; retire one by commenting it out. `docs/errors.md` explains each.
 */
export const ERROR_CODES = [
  'INVALID_REQUEST',    // malformed frame, wrong types, unknown fields
  'UNKNOWN_OP',         // op is not one of Ops
  'MESSAGE_TOO_LARGE',  // frame over MAX_REQUEST_BYTES
  'VERSION_MISMATCH',   // client and daemon speak different protocol versions
  'UNAUTHENTICATED',    // SO_PEERCRED could not be read
  'PERMISSION_DENIED',  // caller may not see or change this job / run this op
  'NOT_ADMIN',          // stop/restart/exclude/include/reload by a non-administrator
  'FOREIGN_USER',       // non-root daemon asked to run a job for another uid
  'NO_ACCOUNT',         // caller's uid has no passwd entry
  'JOB_NOT_FOUND',
  'EMPTY_COMMAND',
  'BAD_WORKING_DIRECTORY',
  'INVALID_ARGUMENT',   // e.g. time-limit 0, duplicate device ids
  'INFEASIBLE',         // request can never fit the enabled device pool
  'JOBS_RUNNING',       // restart refused while jobs run
  'UNKNOWN_DEVICE',     // exclude/include of an id no backend has
  'JOB_ID_EXHAUSTED',
  'STORAGE',            // the state database could not be written (disk full, I/O error)
  'SHUTTING_DOWN',
  'BUSY',               // daemon at its connection limit
  'INTERNAL',
  'INVALID_CONFIG',     // the configuration file has errors (reload); one `file:line: key: problem` per line
  'RELOAD_REFUSED',     // reload would change a key that cannot change while the daemon runs
  'USER_LIMIT',         // a per-user limit refuses the submission (pending_jobs, docs/behaviour.md §22.4)
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Error carried in a `{ok: false}` response. `message` is what the CLI prints after `xlurm: `. */
export interface WireError { code: ErrorCode; message: string }

/** An error with a stable code; thrown by handlers, mapped to `{ok:false,error}` at the edge. */
export class XlurmError extends Error {
  constructor(public readonly code: ErrorCode, message: string) {
    super(message);
    this.name = 'XlurmError';
  }
  toWire(): WireError { return { code: this.code, message: this.message }; }
}
