/**
 * Client error model. Every failure ends as one of:
 *  - UsageError: argument parsing (clap-style `error: …` plus usage; exit 2);
 *  - CliError: anything else (`xlurm: <message>`; exit 1);
 *  - ExitWith: a deliberate exit status with nothing more to print (xrun).
 */

export class CliError extends Error {
  /** `code` is the daemon's wire error code when the daemon refused the request. */
  constructor(message: string, public readonly code?: string) {
    super(message);
    this.name = 'CliError';
  }
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export class ExitWith extends Error {
  constructor(public readonly status: number) {
    super(`exit ${status}`);
    this.name = 'ExitWith';
  }
}

/** strerror(3) texts for the errors a client meets, so messages read like the reference's. */
const STRERROR: Readonly<Record<string, [number, string]>> = {
  EPERM: [1, 'Operation not permitted'],
  ENOENT: [2, 'No such file or directory'],
  EINTR: [4, 'Interrupted system call'],
  EIO: [5, 'Input/output error'],
  EAGAIN: [11, 'Resource temporarily unavailable'],
  ENOMEM: [12, 'Cannot allocate memory'],
  EACCES: [13, 'Permission denied'],
  EEXIST: [17, 'File exists'],
  ENOTDIR: [20, 'Not a directory'],
  EISDIR: [21, 'Is a directory'],
  EINVAL: [22, 'Invalid argument'],
  EMFILE: [24, 'Too many open files'],
  ENOSPC: [28, 'No space left on device'],
  EROFS: [30, 'Read-only file system'],
  EPIPE: [32, 'Broken pipe'],
  ENAMETOOLONG: [36, 'File name too long'],
  ELOOP: [40, 'Too many levels of symbolic links'],
  ENOTSOCK: [88, 'Socket operation on non-socket'],
  EPROTOTYPE: [91, 'Protocol wrong type for socket'],
  ECONNRESET: [104, 'Connection reset by peer'],
  ETIMEDOUT: [110, 'Connection timed out'],
  ECONNREFUSED: [111, 'Connection refused'],
};

/** `No such file or directory (os error 2)` for a Node system error; its message otherwise. */
export function osErrorText(err: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined;
  if (e && typeof e.code === 'string' && STRERROR[e.code]) {
    const [n, text] = STRERROR[e.code]!;
    return `${text} (os error ${n})`;
  }
  if (e && typeof e.message === 'string') return e.message;
  return String(err);
}
