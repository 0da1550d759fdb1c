/**
 * Running jobs through xlurm-stepd (docs/behaviour.md §6): the daemon's one entry point, which
 * only wires three parts together:
 *   job-files.ts    every per-job file: names, lock mark, cancel marker, spec, result, removal
 *   supervisors.ts  starts supervisors (the launcher; directly as the fallback) and signals them
 *   liveness.ts     watches locks: collects results, adopts jobs after a restart or a lost launcher
 */
import type { Outcome } from '@xlurm/protocol';
import type { StoredJob } from '../store/store';
import { ENFORCE_PREFIX, EnforceError, type JobLimits } from '../resources/job-limits';
import type { JobShares } from '../sharing/job-share';
import { JobFiles } from './job-files';
import { Liveness } from './liveness';
import { Notifier } from './notify';
import { Supervisors, type Prepared } from './supervisors';

export { VANISHED } from './liveness';
export type { Prepared } from './supervisors';

export interface RunnerEvents {
  /** The supervisor is gone (or never started and never will) and the job's outcome is known. */
  finished(id: number, outcome: Outcome): void;
  /**
   * The supervisor could not be started for a passing reason (no free
   * descriptors or memory) and nothing ran: the job can wait and start later.
   */
  deferred(id: number, reason: string): void;
}

export class Runner {
  private readonly files: JobFiles;
  private readonly liveness: Liveness;
  private readonly supervisors: Supervisors;
  private readonly notifier: Notifier;

  constructor(
    home: string,
    stepd: string,
    switchUser: boolean,
    private readonly events: RunnerEvents,
    private readonly log: (msg: string) => void,
    private readonly now: () => number,
    /** Each job's cgroup (docs/behaviour.md §24.3); absent: jobs run without (unit tests). */
    private readonly limits?: JobLimits,
    /** Slices' files and variables (docs/behaviour.md §25.3); absent: no job has a slice (unit tests). */
    private readonly shares?: JobShares,
  ) {
    this.files = new JobFiles(home);
    // A job's cgroup is measured, emptied and removed before its end is reported, so its
    // devices are released only once nothing of it is left (docs/behaviour.md §24.6).
    // Its slice's private files go with it (docs/behaviour.md §25.3).
    const finished = (id: number, o: Outcome) => { shares?.remove(id); events.finished(id, limits ? limits.finish(id, o) : o); };
    this.liveness = new Liveness(this.files, { ...events, finished }, log, now);
    this.notifier = new Notifier(stepd, switchUser, this.files, log, limits);
    this.supervisors = new Supervisors(stepd, switchUser, this.files, {
      deferred: (id, reason) => { limits?.discard(id); shares?.remove(id); events.deferred(id, reason); },
      failed: (id, error) => finished(id, { state: 'FAILED', exit_code: 1, finished_at: now(), error }),
      exited: (id) => this.liveness.reaped(id),
      untracked: (id) => this.liveness.adopt([id]),
      launcherLost: (ids) => this.liveness.launcherLost(ids),
    }, log);
  }

  /** Seconds from SIGTERM to SIGKILL for jobs launched from now on (`[limits] kill_grace`; Core sets it). */
  get killGrace(): number { return this.supervisors.killGrace; }
  set killGrace(v: number) { this.supervisors.killGrace = v; }

  /** Set at start-up: true only when the previous daemon ran in this same boot (see Liveness). */
  get trustMissingLock(): boolean { return this.liveness.trustMissingLock; }
  set trustMissingLock(v: boolean) { this.liveness.trustMissingLock = v; }

  /** A terminal job's `--notify` command, run by a supervisor of its own (runner/notify.ts). */
  notify(job: StoredJob): void { this.notifier.run(job); }

  /** Spawn the supervisor of a job already committed as RUNNING (and synced). */
  launch(job: StoredJob): void {
    const p = this.prepare(job);
    if (p) this.start(p);
  }

  /** A job's descriptors made ready ahead of its start (see Supervisors.prepare); undefined: reported as not started. */
  prepare(job: StoredJob): Prepared | undefined {
    let shared: Record<string, string> | null = null;
    try {
      shared = this.shares?.setup(job) ?? null;
    } catch (e) {
      // Fail closed: a slice the library cannot be given safely is not run as a whole card either.
      this.shares?.remove(job.id);
      this.events.finished(job.id, { state: 'FAILED', exit_code: 1, finished_at: this.now(), error: `cannot prepare the job's device share: ${(e as Error).message}` });
      return undefined;
    }
    if (shared) job = { ...job, spec: { ...job.spec, env: { ...job.spec.env, ...shared } } };
    let cgroup;
    try {
      cgroup = this.limits?.setup(job) ?? undefined;
    } catch (e) {
      if (!(e instanceof EnforceError)) throw e;
      // Fail closed: a job that must be protected never runs unprotected.
      this.shares?.remove(job.id);
      this.events.finished(job.id, { state: 'FAILED', exit_code: 1, finished_at: this.now(), error: ENFORCE_PREFIX + e.message });
      return undefined;
    }
    return this.supervisors.prepare(job, cgroup);
  }

  /** Start a prepared job's supervisor; the prepared descriptors are closed either way. */
  start(p: Prepared): void { this.supervisors.start(p); }

  /** Close a prepared job's descriptors when it will not start now (its slice's files go too: it is set up again if it starts later). */
  discard(p: Prepared): void { this.supervisors.discard(p); this.shares?.remove(p.id); }

  /**
   * Request cancellation of a running job: marker file, plus a signal when it
   * is our child. Returns why the request could not reach the supervisor
   * (marker not written, e.g. disk full, and no child to signal), else undefined.
   */
  cancel(id: number): NodeJS.ErrnoException | undefined {
    let markerError: NodeJS.ErrnoException | undefined;
    try {
      this.files.writeCancel(id);
    } catch (e) {
      markerError = e as NodeJS.ErrnoException;
      this.log(`job ${id}: cannot write cancel marker: ${markerError.message}`);
    }
    // Only our own unreaped child: its pid cannot have been reused.
    return this.supervisors.signal(id, 'SIGUSR1') ? undefined : markerError;
  }

  /** Watch RUNNING jobs through their locks (afterRestart: loaded by a new daemon; see Liveness.adopt). */
  adopt(ids: number[], afterRestart = false): void {
    if (afterRestart) this.limits?.adopt(ids);
    this.liveness.adopt(ids, afterRestart);
  }

  stop(): void {
    this.supervisors.stop();
    this.liveness.stop();
    this.limits?.close();
  }
}
