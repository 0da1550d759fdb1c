/**
 * Starting jobs through xlurm-stepd and learning how they ended (spec 6.1,
 * 6.2). The lock on jobs/<id>.lock is the truth about liveness: it is held by
 * the supervisor's inherited descriptor for the supervisor's whole life, so a
 * restarted daemon can tell a live job (lock held) from a finished or vanished
 * one (lock free) without trusting PIDs.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import type { Outcome } from '@xlurm/protocol';
import { jobPaths } from '@xlurm/protocol';
import { canSpawnSupervisor, flockExclusive, flockUnlock, memfd, spawnSupervisorAsync } from '@xlurm/native';
import { accountFor, groupsFor } from '../accounts';
import type { StoredJob } from '../store/store';
import { encodeStepdSpec } from './stepd-spec';
import { jobArgv, jobEnv } from './job-env';
import { writeFileAtomic } from './atomic';
import { SupervisorLauncher } from './launcher';

export const VANISHED = 'executor worker disappeared without an exit result';
/** What launch writes into a job's lock file; xlurm-stepd overwrites it with "started" before it starts the payload. */
const SPAWN_MARK = 'spawn\n';
const ADOPTED_POLL_MS = 100;
/** Pause before starting another launcher after one failed or went away (jobs start directly meanwhile). */
const LAUNCHER_RETRY_MS = 1000;

export interface RunnerEvents {
  /** The supervisor is gone and its outcome is known. */
  finished(id: number, outcome: Outcome): void;
  /**
   * The supervisor could not be started for a passing reason (no free
   * descriptors or memory) and nothing ran: the job can wait and start later.
   */
  deferred(id: number, reason: string): void;
  /** The supervisor started (pid known). */
  spawned(id: number, pid: number): void;
}

/** A job whose supervisor's descriptors are ready (Runner.prepare): spec, log, log, lock. */
export interface Prepared { readonly id: number; readonly fds: [number, number, number, number] }

/** The job's owner cannot be the job's identity (the message is the job's error). */
class AccountError extends Error {}

/**
 * Errors that say "not now" (descriptors, processes, memory, a full disk for
 * the job's spec, log or lock file), not "never".
 */
const TRANSIENT = new Set(['EMFILE', 'ENFILE', 'EAGAIN', 'ENOMEM', 'ENOSPC', 'EDQUOT']);
const transient = (e: unknown) => TRANSIENT.has((e as NodeJS.ErrnoException)?.code ?? '');

/**
 * A supervisor this daemon started: kill() is safe until exited (its pid
 * cannot be reused before we reap it). pid is 0 while the spawn is still
 * under way on the thread pool; a kill() meanwhile is delivered once it is known.
 */
interface Child { pid: number; exited: boolean; kill(signal: NodeJS.Signals): void; unref(): void }

export class Runner {
  private readonly children = new Map<number, Child>();
  /**
   * posix_spawn from the addon (a vfork: no copy of the daemon's page tables,
   * a few times cheaper than child_process.spawn, which forks) where pidfds
   * exist; child_process otherwise.
   */
  private readonly nativeSpawn = canSpawnSupervisor();
  /** Jobs whose lock or result could not be opened (logged once until they can). */
  private readonly lockTrouble = new Set<number>();
  private readonly adopted = new Set<number>();
  private adoptTimer: NodeJS.Timeout | undefined;
  /** Forks supervisors (see launcher.ts); started on first use, again after a loss. */
  private launcher: SupervisorLauncher | undefined;
  /** No new launcher before this time (after one failed to start or went away). */
  private launcherRetryAt = 0;
  private stopped = false;

  constructor(
    private readonly home: string,
    private readonly stepd: string,
    private readonly switchUser: boolean,
    private readonly events: RunnerEvents,
    private readonly log: (msg: string) => void,
    private readonly now: () => number,
  ) {}

  /** Spawn the supervisor of a job already committed as RUNNING (and synced). */
  launch(job: StoredJob): void {
    const p = this.prepare(job);
    if (p) this.start(p);
  }

  /**
   * Everything of a launch but the spawn: the job's spec, log and lock file
   * (the lock taken, holding SPAWN_MARK, under its name). Done while the
   * RUNNING commit is still being synced, it keeps the file creation out of
   * the job's start-up latency; nothing runs before start(). On failure the
   * outcome is reported as launch() would and undefined is returned.
   */
  prepare(job: StoredJob): Prepared | undefined {
    const p = jobPaths(this.home, job.id);
    const specFile = p.lock.replace(/\.lock$/, '.spec');
    const fresh = `${p.lock}.new`;
    let renamed = false;
    let specFd = -1;
    let lockFd = -1;
    let logFd = -1;
    try {
      const groups = this.switchUser ? this.ownerGroups(job) : [];
      // The spec is complete before the supervisor exists: it reads it from
      // its stdin, a memfd (or, without memfd_create, an unlinked 0600 file
      // in the 0700 jobs/ directory) written in full before the spawn, so a
      // daemon that dies right after spawn(2) leaves a supervisor that still
      // runs its job (a pipe written after the spawn would leave it an empty spec).
      specFd = this.writeSpec(specFile, encodeStepdSpec({
        jobId: job.id, resultPath: p.result, cancelPath: p.cancel, uid: job.owner.uid, gid: job.owner.gid,
        ownerName: job.owner.name, groups, switchUser: this.switchUser, cwd: job.spec.cwd,
        timeLimit: job.spec.time_limit ?? 0, argv: jobArgv(job), env: jobEnv(job),
      }));
      logFd = fs.openSync(p.log, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT, 0o600);
      // The lock file last, and complete before it appears under its name:
      // one that does not exist means this point was never reached; one that
      // still says SPAWN_MARK means the supervisor never started the payload
      // (it overwrites the mark with "started" first). Either way the job
      // never ran (see adopt).
      lockFd = fs.openSync(fresh, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_TRUNC, 0o600);
      fs.writeSync(lockFd, SPAWN_MARK, 0);
      flockExclusive(lockFd); // a new inode: nobody else can hold it
      if (this.lockHeld(p.lock)) throw new Error('worker already running');
      fs.renameSync(fresh, p.lock);
      renamed = true;
      // fd 3 is the lock: the child's dup shares our open file description,
      // so the flock stays held after we close our copy (in discard).
      return { id: job.id, fds: [specFd, logFd, logFd, lockFd] };
    } catch (e) {
      for (const fd of [specFd, logFd, lockFd]) if (fd >= 0) fs.closeSync(fd);
      this.notStarted(job.id, e);
      return undefined;
    } finally {
      if (!renamed) { try { fs.unlinkSync(fresh); } catch { /* never created */ } }
    }
  }

  /** Start the supervisor of a prepared job (its RUNNING commit now synced); our descriptors are closed either way. */
  start(p: Prepared): void {
    try {
      // New session (setsid): the supervisor survives the daemon and its signals.
      const child = this.spawn(p.id, p.fds);
      if (!child) return; // an 'error' event reports it
      this.children.set(p.id, child);
      if (child.pid) this.events.spawned(p.id, child.pid);
    } catch (e) {
      this.notStarted(p.id, e);
    } finally {
      this.discard(p);
    }
  }

  /** Close a prepared job's descriptors (after start, or when it will not start now). */
  discard(p: Prepared): void {
    const [spec, log, , lock] = p.fds;
    for (const fd of [spec, log, lock]) { try { fs.closeSync(fd); } catch { /* closed */ } }
  }

  /** Nothing was spawned: a passing shortage only delays the job; anything else fails it. */
  private notStarted(id: number, e: unknown): void {
    if (transient(e)) { this.events.deferred(id, (e as Error).message); return; }
    const msg = e instanceof AccountError || (e as Error).message === 'worker already running' ? (e as Error).message
      : `cannot start process executor worker: ${(e as Error).message}`;
    this.events.finished(id, { state: 'FAILED', exit_code: 1, finished_at: this.now(), error: msg });
  }

  /** Whether memfd_create works here (false once it is refused for good: then files are used). */
  private memfdWorks = true;

  /**
   * A descriptor, at offset 0, of a file holding exactly `spec` that no one
   * else can open: a memfd (no inode on disk, no directory entry: creating a
   * file in XLURM_HOME cost 10-300 us per job here), else `file` written
   * with mode 0600 and unlinked. Throws (and leaves no file) on failure.
   */
  private writeSpec(file: string, spec: Buffer): number {
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
    try {
      fs.writeFileSync(file, spec, { mode: 0o600 });
      return fs.openSync(file, 'r');
    } finally {
      try { fs.unlinkSync(file); } catch { /* not written */ }
    }
  }

  /**
   * The owner's groups, looked up at launch (through the short-lived cache
   * of accounts.ts): a uid deleted or given to another name since submission
   * must not run the job under the new account. Resolved here, in the
   * daemon, whose NSS modules are loaded already: in the job's child the
   * same lookups cost milliseconds of dlopen per job.
   */
  private ownerGroups(job: StoredJob): number[] {
    const account = accountFor(job.owner.uid);
    if (!account || account.name !== job.owner.name) throw new AccountError("job owner's account changed since submission");
    try {
      return groupsFor(account.name, job.owner.gid);
    } catch {
      throw new AccountError('cannot resolve supplementary groups');
    }
  }

  /** Does a live supervisor hold this lock file? (Missing: no.) */
  private lockHeld(file: string): boolean {
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

  /** Start the supervisor; its end is reported through exited(). Throws (or, on the fallback, emits 'error') when it cannot start. */
  private spawn(id: number, fds: [number, number, number, number]): Child | undefined {
    const launcher = this.currentLauncher();
    if (launcher?.accepts(id)) {
      const child: Child = {
        pid: 0, exited: false, unref: () => undefined,
        // Requests are handled in order: a signal sent before the pid is known still reaches it.
        kill: (sig) => { if (!child.exited) launcher.signal(id, sig); },
      };
      try {
        launcher.spawn(id, fds, {
          onSpawned: (err, pid) => {
            if (err) { this.children.delete(id); this.spawnFailed(id, err); return; }
            if (pid === 0) { this.children.delete(id); this.adopt([id]); return; } // not tracked: watch the lock
            child.pid = pid;
            this.events.spawned(id, pid);
          },
          onExit: () => { child.exited = true; this.exited(id); },
        });
        return child;
      } catch (e) {
        // A full socket (the launcher is not keeping up) only delays the job; a broken one
        // means the launcher is going away: start this job directly.
        if (transient(e) || (e as NodeJS.ErrnoException).code === 'ENOBUFS') throw e;
      }
    }
    if (this.nativeSpawn) {
      let pendingSignal: NodeJS.Signals | undefined;
      const child: Child = {
        pid: 0, exited: false, unref: () => undefined,
        kill: (sig) => { if (child.exited) return; if (child.pid) process.kill(child.pid, sig); else pendingSignal = sig; },
      };
      // posix_spawn runs on the thread pool; our descriptors are copied
      // before this returns, so launch() may close its own.
      spawnSupervisorAsync(this.stepd, fds, (err, pid) => {
        if (err || !pid) {
          this.children.delete(id);
          this.spawnFailed(id, err ?? new Error('no pid'));
          return;
        }
        child.pid = pid;
        this.events.spawned(id, pid);
        if (pendingSignal) child.kill(pendingSignal);
      }, () => { child.exited = true; this.exited(id); });
      return child;
    }
    const cp = spawn(this.stepd, [], { stdio: fds, detached: true, env: {}, cwd: '/' });
    // First, before anything can throw: a failed spawn(2) (EMFILE, ENOENT)
    // is reported by an 'error' event, which must never go unhandled.
    cp.on('error', (e) => this.spawnFailed(id, e));
    if (cp.pid === undefined) return undefined;
    const child: Child = {
      pid: cp.pid,
      get exited() { return cp.exitCode !== null || cp.signalCode !== null; },
      kill: (sig) => { cp.kill(sig); },
      unref: () => cp.unref(),
    };
    cp.once('exit', () => this.exited(id));
    return child;
  }

  /** The launcher to use now, starting one if none runs (and none failed in the last second). */
  private currentLauncher(): SupervisorLauncher | undefined {
    if (this.launcher?.alive) return this.launcher;
    const now = Date.now();
    if (this.stopped || now < this.launcherRetryAt) return undefined;
    this.launcher = SupervisorLauncher.start(this.stepd, this.log, (ids) => this.launcherLost(ids));
    if (!this.launcher) this.launcherRetryAt = now + LAUNCHER_RETRY_MS;
    return this.launcher;
  }

  /**
   * The launcher went away (killed, or crashed) owing answers for these jobs. Each job's
   * supervisor may or may not have been forked; its lock tells, as after a daemon restart
   * (in the same boot, so the lock's mark can be trusted): a free lock that still says
   * SPAWN_MARK with no result means nothing ran (the job waits for a new start), anything
   * else is watched through the lock.
   */
  private launcherLost(ids: number[]): void {
    this.launcherRetryAt = Date.now() + LAUNCHER_RETRY_MS;
    this.log(ids.length ? `supervisor launcher exited; watching ${ids.length} job(s) through their locks` : 'supervisor launcher exited');
    for (const id of ids) {
      this.children.delete(id);
      if (!this.neverStarted(id, 'the supervisor launcher')) this.adopt([id]);
    }
  }

  /** The supervisor is gone: collect its result (or keep watching if the lock cannot be opened now). */
  private exited(id: number): void {
    this.children.delete(id);
    if (!this.collect(id)) this.adopt([id]);
  }

  private spawnFailed(id: number, e: Error): void {
    if (this.children.get(id)?.pid) return; // an error after a successful spawn (e.g. kill failure)
    // spawn(2) never happened (no pid): a passing shortage only delays the job.
    if (transient(e)) { this.events.deferred(id, e.message); return; }
    this.events.finished(id, { state: 'FAILED', exit_code: 1, finished_at: this.now(), error: `cannot start process executor worker: ${e.message}` });
  }

  /**
   * Request cancellation of a running job: marker file, plus a signal when it
   * is our child. Returns why the request could not reach the supervisor
   * (marker not written, e.g. disk full, and no child to signal), else undefined.
   */
  cancel(id: number): NodeJS.ErrnoException | undefined {
    const p = jobPaths(this.home, id);
    let markerError: NodeJS.ErrnoException | undefined;
    try {
      writeFileAtomic(p.cancel, 'true\n');
    } catch (e) {
      markerError = e as NodeJS.ErrnoException;
      this.log(`job ${id}: cannot write cancel marker: ${markerError.message}`);
    }
    // Only our own unreaped child: its pid cannot have been reused.
    const child = this.children.get(id);
    if (child && !child.exited) {
      child.kill('SIGUSR1');
      return undefined;
    }
    return markerError;
  }

  /**
   * After a daemon restart: watch RUNNING jobs through their locks. A job
   * with no lock file at all was committed as RUNNING but never reached
   * spawn (launch creates the lock file just before spawning): nothing ran,
   * so it goes back to the queue instead of failing — in the same boot only
   * (trustMissingLock); after a reboot such a job fails as before.
   */
  /** Set at start-up: true only when the previous daemon ran in this same boot. */
  trustMissingLock = false;

  adopt(ids: number[], afterRestart = false): void {
    for (const id of ids) {
      if (afterRestart && this.trustMissingLock && this.neverStarted(id)) continue;
      if (!this.collect(id)) this.adopted.add(id);
    }
    if (this.adopted.size && !this.adoptTimer) {
      this.adoptTimer = setInterval(() => {
        for (const id of [...this.adopted]) if (this.collect(id)) this.adopted.delete(id);
        if (!this.adopted.size && this.adoptTimer) { clearInterval(this.adoptTimer); this.adoptTimer = undefined; }
      }, ADOPTED_POLL_MS);
    }
  }

  /**
   * After a restart in the same boot: did the previous daemon stop before
   * the job's payload could have started? True (and the job is handed back
   * to the queue) when the lock file does not exist (killed before it was
   * created) or is free and still holds SPAWN_MARK with no result (killed
   * before spawn(2), or the supervisor died before it forked the payload).
   * The page cache survives a daemon crash, so within one boot the lock
   * file's name and content can be trusted without fsync.
   */
  private neverStarted(id: number, who = 'the previous daemon'): boolean {
    const p = jobPaths(this.home, id);
    let fd = -1;
    try {
      fd = fs.openSync(p.lock, fs.constants.O_RDWR);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return false;
      this.events.deferred(id, `${who} stopped before spawning its supervisor`);
      return true;
    }
    try {
      if (!flockExclusive(fd)) return false; // the supervisor lives
      const mark = Buffer.alloc(16);
      const n = fs.readSync(fd, mark, 0, mark.length, 0);
      if (mark.subarray(0, n).toString() !== SPAWN_MARK || fs.existsSync(p.result)) return false;
      this.events.deferred(id, `${who} stopped before its supervisor started the job`);
      return true;
    } catch {
      return false; // cannot tell: collect() decides as before
    } finally {
      fs.closeSync(fd); // releases the flock taken above
    }
  }

  /** Is this job's supervisor our child or adopted (so still being watched)? */
  watching(id: number): boolean { return this.children.has(id) || this.adopted.has(id); }

  /**
   * If the job's lock is free, its supervisor is gone: report the outcome
   * (from the result file, or FAILED when there is none) and return true.
   */
  private collect(id: number): boolean {
    const p = jobPaths(this.home, id);
    let fd = -1;
    try {
      fd = fs.openSync(p.lock, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
      if (!flockExclusive(fd)) return false;
      // Read before reporting: a result that cannot be read right now (no
      // free descriptor) is read later, never taken for a missing one.
      const outcome = this.readResult(p.result);
      this.lockTrouble.delete(id);
      this.events.finished(id, outcome);
      flockUnlock(fd);
      return true;
    } catch (e) {
      if (!this.lockTrouble.has(id)) this.log(`job ${id}: cannot collect the result yet: ${(e as Error).message}; will retry`);
      this.lockTrouble.add(id);
      return false;
    } finally {
      if (fd >= 0) fs.closeSync(fd);
    }
  }

  /** The supervisor's outcome; VANISHED when it left none. Throws when the file exists but cannot be read now. */
  private readResult(file: string): Outcome {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      return { state: 'FAILED', exit_code: 1, finished_at: this.now(), error: VANISHED };
    }
    try {
      const o = JSON.parse(text) as Outcome;
      const states = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];
      if (!states.includes(o.state) || !Number.isInteger(o.exit_code) || !Number.isInteger(o.finished_at)) throw new Error('bad result');
      return { state: o.state, exit_code: o.exit_code, finished_at: o.finished_at, error: typeof o.error === 'string' ? o.error : null };
    } catch {
      return { state: 'FAILED', exit_code: 1, finished_at: this.now(), error: `${VANISHED} (unreadable result file)` };
    }
  }

  stop(): void {
    this.stopped = true;
    // The launcher exits when its socket closes; the supervisors it forked keep running.
    this.launcher?.close();
    if (this.adoptTimer) clearInterval(this.adoptTimer);
    // Children are detached: they keep running after the daemon exits.
    for (const c of this.children.values()) c.unref();
  }
}
