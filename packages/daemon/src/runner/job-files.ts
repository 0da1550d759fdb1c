/**
 * Every file a job has under `jobs/`, in one place for the daemon: their names (made by
 * protocol's jobPaths, which the CLI shares for the log; this module is its only user in the
 * daemon), what the daemon writes into them (the lock's mark, the cancel marker, the spec where
 * no memfd can be had), how the supervisor's result is read, and how they are all removed.
 *
 * The supervisor (native/src/stepd) names no file itself: it is handed the result and cancel
 * paths in its spec, the lock and the log as descriptors, and derives the result's temporary
 * name from the result path exactly as `temp` makes it (`<id>.tmp.<pid>`; result.c).
 * test/unit/daemon/runner/job-files.ts runs a real supervisor and fails if the names differ.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Outcome } from '@xlurm/protocol';
import { TERMINAL_STATES, jobPaths, parseJobFileName, statePaths } from '@xlurm/protocol';
import { flockExclusive, memfd } from '@xlurm/native';

export type JobPaths = ReturnType<typeof jobPaths>;

/**
 * What prepare writes into a new lock file. The supervisor overwrites it with "started\n"
 * right before it starts the payload (native/src/stepd/supervisor.c), so a free lock that
 * still holds this mark proves the payload never ran (see liveness.ts).
 */
export const SPAWN_MARK = 'spawn\n';
/** The cancel marker's content (docs/behaviour.md §5.4: JSON `true`). */
const CANCEL_MARK = 'true\n';

/** What the result file says: an outcome, nothing (no file), or something that is not a result. */
export type ResultRead = Outcome | 'missing' | 'malformed';

/** The job's log (streamed to clients by handlers/log-stream.ts). */
export function jobLogPath(home: string, id: number): string { return jobPaths(home, id).log; }

/** Is `name` (an entry of `jobs/`) a job's log? (`xlurm clean` removes exactly those.) */
export function isJobLog(name: string): boolean { return parseJobFileName(name)?.kind === 'log'; }

/** Does a live supervisor hold this lock file? (Missing: no.) */
export function lockHeld(file: string): boolean {
  // Usually missing (a job's first start), which stat answers without the
  // exception a failed open throws (an Error with its stack, per job start).
  if (!fs.statSync(file, { throwIfNoEntry: false })) return false;
  let fd = -1;
  try {
    fd = fs.openSync(file, fs.constants.O_RDWR);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
  try { return !flockExclusive(fd); } finally { fs.closeSync(fd); }
}

function unlinkIfPresent(file: string): void {
  try { fs.unlinkSync(file); } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

export class JobFiles {
  /** Whether memfd_create works here (false once it is refused for good: then spec files are used). */
  private memfdWorks = true;

  constructor(readonly home: string) {}

  paths(id: number): JobPaths { return jobPaths(this.home, id); }

  /**
   * The job's log, opened for appending (created 0600): the supervisor's fds 1 and 2. `jobs/`
   * is root's, mode 0700 (state-dir.ts), so no user names anything in it; O_NOFOLLOW anyway
   * (extensions 28.1): a link there is never followed.
   */
  openLog(id: number): number {
    return fs.openSync(this.paths(id).log, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600);
  }

  /**
   * A descriptor, at offset 0, of a file holding exactly `spec` that no one
   * else can open: a memfd (no inode on disk, no directory entry: creating a
   * file in XLURM_HOME cost 10-300 us per job here), else the job's spec file
   * written with mode 0600 and unlinked. Throws (and leaves no file) on failure.
   */
  openSpec(id: number, spec: Buffer): number {
    if (this.memfdWorks) {
      let fd = -1;
      try {
        fd = memfd('xlurm-spec');
        // Positional writes leave the offset at 0, where the supervisor starts reading.
        for (let at = 0; at < spec.length;) at += fs.writeSync(fd, spec, at, spec.length - at, at);
        return fd;
      } catch (e) {
        if (fd >= 0) fs.closeSync(fd);
        // No memfd here (an old kernel, or a seccomp filter that refuses it): files from now on.
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'ENOSYS' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'EACCES') throw e;
        this.memfdWorks = false;
      }
    }
    const file = this.paths(id).spec;
    try {
      fs.writeFileSync(file, spec, { mode: 0o600 });
      return fs.openSync(file, 'r');
    } finally {
      try { fs.unlinkSync(file); } catch { /* not written */ }
    }
  }

  /**
   * The job's lock file, complete before it appears under its name: made
   * under `lockNew`, holding SPAWN_MARK, flock'ed (a new inode: nobody else
   * can hold it), then renamed. One that does not exist means this point was
   * never reached; one that still says SPAWN_MARK means the supervisor never
   * started the payload. Returns the locked descriptor; throws `worker already
   * running` when a live supervisor holds the job's lock, and leaves no
   * `lockNew` behind either way.
   */
  createLock(id: number): number {
    const p = this.paths(id);
    let fd = -1;
    let renamed = false;
    try {
      fd = fs.openSync(p.lockNew, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o600);
      fs.writeSync(fd, SPAWN_MARK, 0);
      flockExclusive(fd);
      if (lockHeld(p.lock)) throw new Error('worker already running');
      fs.renameSync(p.lockNew, p.lock);
      renamed = true;
      return fd;
    } catch (e) {
      if (fd >= 0) fs.closeSync(fd);
      throw e;
    } finally {
      if (!renamed) { try { fs.unlinkSync(p.lockNew); } catch { /* never created */ } }
    }
  }

  /** Write the cancel marker atomically: temporary file (0600), fsync, rename, fsync of `jobs/`. */
  writeCancel(id: number): void {
    const p = this.paths(id);
    const tmp = p.temp(process.pid);
    const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o600);
    try {
      try {
        fs.writeSync(fd, CANCEL_MARK);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, p.cancel);
    } catch (e) {
      try { fs.unlinkSync(tmp); } catch { /* never created or already gone */ }
      throw e;
    }
    const dfd = fs.openSync(path.dirname(p.cancel), 'r');
    try { fs.fsyncSync(dfd); } finally { fs.closeSync(dfd); }
  }

  /**
   * The supervisor's result (one line of JSON, native/src/stepd/result.c). Throws when the file
   * exists but cannot be read now (no free descriptor): that is never taken for a missing one.
   */
  readResult(id: number): ResultRead {
    let text: string;
    try {
      text = fs.readFileSync(this.paths(id).result, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      return 'missing';
    }
    try {
      const o = JSON.parse(text) as Outcome;
      if (!(TERMINAL_STATES as readonly string[]).includes(o.state) || !Number.isInteger(o.exit_code) || !Number.isInteger(o.finished_at)) return 'malformed';
      const out: Outcome = { state: o.state, exit_code: o.exit_code, finished_at: o.finished_at, error: typeof o.error === 'string' ? o.error : null };
      // What the job's cgroup measured, where it had one (docs/behaviour.md §24.5).
      if (Number.isSafeInteger(o.peak_memory) && o.peak_memory! >= 0) out.peak_memory = o.peak_memory!;
      if (typeof o.cpu_seconds === 'number' && Number.isFinite(o.cpu_seconds) && o.cpu_seconds >= 0) out.cpu_seconds = o.cpu_seconds;
      return out;
    } catch {
      return 'malformed';
    }
  }

  /**
   * Remove every file of these jobs (retention): each name jobPaths makes, and the temporary
   * files of atomic writes that a killed writer left. Throws on the first file that cannot
   * be removed (the caller keeps the jobs' rows, and the next pass retries).
   */
  remove(ids: readonly number[]): void {
    const wanted = new Set(ids);
    let temps: string[] = [];
    const dir = statePaths(this.home).jobs;
    try {
      temps = fs.readdirSync(dir).filter((f) => {
        const k = parseJobFileName(f);
        return k?.kind === 'temp' && wanted.has(k.id);
      });
    } catch { temps = []; }
    for (const id of ids) {
      const p = this.paths(id);
      // spec and lockNew exist only when a daemon died between creating and unlinking or renaming them.
      for (const f of [p.log, p.lock, p.lockNew, p.result, p.cancel, p.limit, p.snapshot, p.spec]) unlinkIfPresent(f);
      // A notification's result (runner/notify.ts), left only by a daemon gone before it was removed.
      unlinkIfPresent(p.result.replace(/\.result$/, '.notify.result'));
    }
    for (const f of temps) unlinkIfPresent(path.join(dir, f));
  }
}
