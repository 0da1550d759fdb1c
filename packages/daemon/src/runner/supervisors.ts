/**
 * Starting supervisors (docs/behaviour.md §6.1): a job's descriptors made ready (prepare), then
 * handed to the launcher (launcher.ts, the production path) or, while none runs, spawned
 * directly (direct-spawn.ts, the fallback). Every started supervisor is one Child, whichever
 * path started it; every start that did not happen is reported by one path (notStarted); what
 * happens after a start (exit, a lost launcher) is reported to the caller, which judges the
 * job through its lock (liveness.ts).
 */
import * as fs from 'node:fs';
import { U32_MAX } from '@xlurm/protocol';
import { accountFor, groupsFor } from '../accounts';
import type { StoredJob } from '../store/store';
import { spawnDirect, type StartedSupervisor } from './direct-spawn';
import { jobArgv, jobEnv } from './job-env';
import type { JobFiles } from './job-files';
import { SupervisorLauncher } from './launcher';
import { encodeStepdSpec } from './stepd-spec';
import type { JobCgroupSpec } from '../resources/job-limits';

/** Pause before starting another launcher after one failed or went away (jobs start directly meanwhile). */
const LAUNCHER_RETRY_MS = 1000;

/** A job whose supervisor's descriptors are ready (prepare): spec, log, log, lock. */
export interface Prepared { readonly id: number; readonly fds: [number, number, number, number] }

export interface SupervisorEvents {
  /** Nothing was started, for a passing reason (no free descriptors or memory): the job can wait. */
  deferred(id: number, reason: string): void;
  /** Nothing was started, and it will not start: the job fails with this error. */
  failed(id: number, error: string): void;
  /** The supervisor has been reaped. */
  exited(id: number): void;
  /** The supervisor started, but its exit will not be reported: watch its lock. */
  untracked(id: number): void;
  /** The launcher went away owing answers for these jobs: whether each one started is unknown. */
  launcherLost(ids: number[]): void;
}

/**
 * A supervisor this daemon started, by either path: signal() is safe until exited (its pid
 * cannot be reused before it is reaped). pid is 0 while the start is under way (a signal
 * meanwhile is delivered once it is known).
 */
interface Child { pid: number; exited: boolean; started?: StartedSupervisor }

/** The job's owner cannot be the job's identity (the message is the job's error). */
class AccountError extends Error {}
const ALREADY_RUNNING = 'worker already running';

/**
 * Errors that say "not now" (descriptors, processes, memory, a full disk for
 * the job's spec, log or lock file, a launcher socket whose buffer is full),
 * not "never".
 */
const TRANSIENT = new Set(['EMFILE', 'ENFILE', 'EAGAIN', 'ENOMEM', 'ENOSPC', 'EDQUOT', 'ENOBUFS']);
const transient = (e: unknown) => TRANSIENT.has((e as NodeJS.ErrnoException)?.code ?? '');

export class Supervisors {
  private readonly children = new Map<number, Child>();
  /** Forks supervisors (see launcher.ts); started on first use, again after a loss. */
  private launcher: SupervisorLauncher | undefined;
  /** No new launcher before this time (after one failed to start or went away). */
  private launcherRetryAt = 0;
  private stopped = false;
  /** Written into each job's spec at launch, so a reload changes later jobs only (docs/behaviour.md §21.6). */
  killGrace = 1;

  constructor(
    private readonly stepd: string,
    private readonly switchUser: boolean,
    private readonly files: JobFiles,
    private readonly events: SupervisorEvents,
    private readonly log: (msg: string) => void,
  ) {}

  /**
   * Everything of a start but the spawn: the job's spec, log and lock file
   * (the lock taken, holding the spawn mark, under its name). Done while the
   * RUNNING commit is still being synced, it keeps the file creation out of
   * the job's start-up latency; nothing runs before start(). On failure the
   * job is reported as not started and undefined is returned.
   */
  prepare(job: StoredJob, cgroup?: JobCgroupSpec): Prepared | undefined {
    const p = this.files.paths(job.id);
    let specFd = -1;
    let logFd = -1;
    try {
      const groups = this.switchUser ? this.ownerGroups(job) : [];
      // The spec is complete before the supervisor exists: it reads it from
      // its stdin, written in full before the spawn, so a daemon that dies
      // right after spawn(2) leaves a supervisor that still runs its job (a
      // pipe written after the spawn would leave it an empty spec).
      specFd = this.files.openSpec(job.id, encodeStepdSpec({
        jobId: job.id, resultPath: p.result, cancelPath: p.cancel, uid: job.owner.uid, gid: job.owner.gid,
        ownerName: job.owner.name, groups, switchUser: this.switchUser, cwd: job.spec.cwd,
        timeLimit: job.spec.time_limit ?? 0, killGrace: Math.min(this.killGrace, U32_MAX), argv: jobArgv(job), env: jobEnv(job),
        ...(cgroup ? { cgroupDirs: cgroup.dirs, cgroupKill: cgroup.killFile, privateTmp: cgroup.privateTmp } : {}),
      }));
      logFd = this.files.openLog(job.id);
      // The lock file last: one that exists proves the steps above were done (see liveness.ts).
      const lockFd = this.files.createLock(job.id);
      // fd 3 is the lock: the child's dup shares our open file description,
      // so the flock stays held after we close our copy (in discard).
      return { id: job.id, fds: [specFd, logFd, logFd, lockFd] };
    } catch (e) {
      for (const fd of [specFd, logFd]) if (fd >= 0) fs.closeSync(fd);
      this.notStarted(job.id, e);
      return undefined;
    }
  }

  /** Start the supervisor of a prepared job (its RUNNING commit now synced); our descriptors are closed either way. */
  start(p: Prepared): void {
    try {
      this.spawn(p.id, p.fds);
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

  /** Signal the job's supervisor if it is our own unreaped child; false when there is none. */
  signal(id: number, sig: NodeJS.Signals): boolean {
    const child = this.children.get(id);
    if (!child || child.exited) return false;
    child.started?.signal(sig);
    return true;
  }

  stop(): void {
    this.stopped = true;
    // The launcher exits when its socket closes; the supervisors it forked keep running.
    this.launcher?.close();
    // Children are detached: they keep running after the daemon exits.
    for (const c of this.children.values()) c.started?.unref();
  }

  /**
   * The one failure path of a start: nothing was spawned. A passing shortage only delays the
   * job; anything else fails it.
   */
  private notStarted(id: number, e: unknown): void {
    if (transient(e)) { this.events.deferred(id, (e as Error).message); return; }
    const msg = e instanceof AccountError || (e as Error).message === ALREADY_RUNNING ? (e as Error).message
      : `cannot start process executor worker: ${(e as Error).message}`;
    this.events.failed(id, msg);
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

  /**
   * Start the supervisor in a new session (it survives the daemon and its signals), through the
   * launcher if one runs, else directly. Throws when it cannot start now; a failure found later
   * is reported through notStarted.
   */
  private spawn(id: number, fds: [number, number, number, number]): void {
    const child: Child = { pid: 0, exited: false };
    const callbacks = {
      onSpawned: (err: NodeJS.ErrnoException | null, pid: number) => {
        if (err) { this.children.delete(id); this.notStarted(id, err); return; }
        if (pid === 0) { this.children.delete(id); this.events.untracked(id); return; }
        child.pid = pid;
      },
      onExit: () => { child.exited = true; this.children.delete(id); this.events.exited(id); },
    };
    const launcher = this.currentLauncher();
    if (launcher?.accepts(id)) {
      try {
        launcher.spawn(id, fds, callbacks);
        // Requests are handled in order: a signal sent before the pid is known still reaches it.
        child.started = { signal: (sig) => { launcher.signal(id, sig); }, unref: () => undefined };
        this.children.set(id, child);
        return;
      } catch (e) {
        // A full socket (the launcher is not keeping up) only delays the job; a broken one
        // means the launcher is going away: start this job directly.
        if (transient(e)) throw e;
      }
    }
    const started = spawnDirect(this.stepd, fds, callbacks);
    if (!started) return; // spawn(2) failed: onSpawned reports it
    child.started = started;
    if (!child.exited) this.children.set(id, child);
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

  /** The launcher went away (killed, or crashed) owing answers for these jobs. */
  private launcherLost(ids: number[]): void {
    this.launcherRetryAt = Date.now() + LAUNCHER_RETRY_MS;
    this.log(ids.length ? `supervisor launcher exited; watching ${ids.length} job(s) through their locks` : 'supervisor launcher exited');
    for (const id of ids) this.children.delete(id);
    this.events.launcherLost(ids);
  }
}
