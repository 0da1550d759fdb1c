/**
 * One long-lived `xlurm-stepd --launcher` (native/src/stepd/launcher.c) that forks supervisors
 * on request: a job start then costs a fork(2) of that small process instead of an execve(2)
 * of xlurm-stepd (docs/performance.md). Jobs are named by their id (the tag).
 *
 * What the runner must know: spawn() is answered exactly once per job, by onSpawned (a pid,
 * 0 for "started but not tracked", or an error for "nothing was started"), and then onExit
 * once the supervisor is reaped; or, if the launcher goes away first, by onLost for every
 * job still waiting for either (whether it started is then unknown: the job's lock tells).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { LAUNCH, launcherClose, launcherPair, launcherSignal, launcherSpawn, launcherWatch, type LauncherHandle } from '@xlurm/native';

export interface LaunchCallbacks {
  onSpawned(err: NodeJS.ErrnoException | null, pid: number): void;
  onExit(): void;
}

/** Largest tag the protocol carries (uint32); larger job ids are started directly. */
const MAX_TAG = 0xffffffff;

const errnoName = new Map<number, string>(Object.entries(os.constants.errno).map(([k, v]) => [v, k]));

export class SupervisorLauncher {
  private readonly jobs = new Map<number, LaunchCallbacks & { spawned: boolean }>();
  private closed = false;

  private constructor(
    private readonly handle: LauncherHandle,
    private readonly proc: ChildProcess,
    private readonly onLost: (ids: number[]) => void,
  ) {}

  /**
   * Start a launcher; undefined (and the reason logged) when it cannot be started. `onLost` is
   * called once it is gone (also when it never came up), with the jobs it still owed an
   * answer; the runner starts a new one later.
   */
  static start(stepd: string, log: (msg: string) => void, onLost: (ids: number[]) => void): SupervisorLauncher | undefined {
    let pair: [number, number];
    try { pair = launcherPair(); } catch (e) { log(`supervisor launcher: ${(e as Error).message}`); return undefined; }
    const [mine, theirs] = pair;
    let proc: ChildProcess;
    try {
      // Started once per daemon, so child_process's fork of the daemon is affordable here. A
      // session of its own (detached), an empty environment and cwd "/", as for a supervisor.
      proc = spawn(stepd, ['--launcher'], { stdio: ['ignore', 'ignore', 'inherit', theirs], detached: true, env: {}, cwd: '/' });
    } catch (e) {
      fs.closeSync(mine);
      log(`supervisor launcher: ${(e as Error).message}`);
      return undefined;
    } finally {
      fs.closeSync(theirs);
    }
    proc.on('error', (e) => log(`supervisor launcher: ${e.message}`)); // the socket's end reports the loss
    proc.unref();
    let self: SupervisorLauncher | undefined;
    const handle = launcherWatch(mine, (op, tag, value) => self?.message(op, tag, value));
    self = new SupervisorLauncher(handle, proc, onLost);
    return self;
  }

  get alive(): boolean { return !this.closed; }

  /** Can this job be started here? (Tags are uint32.) */
  accepts(id: number): boolean { return !this.closed && Number.isInteger(id) && id >= 0 && id <= MAX_TAG; }

  /**
   * Ask for a supervisor on fds 0-3 (copied into the message: the caller closes its own).
   * Throws, with nothing started, when the request cannot be sent.
   */
  spawn(id: number, fds: [number, number, number, number], cb: LaunchCallbacks): void {
    launcherSpawn(this.handle, id, fds);
    this.jobs.set(id, { ...cb, spawned: false });
  }

  /**
   * Signal the job's supervisor. The launcher handles requests in order, so this reaches a
   * supervisor whose spawn was asked for just before; one already reaped is left alone.
   */
  signal(id: number, sig: NodeJS.Signals): boolean {
    if (this.closed || !this.jobs.has(id)) return false;
    try { launcherSignal(this.handle, id, os.constants.signals[sig]); return true; } catch { return false; }
  }

  /** The daemon stops: the launcher exits; supervisors it started keep running. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    launcherClose(this.handle);
    this.jobs.clear();
  }

  private message(op: number, tag: number, value: number): void {
    if (op === LAUNCH.CLOSED) {
      this.closed = true;
      const ids = [...this.jobs.keys()];
      this.jobs.clear();
      // The jobs are judged by their locks only once the launcher is reaped. Our end hears the
      // close before the kernel frees the requests still queued on the launcher's end, whose
      // descriptors keep those jobs' locks held until its exit completes (exit runs the last
      // fput()s before the parent is notified): judged earlier, a job that never started
      // would look alive, and fail as vanished once its lock came free.
      const lost = () => this.onLost(ids);
      const p = this.proc;
      if (p.pid === undefined || p.exitCode !== null || p.signalCode !== null) { lost(); return; }
      p.once('exit', lost);
      try { p.kill('SIGKILL'); } catch { /* exiting already: 'exit' still comes */ }
      return;
    }
    const job = this.jobs.get(tag);
    if (!job) return;
    if (op === LAUNCH.SPAWNED && !job.spawned) {
      job.spawned = true;
      if (value < 0) {
        this.jobs.delete(tag);
        const code = errnoName.get(-value) ?? 'EIO';
        const err: NodeJS.ErrnoException = new Error(`fork: ${code}`);
        err.code = code;
        job.onSpawned(err, 0);
      } else {
        if (value === 0) this.jobs.delete(tag); // started, but the launcher could not track it
        job.onSpawned(null, value);
      }
    } else if (op === LAUNCH.EXITED && job.spawned) {
      this.jobs.delete(tag);
      job.onExit();
    }
  }
}
