/**
 * The daemon's state and its transitions. Single-threaded: every transition
 * is one synchronous unit (SQLite transaction + in-memory update) with no
 * await in between, so handlers never observe half-applied state.
 */
import type { Job, Outcome } from '@xlurm/protocol';
import { XlurmError, isTerminal } from '@xlurm/protocol';
import type { DaemonConfig } from './config';
import type { DeviceManager } from './devices/manager';
import type { Prepared, Runner } from './runner/runner';
import { PendingJobs } from './pending-jobs';
import { schedule, type PendingJob } from './scheduler/schedule';
import { toWireJob, type Store, type StoredJob } from './store/store';

/** Jobs of one pass whose files are made ready while their RUNNING commit is synced. */
const PREPARE_AHEAD = 8;

/** Who is calling: from SO_PEERCRED at accept, never from the request. */
export interface Caller { uid: number; gid: number; pid: number }

export type JobListener = (job: Job) => void;

export class Core {
  /** PENDING jobs in id (submission) order. */
  readonly pending = new PendingJobs();
  readonly running = new Map<number, StoredJob>();
  private readonly listeners = new Map<number, Set<JobListener>>();
  private passQueued = false;
  runner!: Runner;
  readonly startedAt = Math.floor(Date.now() / 1000);

  constructor(
    readonly home: string,
    readonly cfg: DaemonConfig,
    readonly store: Store,
    readonly devices: DeviceManager,
    readonly euid: number,
    readonly log: (msg: string) => void,
  ) {
    // A pass queued in this turn runs before the turn's group commit, so a
    // submitted job that can start is committed RUNNING together with its
    // insert: one fsync from submit to spawn.
    store.beforeFlush = () => this.runQueuedPass();
  }

  now(): number { return Math.floor(Date.now() / 1000); }

  /** Load active jobs after a (re)start and adopt the running ones. */
  recover(): void {
    const runningIds: number[] = [];
    for (const j of this.store.active()) {
      if (j.state === 'PENDING') this.pending.set(j.id, j);
      else {
        this.running.set(j.id, j);
        this.devices.allocate(j.id, j.devices);
        runningIds.push(j.id);
      }
    }
    this.runner.adopt(runningIds, true);
  }

  /** The root daemon, or a non-root daemon's own account. */
  isAdmin(c: Caller): boolean { return c.uid === 0 || c.uid === this.euid; }

  /** Lookup before authorisation: unknown ids are `job not found` for everyone. */
  jobFor(c: Caller, id: number): StoredJob {
    const j = this.running.get(id) ?? this.pending.get(id) ?? this.store.get(id);
    if (!j) throw new XlurmError('JOB_NOT_FOUND', 'job not found');
    if (c.uid !== 0 && c.uid !== j.owner.uid) {
      throw new XlurmError('PERMISSION_DENIED', `permission denied: job belongs to ${j.owner.name} (UID ${j.owner.uid})`);
    }
    return j;
  }

  /** Current state of a job (memory for active jobs, else the store). */
  current(id: number): StoredJob | undefined {
    return this.running.get(id) ?? this.pending.get(id) ?? this.store.get(id);
  }

  addPending(j: StoredJob): void {
    this.pending.set(j.id, j);
    this.scheduleSoon();
  }

  /**
   * Cancel a job, or throw STORAGE: a client is told "cancellation requested"
   * only when the cancellation is durable (pending job) or has reached the
   * supervisor (running job), never when it was lost to a full disk.
   */
  cancel(j: StoredJob): void {
    if (j.state === 'PENDING') {
      const err = this.complete(j.id, { state: 'CANCELLED', exit_code: 130, finished_at: this.now(), error: null });
      if (err) throw err;
    } else if (j.state === 'RUNNING') {
      const err = this.runner.cancel(j.id);
      if (err) {
        const why = err.code === 'ENOSPC' || err.code === 'EDQUOT' ? 'disk is full; free space under XLURM_HOME and retry' : err.message;
        throw new XlurmError('STORAGE', `cannot cancel job ${j.id}: cannot write its cancel marker: ${why}`);
      }
    }
  }

  /** Coalesce scheduling requests from one turn of the event loop into one pass. */
  scheduleSoon(): void {
    if (this.passQueued) return;
    this.passQueued = true;
    setImmediate(() => this.runQueuedPass());
  }

  private runQueuedPass(): void {
    if (!this.passQueued) return;
    this.passQueued = false;
    this.pass();
  }

  private pass(): void {
    // Nothing can start while every slot is taken: no work that grows with the queue.
    if (this.pending.size === 0 || this.running.size >= this.cfg.maxRunning) return;
    const decisions = schedule({
      pending: this.pendingRequests(), cpuOnlyPending: this.pending.cpuOnly, running: this.running.size, maxRunning: this.cfg.maxRunning,
      inventory: this.devices.inventory, free: this.devices.freeKeys(),
    });
    if (decisions.length === 0) return;
    const now = this.now();
    // A clock set back since a job was submitted must not start it before it was submitted.
    const startedAt = (id: number) => Math.max(now, this.pending.get(id)!.submitted_at);
    try {
      // All starts of this pass in one commit, durable before any spawn: a
      // crash after it fails these jobs, never reruns them.
      for (const d of decisions) this.store.markRunning(d.id, d.devices, startedAt(d.id));
      this.store.commit();
    } catch (e) {
      this.store.rollback(); // no half-started pass: every job stays PENDING
      this.log(`cannot persist job start: ${(e as Error).message}; will retry`);
      this.retryLater();
      return;
    }
    const started: StoredJob[] = [];
    for (const d of decisions) {
      const j = this.pending.get(d.id)!;
      j.started_at = startedAt(j.id);
      this.pending.delete(j.id);
      j.state = 'RUNNING';
      j.devices = d.devices;
      this.running.set(j.id, j);
      this.devices.allocate(j.id, d.devices);
      started.push(j);
    }
    // The first few jobs get their files (spec, log, lock) ready while the
    // WAL is synced: that work is then off their start-up latency. A few
    // only, so a pass that starts hundreds holds no more descriptors.
    const ahead = new Map<number, Prepared | undefined>();
    for (const j of started.slice(0, PREPARE_AHEAD)) {
      if (this.running.get(j.id) === j) ahead.set(j.id, this.runner.prepare(j));
    }
    // The event loop keeps serving while the WAL is synced; a cancel that
    // arrives meanwhile leaves a marker the supervisor honours before it
    // runs anything.
    this.store.durable().then(() => {
      for (const j of started) {
        const tried = ahead.has(j.id);
        const p = ahead.get(j.id);
        if (this.running.get(j.id) !== j) { if (p) this.runner.discard(p); continue; }
        if (p) this.runner.start(p);
        else if (!tried) this.runner.launch(j);
        else continue; // its preparation failed and was reported
        if (j.state === 'RUNNING') this.notify(j);
      }
    }, (e: unknown) => {
      // Not known to be on disk: start nothing; the jobs go back to the queue.
      for (const p of ahead.values()) if (p) this.runner.discard(p);
      for (const j of started) if (this.running.get(j.id) === j) this.deferStart(j.id, `cannot sync the job database: ${(e as Error).message}`);
    });
  }

  /** Pending jobs as the scheduler sees them, in submission order (lazily: it may stop early). */
  private *pendingRequests(): Iterable<PendingJob> {
    for (const j of this.pending.values()) {
      yield { id: j.id, count: j.spec.count, kind: j.spec.kind ?? null, deviceIds: j.spec.device_ids, excludeIds: j.spec.exclude_ids };
    }
  }

  private retryTimer: NodeJS.Timeout | undefined;
  private retryLater(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => { this.retryTimer = undefined; this.scheduleSoon(); }, 1000);
    this.retryTimer.unref();
  }

  /**
   * A job's supervisor was spawned. Its pid is kept in memory only: a database
   * write per start cost a commit and a WAL sync of its own, racing the job's
   * start-up for the CPU, and nothing reads it back (a restarted daemon finds
   * supervisors through their locks).
   */
  spawned(id: number, pid: number): void {
    const j = this.running.get(id);
    if (j) j.stepdPid = pid;
  }

  /**
   * A committed start whose supervisor could not be spawned for a passing
   * reason (nothing ran): back to PENDING in submission order, tried again
   * shortly. If even that cannot be written, the job fails as before.
   */
  deferStart(id: number, reason: string): void {
    const j = this.running.get(id);
    if (!j) return;
    try {
      this.store.unstart(id);
    } catch {
      this.complete(id, { state: 'FAILED', exit_code: 1, finished_at: this.now(), error: `cannot start process executor worker: ${reason}` });
      return;
    }
    this.running.delete(id);
    this.devices.release(j.devices);
    j.state = 'PENDING';
    j.devices = [];
    j.started_at = null;
    j.stepdPid = null;
    const queued = [j, ...this.pending.values()].sort((x, y) => x.id - y.id);
    this.pending.clear();
    for (const q of queued) this.pending.set(q.id, q);
    this.log(`job ${id}: cannot start its supervisor yet (${reason}); back in the queue`);
    this.notify(j);
    this.retryLater();
  }

  /**
   * A job reached a terminal state: persist, release devices, wake listeners,
   * schedule. Returns the storage error when it could not be persisted (the
   * job then stays as it was; a running one is collected again later).
   */
  complete(id: number, outcome: Outcome): XlurmError | undefined {
    const j = this.running.get(id) ?? this.pending.get(id);
    if (!j) return undefined;
    // The supervisor stamps finished_at with its own clock: if the clock was
    // set back while the job ran, it must still not end before it started.
    const floor = j.started_at ?? j.submitted_at;
    const o = outcome.finished_at < floor ? { ...outcome, finished_at: floor } : outcome;
    try {
      this.store.finish(id, o);
    } catch (e) {
      // Keep it in memory as it was; the supervisor's result file stays on
      // disk and is collected again once storage works.
      this.log(`job ${id}: cannot persist result: ${(e as Error).message}; will retry`);
      if (j.state === 'RUNNING') setTimeout(() => this.runner.adopt([id]), 1000).unref();
      return e instanceof XlurmError ? e : new XlurmError('STORAGE', `cannot write the job database: ${(e as Error).message}`);
    }
    this.running.delete(id);
    this.pending.delete(id);
    j.state = o.state;
    j.result = o;
    j.stepdPid = null;
    this.devices.release(j.devices);
    this.scheduleSoon();
    // Followers learn the result once it is on disk (a failed sync is logged
    // by the store; they are told what the daemon holds either way).
    const tell = () => { this.notify(j); this.listeners.delete(id); };
    this.store.durable().then(tell, tell);
    return undefined;
  }

  listen(id: number, fn: JobListener): () => void {
    let set = this.listeners.get(id);
    if (!set) { set = new Set(); this.listeners.set(id, set); }
    set.add(fn);
    return () => { set!.delete(fn); if (set!.size === 0 && this.listeners.get(id) === set) this.listeners.delete(id); };
  }

  private notify(j: StoredJob): void {
    const set = this.listeners.get(j.id);
    if (!set) return;
    const wire = toWireJob(j);
    for (const fn of [...set]) fn(wire);
  }

  isTerminal(j: Job): boolean { return isTerminal(j.state); }
}
