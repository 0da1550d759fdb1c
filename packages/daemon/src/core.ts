/**
 * The daemon's state and its transitions. Single-threaded: every transition
 * is one synchronous unit (SQLite transaction + in-memory update) with no
 * await in between, so handlers never observe half-applied state.
 *
 * Core is the only writer of that state: its maps, the store and the device
 * exclusions are private, and each transition (submit, cancel, exclude and
 * include, complete, deferStart, recover, history removal) is one method.
 * Handlers authorise, call one of them and shape the reply; what they read
 * goes through the accessors below.
 */
import { EarliestTimer } from './earliest-timer';
import type { ArrayMembership, Device, DeviceView, Job, JobSummary, Outcome, Owner, Submission } from '@xlurm/protocol';
import { XlurmError, formatDurationSecs } from '@xlurm/protocol';
import { keysFromFlags, type DaemonConfig } from './config/daemon';
import { formatProblem } from './config/load';
import type { DeviceManager } from './devices/manager';
import type { Prepared } from './runner/runner';
import { PendingJobs, pendingJob } from './pending-jobs';
import { deviceKey, type DeviceBlock, type Topology } from './scheduler/place';
import { checkGroupIds } from './config/groups';
import { hostTopology } from './devices/topology';
import { schedule, type Hold, type PendingJob, type Reservation, type SchedulerInput } from './scheduler/schedule';
import { effectiveQueueTimeout, effectiveTimeLimit } from './time-policy';
import { toWireJob, type Store, type StoredJob } from './store/store';
import { Workflow, prepareRetry, retryLine, writeLimit, type Doomed } from './workflow';
import { passSeconds } from './accounting/histogram';
import * as os from 'node:os';
import type { ShareRow } from '@xlurm/protocol';
import { UsageBook } from './accounting/usage';
import { describeUserLimits, hasUserLimits, limitsOf, pendingLimitMessage, type UserHolding } from './scheduler/user-limits';
import { changedAccountingKeys } from './accounting/settings';
import { withResources } from './resources/requests';
import { hostRoom, resourcesOf } from './resources/room';
import { changedResourcesKeys } from './resources/settings';
import { changedSharingKeys } from './config/reload-diff';
import { sharingKinds } from './sharing/settings';

/**
 * Since when a pending job's queue wait counts (docs/behaviour.md §21.6,
 * §23.3, §23.4): its submission, its latest release or requeue for a retry,
 * and never before its begin time.
 */
const waitSince = (j: StoredJob): number => Math.max(j.queued_at ?? j.submitted_at, j.spec.begin_at ?? 0);

/** The free devices of a pass that cannot start anything (every slot taken). */
const NO_KEYS: ReadonlySet<string> = new Set();

/** How often fair-share usage is written to the store while jobs run. */
const USAGE_PERSIST_MS = 30_000;

/** Jobs of one pass whose files are made ready while their RUNNING commit is synced. */
const PREPARE_AHEAD = 8;

/** `[limits]` keys and their settings, for a reload's list of what changed. */
const LIMIT_KEYS = [
  ['limits.default_time_limit', 'defaultTimeLimit'], ['limits.max_time_limit', 'maxTimeLimit'],
  ['limits.kill_grace', 'killGrace'], ['limits.default_queue_timeout', 'defaultQueueTimeout'],
] as const;

/** Who is calling: from SO_PEERCRED at accept, never from the request. */
export interface Caller { uid: number; gid: number; pid: number }

export type JobListener = (job: Job) => void;

/** What Core asks of the runner (the real one is runner/runner.ts; tests pass a fake). */
export interface JobRunner {
  /** Open a committed job's files; undefined when that failed (and was reported). */
  prepare(job: StoredJob): Prepared | undefined;
  start(p: Prepared): void;
  discard(p: Prepared): void;
  /** prepare + start. */
  launch(job: StoredJob): void;
  /** Tell a running job's supervisor to cancel; the write error if the marker could not be left. */
  cancel(id: number): NodeJS.ErrnoException | undefined;
  /** Watch running jobs whose supervisors this daemon did not spawn (or must collect again). */
  adopt(ids: number[], afterRestart?: boolean): void;
  /** Seconds from SIGTERM to SIGKILL for jobs launched from now on (`[limits] kill_grace`). */
  killGrace?: number;
  /** Run a terminal job's `--notify` command as its owner (docs/behaviour.md §23.7); absent: none run. */
  notify?(job: StoredJob): void;
}

/**
 * What handlers may read of the devices: exclusions change only through
 * Core.exclude/include, allocations only through Core's transitions.
 */
export interface DeviceFacts {
  readonly inventory: readonly Device[];
  readonly kinds: string[];
  readonly excluded: ReadonlySet<number>;
  hasId(id: number): boolean;
  isEnabled(d: Device): boolean;
  freeKeys(): Set<string>;
  views(): DeviceView[];
  /** A card's memory as its library last reported it; undefined where none did (card sharing, docs/behaviour.md §25.1). */
  memoryTotal?(d: Device): number | undefined;
}

export class Core {
  /** PENDING jobs in id (submission) order. */
  private readonly pending = new PendingJobs();
  private readonly running = new Map<number, StoredJob>();
  private readonly listeners = new Map<number, Set<JobListener>>();
  private passQueued = false;
  readonly startedAt = Math.floor(Date.now() / 1000);
  /** Device isolation in force, for xinfo and `xlurm status` (docs/behaviour.md §24.8); set at start-up. */
  isolation?: { state(): string };
  /** Running jobs the low-memory guard is stopping, with its error (docs/behaviour.md §24.7). */
  private readonly guardStops = new Map<number, string>();

  constructor(
    readonly home: string,
    private config: DaemonConfig,
    private readonly store: Store,
    private readonly deviceManager: DeviceManager,
    private readonly runner: JobRunner,
    readonly euid: number,
    readonly log: (msg: string) => void,
  ) {
    // A pass queued in this turn runs before the turn's group commit, so a
    // submitted job that can start is committed RUNNING together with its
    // insert: one fsync from submit to spawn.
    store.beforeFlush = () => this.runQueuedPass();
    runner.killGrace = config.killGrace;
    this.usage = new UsageBook(store, os.availableParallelism(), config.fairShareHalfLife);
  }

  now(): number { return Math.floor(Date.now() / 1000); }

  /** The settings in force; replaced only by applyConfig. */
  get cfg(): DaemonConfig { return this.config; }

  private topo: { cfg: DaemonConfig; topology: Topology } | undefined;

  /** The device groups in force and the host's affinity (docs/behaviour.md §21.5), made once per configuration. */
  topology(): Topology {
    if (this.topo?.cfg !== this.config) {
      const c = this.config;
      this.topo = { cfg: c, topology: hostTopology(c.groupAffinity, c.groups, this.deviceManager.discoveredGroups()) };
    }
    return this.topo.topology;
  }

  /** The devices, read-only (see DeviceFacts). */
  get devices(): DeviceFacts { return this.deviceManager; }

  /** Load active jobs after a (re)start and adopt the running ones (their devices stay theirs). */
  recover(): void {
    const runningIds: number[] = [];
    const pendingJobs: StoredJob[] = [];
    for (const j of this.store.active()) {
      if (j.state === 'PENDING') { this.pending.set(j.id, j); pendingJobs.push(j); }
      else {
        this.running.set(j.id, j);
        this.deviceManager.allocate(j.id, j.devices, j.spec.share);
        runningIds.push(j.id);
      }
    }
    // Queued once every active job is known: a gate (a singleton) may wait for a later one.
    for (const j of pendingJobs) if (this.pending.get(j.id) === j) this.queued(j);
    this.recoverFairness(pendingJobs);
    this.runner.adopt(runningIds, true);
  }

  /** The root daemon, or a non-root daemon's own account. */
  isAdmin(c: Caller): boolean { return c.uid === 0 || c.uid === this.euid; }

  /**
   * Lookup before authorisation: unknown ids are `job not found` for
   * everyone; a job is the owner's and root's only.
   */
  jobFor(c: Caller, id: number): Readonly<StoredJob> {
    const j = this.current(id);
    if (!j) throw new XlurmError('JOB_NOT_FOUND', 'job not found');
    if (c.uid !== 0 && c.uid !== j.owner.uid) {
      throw new XlurmError('PERMISSION_DENIED', `permission denied: job belongs to ${j.owner.name} (UID ${j.owner.uid})`);
    }
    return j;
  }

  /** Current state of a job (memory for active jobs, else the store). */
  current(id: number): Readonly<StoredJob> | undefined {
    return this.running.get(id) ?? this.pending.get(id) ?? this.store.get(id);
  }

  /** Active jobs (running and pending) in id order. */
  activeJobs(): Readonly<StoredJob>[] {
    return [...this.running.values(), ...this.pending.values()].sort((a, b) => a.id - b.id);
  }

  /** Summaries of every job the store holds, or of the newest `limit` only, in id order. */
  summaries(limit?: number): JobSummary[] {
    const rows = limit === undefined ? this.store.allSummaries() : this.store.recentSummaries(limit);
    // A pending job's reason lives in memory only (the latest pass's).
    for (const r of rows) if (r.state === 'PENDING') r.reason = this.pending.get(r.id)?.reason ?? null;
    return rows;
  }

  /** Ids of the running jobs, ascending. */
  runningIds(): number[] { return [...this.running.keys()].sort((a, b) => a - b); }

  /** Jobs per state, from the store. */
  counts(): Record<string, number> { return this.store.counts(); }

  /** The job database, for accounting's own queries and samples (accounting/): never the jobs' transitions. */
  get historyDb(): Store['db'] { return this.store.db; }

  /** Excluded device ids, ascending. */
  excludedIds(): number[] { return [...this.deviceManager.excluded].sort((a, b) => a - b); }

  /**
   * Accept a checked submission: insert it PENDING, queue it and schedule.
   * Resolves to the job as submitted (PENDING, even if a pass starts it
   * before the reply) once its insert is durable (group commit with the
   * other submits of this turn). If that commit fails, the job never
   * existed: it leaves the queue and the promise rejects with the storage
   * error. Throws (nothing changed) when it cannot be inserted.
   */
  submit(owner: Owner, spec: Submission): Promise<Job> {
    this.checkPendingLimit(owner, 1);
    // The administrator's limits as they are now: the spec keeps the effective values.
    const limit = effectiveTimeLimit(spec.time_limit ?? null, this.config);
    const wait = effectiveQueueTimeout(spec.queue_timeout ?? null, this.config);
    let s = spec;
    if (limit !== (spec.time_limit ?? null)) s = { ...s, time_limit: limit };
    if (wait !== (spec.queue_timeout ?? null)) s = { ...s, queue_timeout: wait };
    s = withResources(s, resourcesOf(this.config)); // docs/behaviour.md §24.1
    const job = this.store.insert(owner, s, this.now());
    this.pending.set(job.id, job);
    this.queued(job);
    this.scheduleSoon();
    const reply = toWireJob(job);
    return this.store.durable().then(() => reply, (e: unknown) => {
      this.pending.delete(job.id); // rolled back with its transaction
      this.immediate.delete(job.id);
      throw e;
    });
  }

  /**
   * Accept a checked array (docs/behaviour.md §23.2): every task a PENDING
   * job, all inserted as one unit with consecutive ids (the first task's is
   * the array's), then queued and scheduled as submit does. Resolves to the
   * first task as submitted once the whole array is durable; if that commit
   * fails, no task ever existed.
   */
  submitArray(owner: Owner, specs: readonly Submission[], members: ReadonlyArray<Omit<ArrayMembership, 'id'>>): Promise<Job> {
    this.checkPendingLimit(owner, specs.length);
    const first = specs[0]!;
    const limit = effectiveTimeLimit(first.time_limit ?? null, this.config);
    const wait = effectiveQueueTimeout(first.queue_timeout ?? null, this.config);
    let eff = specs;
    if (limit !== (first.time_limit ?? null) || wait !== (first.queue_timeout ?? null)) {
      eff = specs.map((s) => ({ ...s, time_limit: limit, queue_timeout: wait }));
    }
    const res = resourcesOf(this.config); // docs/behaviour.md §24.1
    eff = eff.map((s) => withResources(s, res));
    const jobs = this.store.insertArray(owner, eff, members, this.now());
    for (const job of jobs) { this.pending.set(job.id, job); this.queued(job); }
    this.scheduleSoon();
    const reply = toWireJob(jobs[0]!);
    return this.store.durable().then(() => reply, (e: unknown) => {
      for (const job of jobs) { this.pending.delete(job.id); this.immediate.delete(job.id); }
      throw e;
    });
  }

  /** The active tasks of array `id` (pending and running), in id order. */
  private arrayTasks(id: number): StoredJob[] {
    const out: StoredJob[] = [];
    for (const j of this.running.values()) if (j.array?.id === id) out.push(j);
    for (const j of this.pending.values()) if (j.array?.id === id) out.push(j);
    return out.sort((a, b) => a.id - b.id);
  }

  /** Summaries of array `id`'s tasks, or of its task `index` (A_I), any state. */
  arraySummaries(id: number, index?: number): JobSummary[] {
    const head = this.current(id);
    if (!head?.array || head.array.id !== id) return [];
    const rows = this.store.arraySummaries(id, head.array.count, index);
    for (const r of rows) if (r.state === 'PENDING') r.reason = this.pending.get(r.id)?.reason ?? null;
    return rows;
  }

  /**
   * `xcancel A` (docs/behaviour.md §23.2): every active task of the array
   * whose id `id` is; an id that is no array's is cancelled alone. Resolves
   * once every cancellation is durable or has reached its supervisor.
   */
  cancelArray(id: number): Promise<void> {
    const j = this.current(id);
    if (!j?.array || j.array.id !== id) return this.cancel(id);
    // Running tasks first, so no pending one starts in a freed slot meanwhile.
    const tasks = this.arrayTasks(id).sort((a, b) => (a.state === b.state ? a.id - b.id : a.state === 'RUNNING' ? -1 : 1));
    const done: Promise<void>[] = [];
    for (const t of tasks) done.push(this.cancel(t.id));
    return Promise.all(done).then(() => undefined);
  }

  /**
   * Cancel a job (no-op when it has finished). Resolves once what was done
   * is on disk. Throws STORAGE: a client is told "cancellation requested"
   * only when the cancellation is durable (pending job) or has reached the
   * supervisor (running job), never when it was lost to a full disk.
   */
  cancel(id: number): Promise<void> {
    const j = this.current(id);
    if (!j) throw new XlurmError('JOB_NOT_FOUND', 'job not found');
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
    return this.store.durable();
  }

  /**
   * Exclude devices from (or include them back into) allocation. The whole
   * list is checked before anything changes; repeating is harmless. Running
   * jobs are never touched; pending ones may now fit (include). Returns the
   * excluded ids, ascending.
   */
  exclude(ids: readonly number[]): number[] { return this.changeExclusions(ids, true); }
  include(ids: readonly number[]): number[] { return this.changeExclusions(ids, false); }

  private changeExclusions(ids: readonly number[], exclude: boolean): number[] {
    const unknown = ids.filter((id) => !this.deviceManager.hasId(id));
    if (unknown.length) throw new XlurmError('UNKNOWN_DEVICE', `unknown device ID(s): ${unknown.join(', ')}`);
    const set = this.deviceManager.excluded;
    for (const id of ids) {
      if (exclude) set.add(id); else set.delete(id);
    }
    this.log(`${exclude ? 'excluded' : 'included'} device IDs ${ids.join(',')}`);
    this.scheduleSoon();
    return this.excludedIds();
  }

  /** Terminal jobs finished at or before `cutoff` (a bounded batch; see Store.expiredIds), none of them active. */
  expiredIds(cutoff: number): number[] {
    return this.store.expiredIds(cutoff).filter((id) => !this.running.has(id) && !this.pending.has(id));
  }

  /** Forget finished jobs whose files are gone (history cleanup); active jobs are never removed. */
  removeJobs(ids: readonly number[]): void {
    this.store.removeJobs(ids.filter((id) => !this.running.has(id) && !this.pending.has(id)));
  }

  /**
   * Queue-wait limits (docs/behaviour.md §21.6). One timer, for the earliest
   * deadline (submitted_at + queue_timeout, so a restart keeps it); when it
   * fires, every pending job past its deadline ends EXPIRED and the timer is
   * set for the next. A job that started or ended meanwhile simply is not
   * found then. `--immediate` jobs wait for their first pass instead.
   */
  private readonly expiry = new EarliestTimer(() => this.expireDue());
  private readonly immediate = new Set<number>();

  private queued(j: StoredJob): void {
    if (j.spec.immediate) this.immediate.add(j.id);
    this.armQueueWait(j);
    // Its workflow gate (docs/behaviour.md §23.1): a dependency that can never be met cancels it at once.
    const never = this.flow.queued(j);
    if (never) this.endNever(j.id, never);
  }

  /** Arm the queue-wait timer for a job; a held job's wait starts again on release (docs/behaviour.md §23.3). */
  private armQueueWait(j: StoredJob): void {
    const t = j.spec.queue_timeout;
    // submitted_at is whole seconds: one more, so no job is ended before it has waited its timeout.
    if (t !== undefined && t !== null && !j.spec.hold) this.expiry.arm(waitSince(j) + t + 1);
  }

  private expireDue(): void {
    const nowMs = Date.now();
    let next: number | undefined;
    for (const j of [...this.pending.values()]) {
      const t = j.spec.queue_timeout;
      if (t === undefined || t === null || j.spec.hold) continue;
      const deadline = waitSince(j) + t + 1;
      const due = deadline * 1000 <= nowMs;
      // Not written (storage): tried again in a second.
      if (!due || this.expire(j.id, `not started within the queue-wait timeout of ${formatDurationSecs(t)}`)) {
        const at = due ? Math.floor(nowMs / 1000) + 1 : deadline;
        next = next === undefined ? at : Math.min(next, at);
      }
    }
    if (next !== undefined) this.expiry.arm(next);
  }

  /**
   * After each pass: an `--immediate` job that pass considered and did not
   * start ends EXPIRED, with the pass's reason. One whose pass could not
   * record its reason (a start that could not be written) waits for the next.
   */
  private endImmediate(): void {
    if (this.immediate.size === 0) return;
    for (const id of [...this.immediate]) {
      const j = this.pending.get(id);
      if (!j) { this.immediate.delete(id); continue; }
      const r = j.reason;
      if (r === null) continue;
      if (!this.expire(id, `could not start immediately: ${r.message}`)) this.immediate.delete(id);
    }
  }

  /** A pending job ends EXPIRED (exit 75); returns the storage error when that could not be written. */
  private expire(id: number, error: string): XlurmError | undefined {
    const err = this.complete(id, { state: 'EXPIRED', exit_code: 75, finished_at: this.now(), error });
    if (!err) this.log(`job ${id}: expired: ${error}`);
    return err;
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
    const passStart = performance.now(); // xlurm_scheduler_pass_seconds (accounting/histogram.ts)
    this.pass();
    passSeconds.observe((performance.now() - passStart) / 1000);
    this.endImmediate();
    this.tellReasonChanges();
  }

  /**
   * The reason code last told to each followed job's listeners. xrun prints
   * a `Pending:` line whenever the code changes (docs/behaviour.md §20.4), so
   * after each pass the followed pending jobs whose code changed are pushed
   * as a `job` event. Only jobs with listeners are looked at: a pass over a
   * long queue pays nothing for the jobs nobody follows.
   */
  private readonly reasonTold = new Map<number, string | null>();

  private tellReasonChanges(): void {
    if (this.listeners.size === 0 && this.reasonTold.size === 0) return;
    for (const id of this.reasonTold.keys()) if (!this.listeners.has(id)) this.reasonTold.delete(id);
    for (const id of this.listeners.keys()) {
      const j = this.pending.get(id);
      if (!j) continue;
      const code = j.reason?.code ?? null;
      if (this.reasonTold.get(id) === code) continue;
      this.notify(j);
    }
  }

  private pass(): void {
    this.accrueUsage();
    if (this.pending.size === 0) return;
    const full = this.running.size >= this.cfg.maxRunning;
    // Nothing can start while every slot is taken: no work that grows with
    // the queue or the devices (the pass only says why: MaxRunning).
    const free = full ? NO_KEYS : this.devices.freeKeys();
    const pass = schedule({
      pending: full ? [] : this.pendingRequests(), cpuOnlyPending: this.pending.cpuOnly, pendingCounts: this.pending.countsBySize(),
      running: this.running.size, maxRunning: this.cfg.maxRunning,
      inventory: this.devices.inventory, free, blocked: full ? undefined : this.deviceBlocks(free), topology: this.topology(),
      waits: this.flow.waits,
      ...(full ? {} : { host: hostRoom(resourcesOf(this.config), this.running.values()) }),
      ...(full ? {} : this.sliceInput()),
      ...this.policyInputs(full),
    });
    // A pass that walked nothing (every slot taken) keeps the reservations of
    // the last one that did, for the jobs still pending (docs/behaviour.md §21.3).
    this.latestReservations = full ? this.latestReservations.filter((r) => this.pending.has(r.job)) : pass.reservations;
    const decisions = pass.decisions;
    if (decisions.length === 0) { this.pending.explain(pass.reasonOf); return; }
    const now = this.now();
    // A clock set back since a job was submitted must not start it before it was submitted.
    const startedAt = (id: number) => Math.max(now, this.pending.get(id)!.submitted_at);
    try {
      // All starts of this pass in one commit, durable before any spawn: a
      // crash after it fails these jobs, never reruns them.
      for (const d of decisions) this.store.markRunning(d.id, d.devices, startedAt(d.id), this.pending.get(d.id)!.spec.share);
      this.store.commit();
    } catch (e) {
      this.store.rollback(); // no half-started pass: every job stays PENDING
      this.log(`cannot persist job start: ${(e as Error).message}; will retry`);
      this.retryLater();
      return; // the reasons of the previous pass stay until the retry (this one's assume its starts)
    }
    this.pending.explain(pass.reasonOf);
    const started: StoredJob[] = [];
    for (const d of decisions) {
      const j = this.pending.get(d.id)!;
      j.started_at = startedAt(j.id);
      this.pending.delete(j.id);
      j.state = 'RUNNING';
      j.devices = d.devices;
      this.running.set(j.id, j);
      this.deviceManager.allocate(j.id, d.devices, j.spec.share);
      started.push(j);
    }
    // Its gate goes; `after` dependents and singletons of its name look again.
    for (const j of started) { this.flow.left(j); this.flow.touched(j); }
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

  /** Card sharing's input to a pass (docs/behaviour.md §25.2): the cards that may take slices, when sharing is on. */
  private sliceInput(): Partial<SchedulerInput> {
    const kinds = sharingKinds(this.config.sharing);
    this.deviceManager.memoryWatched = kinds; // memory freed on a card wakes the slices waiting for it
    return kinds.size ? { slices: this.deviceManager.sliceCards(kinds) } : {};
  }

  /** Pending jobs as the scheduler sees them, in its order (scheduler/order.ts; lazily: it may stop early). */
  private pendingRequests(): Iterable<PendingJob> {
    return this.pending.requests(this.cfg.fairShare ? this.usage.forOrder() : undefined);
  }

  /**
   * What xinfo shows: the device views with the latest reservations. An idle
   * reserved device reads `reserved`; one still held stays `allocated` to its
   * holder; both carry `reserved_for` (docs/behaviour.md §21.3).
   */
  deviceViews(): DeviceView[] {
    const views = this.devices.views();
    const reserved = this.reservedDevices();
    if (reserved.size === 0) return views;
    for (const v of views) {
      const job = reserved.get(deviceKey(v.device));
      if (job === undefined) continue;
      v.reserved_for = job;
      if (v.status === 'idle') v.status = 'reserved';
    }
    return views;
  }

  /** The latest reservations (reserve mode), for xinfo. */
  private latestReservations: Reservation[] = [];

  /** Per vendor: the reservation in force (reserve mode), for `xinfo --pools`. */
  reservations(): Map<string, { job: number; devices: number[]; expectedStart: number | null }> {
    const m = new Map<string, { job: number; devices: number[]; expectedStart: number | null }>();
    if (this.cfg.schedulerMode !== 'reserve') return m;
    for (const r of this.latestReservations) {
      if (this.pending.has(r.job)) m.set(r.kind, { job: r.job, devices: r.devices.map((d) => d.id), expectedStart: r.expectedStart });
    }
    return m;
  }

  /** Device key → the job its latest reservation is for. */
  reservedDevices(): Map<string, number> {
    const m = new Map<string, number>();
    if (this.cfg.schedulerMode !== 'reserve') return m;
    for (const r of this.latestReservations) {
      if (!this.pending.has(r.job)) continue;
      for (const d of r.devices) m.set(deviceKey(d), r.job);
    }
    return m;
  }

  /**
   * The policy's inputs to a pass (docs/behaviour.md §21.2–§21.4): the mode,
   * the size caps with the running jobs per size, and for `reserve` each
   * held device's holder with its expected end (started_at + time limit)
   * and the time. Work per running job only, never per pending job.
   */
  private policyInputs(full: boolean): Partial<SchedulerInput> {
    const c = this.cfg;
    const out: Partial<SchedulerInput> = {};
    // Running tasks of throttled arrays (docs/behaviour.md §23.2): work per running job only.
    let arrays: Map<number, number> | undefined;
    for (const j of this.running.values()) {
      const a = j.array;
      if (a && a.throttle !== null) (arrays ??= new Map()).set(a.id, (arrays.get(a.id) ?? 0) + 1);
    }
    if (arrays) out.arrayRunning = arrays;
    const caps = c.maxRunningBySize;
    if (caps && caps.size) {
      const bySize = new Map<number, number>();
      for (const j of this.running.values()) {
        const n = j.devices.length;
        if (caps.has(n)) bySize.set(n, (bySize.get(n) ?? 0) + 1);
      }
      out.sizeLimits = caps;
      out.runningBySize = bySize;
    }
    if (c.schedulerMode === 'reserve' && !full) {
      const holds = new Map<string, Hold>();
      for (const j of this.running.values()) {
        const limit = j.spec.time_limit ?? null;
        const end = limit === null || j.started_at === null ? null : j.started_at + limit;
        for (const d of j.devices) holds.set(deviceKey(d), { job: j.id, owner: j.owner.name, end });
      }
      out.mode = 'reserve';
      out.reserveMinDevices = c.reserveMinDevices;
      out.holds = holds;
      out.now = this.now();
    }
    // Fairness (docs/behaviour.md §22.2, §22.4): usage per owner, the limits with what each user holds.
    if (!full) {
      if (c.fairShare) out.usage = this.usage.forOrder();
      if (hasUserLimits(c.userLimits)) { out.userLimits = c.userLimits; out.byUser = this.holdings(); }
      if (c.schedulerMode === 'reserve') out.reservablePending = this.pending.countAtLeast(c.reserveMinDevices);
    }
    return out;
  }

  /**
   * Why each device that is not free is not, for the pass's reasons: its
   * holder and the holder's owner, or its probed state. One entry per device,
   * no strings: messages are built only when a reason is read.
   */
  private deviceBlocks(free: ReadonlySet<string>): Map<string, DeviceBlock> {
    const blocks = new Map<string, DeviceBlock>();
    for (const v of this.devices.views()) {
      const k = deviceKey(v.device);
      if (free.has(k)) continue;
      let b: DeviceBlock;
      if (v.status === 'allocated' && v.job !== null) {
        const owner = this.running.get(v.job)?.owner.name;
        b = owner === undefined ? { state: 'held', job: v.job } : { state: 'held', job: v.job, owner };
      } else if (v.status === 'disabled') b = { state: 'excluded' };
      else if (v.status === 'shared') b = { state: 'shared', jobs: (v.slices ?? []).map((x) => x.job) };
      else if (v.status === 'busy') {
        const pids = this.deviceManager.busyPids(v.device);
        b = pids ? { state: 'busy', pids } : { state: 'busy' };
      } else if (v.status === 'unknown' || v.status === 'unhealthy') b = { state: v.status };
      else b = { state: 'settling' }; // probed idle, but released since and not probed again
      blocks.set(k, b);
    }
    return blocks;
  }

  private retryTimer: NodeJS.Timeout | undefined;
  private retryLater(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => { this.retryTimer = undefined; this.scheduleSoon(); }, 1000);
    this.retryTimer.unref();
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
    this.deviceManager.release(j.devices, j.id);
    j.state = 'PENDING';
    j.devices = [];
    j.started_at = null;
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
  /**
   * The low-memory guard stops a running job (docs/behaviour.md §24.7): however
   * it then ends, it ends OUT_OF_MEMORY, exit 70, with the guard's error. The
   * guard signals the job's processes only once this returned true.
   */
  stopForLowMemory(id: number, error: string): boolean {
    if (!this.running.has(id)) return false;
    this.guardStops.set(id, error);
    return true;
  }

  complete(id: number, outcome: Outcome): XlurmError | undefined {
    const j = this.running.get(id) ?? this.pending.get(id);
    if (!j) return undefined;
    const guard = this.guardStops.get(id);
    if (guard !== undefined) outcome = { ...outcome, state: 'OUT_OF_MEMORY', exit_code: 70, error: guard };
    // The supervisor stamps finished_at with its own clock: if the clock was
    // set back while the job ran, it must still not end before it started.
    const floor = j.started_at ?? j.submitted_at;
    const o = outcome.finished_at < floor ? { ...outcome, finished_at: floor } : outcome;
    // Its last slice of fair-share usage, written with its end (docs/behaviour.md §22.2).
    if (j.state === 'RUNNING') this.usage.finish(j, o.finished_at, this.running.values());
    // --retry (docs/behaviour.md §23.5): a FAILED run with attempts left goes back to the queue instead.
    if (o.state === 'FAILED' && j.state === 'RUNNING' && (j.attempt ?? 1) <= (j.spec.retry ?? 0)) return this.retryRun(j, o);
    // Dependents this end can never satisfy end with it, in the same commit (docs/behaviour.md §23.1).
    const doomed = this.flow.doomedBy(id, o.state);
    try {
      for (const d of doomed) this.store.finish(d.id, this.neverOutcome(d.id, d.error), false);
      this.store.finish(id, o);
    } catch (e) {
      if (doomed.length) this.store.rollback(); // none of the cascade without the job's own end
      // Keep it in memory as it was; the supervisor's result file stays on
      // disk and is collected again once storage works.
      this.log(`job ${id}: cannot persist result: ${(e as Error).message}; will retry`);
      if (j.state === 'RUNNING') setTimeout(() => this.runner.adopt([id]), 1000).unref();
      return e instanceof XlurmError ? e : new XlurmError('STORAGE', `cannot write the job database: ${(e as Error).message}`);
    }
    this.running.delete(id);
    this.pending.delete(id);
    this.guardStops.delete(id);
    j.state = o.state;
    j.result = o;
    this.deviceManager.release(j.devices, j.id);
    this.scheduleSoon();
    this.endedWith(j, doomed);
    // Followers learn the result once it is on disk (a failed sync is logged
    // by the store; they are told what the daemon holds either way).
    const tell = () => { this.notify(j); this.listeners.delete(id); if (j.spec.notify) this.runner.notify?.(j); };
    this.store.durable().then(tell, tell);
    return undefined;
  }

  listen(id: number, fn: JobListener): () => void {
    let set = this.listeners.get(id);
    if (!set) { set = new Set(); this.listeners.set(id, set); }
    // The new follower is sent the job as it is now: only later changes of its code are news.
    if (!this.reasonTold.has(id)) this.reasonTold.set(id, this.pending.get(id)?.reason?.code ?? null);
    set.add(fn);
    return () => { set!.delete(fn); if (set!.size === 0 && this.listeners.get(id) === set) this.listeners.delete(id); };
  }

  private notify(j: StoredJob): void {
    const set = this.listeners.get(j.id);
    if (!set) return;
    const wire = toWireJob(j);
    this.reasonTold.set(j.id, wire.reason?.code ?? null);
    for (const fn of [...set]) fn(wire);
  }

  // --- Fairness (docs/behaviour.md §22, §23.3): priority, nice, top, fair share, per-user limits ---

  /** Fair-share usage (accounting/usage.ts). */
  private readonly usage: UsageBook;
  /** The latest `xlurm top` number handed out. */
  private topSeq = 0;
  private usageTimer: NodeJS.Timeout | undefined;
  private lastAccrual = 0;

  /** After recover: usage from the store, the top numbers, and the timer that keeps usage current and on disk. */
  private recoverFairness(pending: readonly StoredJob[]): void {
    this.usage.load(Date.now() / 1000);
    for (const j of pending) this.topSeq = Math.max(this.topSeq, j.top ?? 0);
    if (this.usageTimer) clearInterval(this.usageTimer);
    this.usageTimer = setInterval(() => this.persistUsage(), USAGE_PERSIST_MS);
    this.usageTimer.unref();
  }

  /** Charge the running jobs up to now and write every user's usage (the timer; shutdown). */
  persistUsage(): void {
    try {
      this.usage.persist(this.running.values(), Date.now() / 1000);
      this.usageError = '';
    } catch (e) {
      // Once per spell of failures (a full disk), not every 30 s until there is room again.
      const message = (e as Error).message;
      if (message !== this.usageError) this.log(`cannot write fair-share usage: ${message}; will retry`);
      this.usageError = message;
    }
  }
  /** The last failure of persistUsage, already logged. */
  private usageError = '';

  /** Before a pass: the running jobs' usage so far (at most once a second: the order needs no finer grain). */
  private accrueUsage(): void {
    const now = Date.now();
    if (now - this.lastAccrual < 1000 || this.running.size === 0) return;
    this.lastAccrual = now;
    this.usage.accrue(this.running.values(), now / 1000);
  }

  /** Ids of the pending jobs in the order the next pass would consider them (`xqueue -l`). */
  pendingOrder(): number[] {
    const ids: number[] = [];
    for (const j of this.pending.ordered(this.cfg.fairShare ? this.usage.forOrder() : undefined)) ids.push(j.id);
    return ids;
  }

  /** Every user's fair-share standing, by rank (`xlurm share`). */
  shares(): ShareRow[] {
    this.usage.accrue(this.running.values(), Date.now() / 1000);
    return this.usage.shares(Date.now() / 1000);
  }

  /** What each user's running jobs hold (docs/behaviour.md §22.4). Work per running job only. */
  private holdings(): Map<string, UserHolding> {
    const m = new Map<string, UserHolding>();
    for (const j of this.running.values()) {
      let h = m.get(j.owner.name);
      if (!h) m.set(j.owner.name, h = { jobs: 0, devices: 0, cpus: 0, memory: 0 });
      h.jobs++;
      h.devices += j.devices.length;
      h.cpus += j.spec.cpus ?? 0;
      h.memory += j.spec.mem ?? 0;
    }
    return m;
  }

  /** `pending_jobs` (docs/behaviour.md §22.4): refuse `n` more pending jobs over the owner's limit; root is exempt. */
  private checkPendingLimit(owner: Owner, n: number): void {
    const l = limitsOf(this.config.userLimits, owner.name, owner.uid);
    if (!l || l.pendingJobs <= 0) return;
    const have = this.pending.countOf(owner.uid);
    if (have + n > l.pendingJobs) throw new XlurmError('USER_LIMIT', pendingLimitMessage(owner.name, have, l.pendingJobs));
  }

  /** A job that must be pending for an order change. */
  private pendingJobFor(id: number): StoredJob {
    const j = this.pending.get(id);
    if (j) return j;
    if (!this.current(id)) throw new XlurmError('JOB_NOT_FOUND', 'job not found');
    throw new XlurmError('INVALID_ARGUMENT', `job ${id} is not pending`);
  }

  /** Write a pending job's order keys, move it in the queue, schedule; resolves to the job once durable. */
  private reorder(j: StoredJob, priority: number, top: number, spec: Submission): Promise<Job> {
    this.store.setOrderKeys(j.id, priority, top, spec);
    this.pending.rekey(j, () => { j.priority = priority; j.top = top; j.spec = spec; });
    this.scheduleSoon();
    const reply = toWireJob(j);
    return this.store.durable().then(() => reply);
  }

  /** `xlurm priority ID N` (root; the handler checks): a pending job's admin priority, −1000..1000. */
  setPriority(id: number, priority: number): Promise<Job> {
    const j = this.pendingJobFor(id);
    return this.reorder(j, priority, j.top ?? 0, j.spec);
  }

  /**
   * A pending job's nice (0..10000; `xlurm update --nice`). Only root
   * (`mayLower`) may lower it: a user can only move their own job back
   * (docs/behaviour.md §22.1). The caller has checked ownership.
   */
  setNice(id: number, nice: number, mayLower: boolean): Promise<Job> {
    if (!Number.isInteger(nice) || nice < 0 || nice > 10000) throw new XlurmError('INVALID_ARGUMENT', `invalid nice ${nice}: use 0 to 10000`);
    const j = this.pendingJobFor(id);
    const cur = j.spec.nice ?? 0;
    if (nice < cur && !mayLower) throw new XlurmError('PERMISSION_DENIED', `permission denied: only root may lower a job's nice (job ${id} has nice ${cur})`);
    if (nice === cur) return this.store.durable().then(() => toWireJob(j));
    const spec: Submission = { ...j.spec, nice };
    if (nice === 0) delete spec.nice;
    return this.reorder(j, j.priority ?? 0, j.top ?? 0, spec);
  }

  /** `xlurm top ID` (owner or root; the handler checks): ahead of the owner's other pending jobs, never of other users'. */
  top(id: number): Promise<Job> {
    const j = this.pendingJobFor(id);
    return this.reorder(j, j.priority ?? 0, ++this.topSeq, j.spec);
  }

  /** Told after a reload took effect (main.ts re-arms the retention timer). */
  configApplied: ((cfg: DaemonConfig) => void) | undefined;

  /**
   * Take a re-read configuration (reload, SIGHUP) as one synchronous unit:
   * every check first, then every change, so a refused reload changes
   * nothing. Running jobs are never touched; later passes, admissions and
   * cleanups use the new settings. Exclusions: the IDs added to the
   * configuration's list are excluded and the IDs removed from it included
   * again; an ID the list did not change keeps what `xlurm exclude` or
   * `include` made of it. Returns the dotted keys whose value changed.
   */
  applyConfig(next: DaemonConfig): string[] {
    const prev = this.config;
    if (next.backend !== prev.backend) {
      throw new XlurmError('RELOAD_REFUSED', 'reload cannot change daemon.backend; restart the daemon when the queue is idle');
    }
    const unknown = next.excludeIds.filter((id) => !this.deviceManager.hasId(id));
    if (unknown.length) {
      const key = 'daemon.exclude_device_ids';
      const fromFlag = keysFromFlags(next).includes(key);
      const problem = `unknown device ID${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`;
      throw new XlurmError('INVALID_CONFIG', fromFlag ? `${problem} in --exclude-device-ids`
        : formatProblem({ file: next.source.file, line: next.source.lines.get(key), key, problem }));
    }
    const badGroup = checkGroupIds(next.groups, this.deviceManager.inventory);
    if (badGroup) {
      throw new XlurmError('INVALID_CONFIG', formatProblem({ file: next.source.file, line: next.source.lines.get(badGroup.key), ...badGroup }));
    }
    const changed: string[] = [];
    if (next.groupAffinity !== prev.groupAffinity) changed.push('devices.group_affinity');
    if (JSON.stringify(next.groups) !== JSON.stringify(prev.groups)) changed.push('devices.groups');
    if (next.maxRunning !== prev.maxRunning) changed.push('daemon.max_running');
    if (next.maxConnections !== prev.maxConnections) changed.push('daemon.max_connections');
    if (next.maxConnectionsPerUser !== prev.maxConnectionsPerUser) changed.push('daemon.max_connections_per_user');
    for (const [key, field] of LIMIT_KEYS) if (next[field] !== prev[field]) changed.push(key);
    if (next.schedulerMode !== prev.schedulerMode) changed.push('scheduler.mode');
    if (next.reserveMinDevices !== prev.reserveMinDevices) changed.push('scheduler.reserve_min_devices');
    if (JSON.stringify([...next.maxRunningBySize ?? []]) !== JSON.stringify([...prev.maxRunningBySize ?? []])) changed.push('scheduler.max_running_by_size');
    if (next.retentionSecs !== prev.retentionSecs || next.retention !== prev.retention) changed.push('daemon.retention');
    changed.push(...changedAccountingKeys(prev.accounting, next.accounting));
    if (next.fairShare !== prev.fairShare) changed.push('scheduler.fair_share');
    if (next.fairShareHalfLife !== prev.fairShareHalfLife) changed.push('scheduler.fair_share_half_life');
    if (JSON.stringify(describeUserLimits(next.userLimits)) !== JSON.stringify(describeUserLimits(prev.userLimits))) changed.push('limits.users');
    changed.push(...changedResourcesKeys(resourcesOf(prev), resourcesOf(next)));
    changed.push(...changedSharingKeys(prev.sharing, next.sharing));
    const before = new Set(prev.excludeIds);
    const after = new Set(next.excludeIds);
    const set = this.deviceManager.excluded;
    for (const id of before) if (!after.has(id)) set.delete(id);
    for (const id of after) if (!before.has(id)) set.add(id);
    if (before.size !== after.size || [...after].some((id) => !before.has(id))) changed.push('daemon.exclude_device_ids');
    this.config = next;
    this.runner.killGrace = next.killGrace;
    this.usage.setHalfLife(next.fairShareHalfLife, Date.now() / 1000, this.running.values());
    this.log(`configuration reloaded from ${next.source.file}${next.source.found ? '' : ' (no such file: defaults)'}` +
      (changed.length ? `; changed ${changed.join(', ')}` : '; nothing changed'));
    this.configApplied?.(next);
    // A larger max_running or an included device may let pending jobs start.
    this.scheduleSoon();
    return changed;
  }

  // --- Workflows (docs/behaviour.md §23.1, §23.3-§23.5) ---

  /** The gates of pending jobs: held, dependencies, begin times (workflow.ts). */
  private readonly flow = new Workflow({
    job: (id) => this.current(id),
    active: () => this.activeIter(),
    changed: () => this.scheduleSoon(),
  });

  private *activeIter(): Generator<StoredJob> {
    yield* this.running.values();
    yield* this.pending.values();
  }

  /** A dependent that can never start: CANCELLED, exit 130, with the dependency's error. */
  private neverOutcome(id: number, error: string): Outcome {
    const j = this.pending.get(id);
    return { state: 'CANCELLED', exit_code: 130, finished_at: Math.max(this.now(), j?.submitted_at ?? 0), error };
  }

  /** A queued job whose dependency can never be met ends now (its own dependents with it). */
  private endNever(id: number, error: string): void {
    if (!this.complete(id, this.neverOutcome(id, error))) this.log(`job ${id}: cancelled: ${error}`);
  }

  /**
   * After `j` ended (committed with the dependents `doomed`): those end in
   * memory too, and whatever depends on any of them looks again.
   */
  private endedWith(j: StoredJob, doomed: readonly Doomed[]): void {
    this.flow.left(j);
    const ended: StoredJob[] = [j];
    for (const d of doomed) {
      const dj = this.pending.get(d.id);
      if (!dj) continue;
      const o = this.neverOutcome(d.id, d.error);
      this.pending.delete(d.id);
      this.immediate.delete(d.id);
      dj.state = o.state;
      dj.result = o;
      this.flow.left(dj);
      ended.push(dj);
      this.log(`job ${d.id}: cancelled: ${d.error}`);
      // As complete tells its job's followers, and runs its --notify (docs/behaviour.md §23.7).
      const tell = () => { this.notify(dj); this.listeners.delete(dj.id); if (dj.spec.notify) this.runner.notify?.(dj); };
      this.store.durable().then(tell, tell);
    }
    // What a restart left inconsistent (a parent that ended before this daemon knew its dependents) ends here too.
    for (const e of ended) for (const late of this.flow.touched(e)) this.endNever(late.id, late.error);
  }

  /**
   * A FAILED run of a job with retries left (docs/behaviour.md §23.5): back
   * to PENDING with the same id and the next attempt, its queue wait counted
   * from now; the log gets the retry line. Returns the storage error when
   * that could not be written (the result is then collected again later).
   */
  private retryRun(j: StoredJob, o: Outcome): XlurmError | undefined {
    const k = j.attempt ?? 1;
    const n = j.spec.retry ?? 0;
    const now = this.now();
    try {
      this.store.requeue(j.id, k + 1, now);
      this.store.commit();
    } catch (e) {
      this.log(`job ${j.id}: cannot persist its retry: ${(e as Error).message}; will retry`);
      setTimeout(() => this.runner.adopt([j.id]), 1000).unref();
      return e instanceof XlurmError ? e : new XlurmError('STORAGE', `cannot write the job database: ${(e as Error).message}`);
    }
    const err = prepareRetry(this.home, j.id, retryLine(k, n, o.exit_code));
    if (err) this.log(`job ${j.id}: before its retry: ${err.message}`);
    this.running.delete(j.id);
    this.deviceManager.release(j.devices, j.id);
    j.state = 'PENDING';
    j.devices = [];
    j.started_at = null;
    j.attempt = k + 1;
    j.queued_at = now;
    const queued = [j, ...this.pending.values()].sort((x, y) => x.id - y.id);
    this.pending.clear();
    for (const q of queued) this.pending.set(q.id, q);
    this.log(`job ${j.id}: failed with exit ${o.exit_code}; retry ${k} of ${n}`);
    this.queued(j);
    this.flow.touched(j);
    this.notify(j);
    this.scheduleSoon();
    return undefined;
  }

  /** Pending jobs of the list that are not PENDING, as the refusal names them. */
  private notPending(verb: string, ids: readonly number[]): void {
    for (const id of ids) {
      const j = this.current(id);
      if (!j) throw new XlurmError('JOB_NOT_FOUND', 'job not found');
      if (j.state !== 'PENDING') throw new XlurmError('INVALID_ARGUMENT', `cannot ${verb} job ${id}: it is ${j.state}`);
    }
  }

  /**
   * `xlurm hold` / `release` (docs/behaviour.md §23.3): every job must be
   * PENDING (checked first: nothing changes otherwise). A released job's
   * queue wait starts again now. Resolves once the change is durable.
   */
  setHeld(ids: readonly number[], held: boolean): Promise<void> {
    this.notPending(held ? 'hold' : 'release', ids);
    const now = this.now();
    const changes: Array<[StoredJob, Submission]> = [];
    for (const id of new Set(ids)) {
      const j = this.pending.get(id)!;
      if ((j.spec.hold === true) === held) continue;
      const { hold: _was, ...rest } = j.spec;
      changes.push([j, held ? { ...rest, hold: true } : rest]);
    }
    // One unit: every job changes or none does (docs/behaviour.md §28.4).
    this.store.unit(() => { for (const [j, spec] of changes) this.store.updateSpec(j.id, spec, held ? undefined : now); });
    for (const [j, spec] of changes) {
      j.spec = spec;
      if (!held) { j.queued_at = now; this.armQueueWait(j); }
      this.flow.refresh(j);
      this.log(`job ${j.id}: ${held ? 'held' : 'released'}`);
    }
    this.scheduleSoon();
    return this.store.durable();
  }

  /**
   * `xlurm update -t` of a RUNNING job (docs/behaviour.md §23.3): its owner
   * may lower the limit, only root raise it (within max_time_limit). The
   * supervisor is told through its limit file first, then the spec is
   * written: a limit already past ends the job TIMED_OUT at once.
   */
  private updateRunning(j: StoredJob, u: { time_limit?: number; [k: string]: unknown }, isRoot: boolean): Promise<Job> {
    const others = Object.keys(u).filter((k) => k !== 'time_limit');
    if (others.length || u.time_limit === undefined) {
      throw new XlurmError('INVALID_ARGUMENT', `cannot update job ${j.id}: it is RUNNING (only its time limit can be changed)`);
    }
    const limit = effectiveTimeLimit(u.time_limit, this.config)!;
    const was = j.spec.time_limit ?? null;
    if (!isRoot && was !== null && limit > was) {
      throw new XlurmError('PERMISSION_DENIED', `permission denied: only root may raise the time limit of a running job (job ${j.id} has ${formatDurationSecs(was)})`);
    }
    if (limit === was) return this.store.durable().then(() => toWireJob(j));
    try {
      writeLimit(this.home, j.id, limit);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      const why = err.code === 'ENOSPC' || err.code === 'EDQUOT' ? 'disk is full; free space under XLURM_HOME and retry' : err.message;
      throw new XlurmError('STORAGE', `cannot update job ${j.id}: cannot write its limit file: ${why}`);
    }
    const spec: Submission = { ...j.spec, time_limit: limit };
    this.store.updateSpec(j.id, spec);
    j.spec = spec;
    this.log(`job ${j.id}: time limit ${was === null ? 'none' : formatDurationSecs(was)} -> ${formatDurationSecs(limit)} while running`);
    const reply = toWireJob(j);
    return this.store.durable().then(() => reply);
  }

  /**
   * `xlurm update` (docs/behaviour.md §23.3) of a PENDING job: a new time
   * limit (within max_time_limit), queue-wait timeout, name or begin time.
   * `isRoot`: the caller is root (only root may raise a limit). Resolves to
   * the job as changed once that is durable.
   */
  update(id: number, u: { time_limit?: number; queue_timeout?: number; name?: string; begin_at?: number | null; nice?: number }, isRoot: boolean): Promise<Job> {
    const j = this.current(id);
    if (!j) throw new XlurmError('JOB_NOT_FOUND', 'job not found');
    if (j.state === 'RUNNING') return this.updateRunning(this.running.get(id)!, u, isRoot);
    if (j.state !== 'PENDING') throw new XlurmError('INVALID_ARGUMENT', `cannot update job ${id}: it is ${j.state}`);
    const p = this.pending.get(id)!;
    // Every refusal before any change (docs/behaviour.md §28.4): the cap (the
    // submission's words), then the nice rule (§22.1: only root may lower it).
    const limit = u.time_limit === undefined ? undefined : effectiveTimeLimit(u.time_limit, this.config);
    let spec: Submission = { ...p.spec };
    const renice = u.nice !== undefined && u.nice !== (p.spec.nice ?? 0);
    if (u.nice !== undefined) {
      if (!Number.isInteger(u.nice) || u.nice < 0 || u.nice > 10000) throw new XlurmError('INVALID_ARGUMENT', `invalid nice ${u.nice}: use 0 to 10000`);
      const cur = p.spec.nice ?? 0;
      if (u.nice < cur && !isRoot) throw new XlurmError('PERMISSION_DENIED', `permission denied: only root may lower a job's nice (job ${id} has nice ${cur})`);
      if (u.nice === 0) delete spec.nice; else spec.nice = u.nice;
    }
    if (limit !== undefined) spec.time_limit = limit;
    if (u.queue_timeout !== undefined) spec.queue_timeout = u.queue_timeout;
    if (u.name !== undefined) spec.name = u.name;
    if (u.begin_at !== undefined) {
      if (u.begin_at === null) { const { begin_at: _b, ...rest } = spec; spec = rest; } else spec.begin_at = u.begin_at;
    }
    // One unit: the spec and (for a new nice) the order keys are written together or not at all.
    this.store.unit(() => {
      this.store.updateSpec(id, spec);
      if (renice) this.store.setOrderKeys(id, p.priority ?? 0, p.top ?? 0, spec);
    });
    // Re-indexed under its new name, begin time and nice.
    this.flow.left(p);
    if (renice) this.pending.rekey(p, () => { p.spec = spec; }); else p.spec = spec;
    this.armQueueWait(p);
    const never = this.flow.queued(p);
    if (never) this.endNever(id, never);
    this.log(`job ${id}: updated (${Object.keys(u).join(', ')})`);
    this.scheduleSoon();
    const reply = toWireJob(p);
    return this.store.durable().then(() => reply);
  }
}
