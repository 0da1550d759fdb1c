/**
 * The job store: one SQLite file in WAL mode, written only by the daemon.
 * Writes use group commit: they join one open transaction that is committed
 * at the end of the current event-loop turn, or at once by commit().
 *
 * Durability without blocking the event loop: SQLite runs with
 * synchronous=NORMAL, so COMMIT appends to the WAL without fsync, and the
 * store then fdatasync()s the WAL itself on libuv's thread pool. One sync is
 * in flight at a time and covers every commit made before it started, so
 * commits made while it runs share the next one (pipelined group commit).
 * durable() resolves only once everything written so far is synced: a submit
 * is acknowledged, a supervisor spawned (RUNNING before spawn) and a result
 * reported only after that. SQLite itself syncs the WAL before each
 * checkpoint and the database after it, so the checkpointed part is as safe
 * as with synchronous=FULL (docs/reliability.md).
 */
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import type { ArrayMembership, ArrayRef, Device, Job, JobState, JobSummary, Outcome, Owner, Submission } from '@xlurm/protocol';
import { XlurmError } from '@xlurm/protocol';
import { MIGRATIONS, SCHEMA_VERSION } from './schema';
import { deviceRate } from '../sharing/weight';

interface Row {
  id: number; owner_uid: number; owner_gid: number; owner_name: string; name: string;
  count: number; kind: string | null; device_ids: string | null; spec: string; state: string;
  devices: string; submitted_at: number; started_at: number | null; finished_at: number | null;
  exit_code: number | null; error: string | null;
  cpus: number; mem: number; peak_memory: number | null; cpu_seconds: number | null;
  attempt: number; queued_at: number | null;
  array_id: number | null; array_task: string | null;
  priority: number; top: number;
  text_id: number | null;
}

/** A job as the daemon keeps it: the wire Job (plus whatever bookkeeping the daemon alone needs). */
export interface StoredJob extends Job {
  /** `xlurm top`: the owner's latest move has the highest number; 0 or absent: not moved (docs/behaviour.md §23.3). */
  top?: number;
  /** An array task's membership (docs/behaviour.md §23.2): the wire's {id, index, count} and what the daemon alone needs. */
  array?: ArrayMembership | null;
  /** Since when it waits in the queue (released from a hold, back for a retry); absent: since submission (docs/behaviour.md §23.3). */
  queued_at?: number;
}

function owner(r: Row): Owner { return { uid: r.owner_uid, gid: r.owner_gid, name: r.owner_name }; }

function outcome(r: Row): Outcome | null {
  if (r.finished_at === null || r.exit_code === null) return null;
  const o: Outcome = { state: r.state as Outcome['state'], exit_code: r.exit_code, finished_at: r.finished_at, error: r.error };
  // What the job's cgroup measured, only where it had one (docs/behaviour.md §24.5).
  if (r.peak_memory !== null) o.peak_memory = r.peak_memory;
  if (r.cpu_seconds !== null) o.cpu_seconds = r.cpu_seconds;
  return o;
}

// --- Arrays (docs/behaviour.md §23.2) ---
/** What array_task holds: the membership less the id (that is array_id). */
type StoredMembership = Omit<ArrayMembership, 'id'>;

function membershipOf(r: Row): ArrayMembership | null {
  if (r.array_id === null || r.array_task === null) return null;
  const m = JSON.parse(r.array_task) as StoredMembership;
  return { id: r.array_id, index: m.index, count: m.count, min: m.min, max: m.max, throttle: m.throttle, params: m.params };
}

function arrayRefOf(r: Row): ArrayRef | null {
  if (r.array_id === null || r.array_task === null) return null;
  const m = JSON.parse(r.array_task) as StoredMembership;
  return { id: r.array_id, index: m.index, count: m.count };
}

/** The wire's array key: {id, index, count}, or null for other jobs. */
export function wireArray(a: ArrayRef | null | undefined): ArrayRef | null {
  return a ? { id: a.id, index: a.index, count: a.count } : null;
}

// --- An array's text, kept once (docs/behaviour.md §28.2) ---
/** What job_texts holds: an array's environment, script and (absent for arrays stored before it) command. */
export interface SharedText { env: Submission['env']; script: string | null; command?: string[] }

/** Finds a text by id: one parse per text however many tasks refer to it. */
export type TextLookup = (id: number) => SharedText;

/**
 * A task's row without what its array's text already holds: a key the
 * task shares with the text (the very same object, or equal words) is
 * left out, so a 1 MiB environment costs the store once per array.
 */
function taskSpecText(spec: Submission, text: SharedText): string {
  const { env, script, command, ...rest } = spec;
  const own: Partial<Submission> = rest;
  if (env !== text.env) own.env = env;
  if ((script ?? null) !== text.script) own.script = script ?? null;
  if (!sameWords(command, text.command)) own.command = command;
  return JSON.stringify(own);
}

function sameWords(a: readonly string[], b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (!b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A task's spec: its own keys, the rest from its array's text (the text's objects, shared, never copied). */
function specOf(r: Row, texts?: TextLookup): Submission {
  const spec = JSON.parse(r.spec) as Submission;
  if (r.text_id === null || !texts) return spec;
  const t = texts(r.text_id);
  if (spec.env === undefined) spec.env = t.env;
  if (spec.script === undefined) spec.script = t.script;
  if (spec.command === undefined) spec.command = t.command ?? [];
  return spec;
}

/**
 * A job from its row. A pending job's reason comes from the scheduling pass
 * (PendingJobs adds it as an accessor when it queues the job), never from
 * disk: a pending job is made without one, since turning a data property
 * into an accessor puts the object into dictionary mode (about 750 bytes
 * more per job: 75 MiB for a queue of 100,000, docs/behaviour.md §28.2);
 * adding the accessor to an object that lacks it keeps its shape shared.
 * Readers take a missing reason as null.
 */
/** A job before PendingJobs has given it its reason. */
type Unreasoned = Omit<StoredJob, 'reason'> & { reason?: StoredJob['reason'] };

export function rowToJob(r: Row, texts?: TextLookup, owners?: Map<number, Owner>): StoredJob {
  let o = owners?.get(r.owner_uid);
  if (!o || o.gid !== r.owner_gid || o.name !== r.owner_name) { o = owner(r); owners?.set(r.owner_uid, o); }
  const j: Unreasoned = {
    id: r.id,
    owner: o,
    spec: specOf(r, texts),
    state: r.state as JobState,
    devices: JSON.parse(r.devices) as Device[],
    submitted_at: r.submitted_at,
    started_at: r.started_at,
    result: outcome(r),
    array: membershipOf(r),
    attempt: r.attempt,
    ...(r.queued_at !== null ? { queued_at: r.queued_at } : {}),
    priority: r.priority, top: r.top,
  };
  if (r.state !== 'PENDING') j.reason = null;
  return j as StoredJob;
}

/** A row's nice (docs/behaviour.md §22.1), from its spec: only a job that was given one pays for the parse. */
function niceOf(r: Row): number {
  return r.spec.includes('"nice":') ? (JSON.parse(r.spec) as Submission).nice ?? 0 : 0;
}

/** A row's share (docs/behaviour.md §25.1), from its spec: only a job that asked for one pays for the parse. */
function shareOf(r: Row): JobSummary['share'] {
  return r.spec.includes('"share":') ? (JSON.parse(r.spec) as Submission).share ?? null : null;
}

function rowToSummary(r: Row): JobSummary {
  const s: JobSummary = {
    id: r.id, owner: owner(r), name: r.name, state: r.state as JobState, count: r.count,
    kind: r.kind as JobSummary['kind'], devices: JSON.parse(r.devices) as Device[],
    submitted_at: r.submitted_at, started_at: r.started_at, finished_at: r.finished_at, reason: null,
    cpus: r.cpus, mem: r.mem, array: arrayRefOf(r),
    priority: r.priority, nice: niceOf(r), share: shareOf(r),
  };
  if (r.device_ids !== null) {
    // keep the spec's key order: device_ids sits between count and kind
    return {
      id: s.id, owner: s.owner, name: s.name, state: s.state, count: s.count,
      device_ids: JSON.parse(r.device_ids) as number[], kind: s.kind, devices: s.devices,
      submitted_at: s.submitted_at, started_at: s.started_at, finished_at: s.finished_at, reason: null,
      cpus: r.cpus, mem: r.mem, array: s.array,
      priority: s.priority, nice: s.nice, share: s.share ?? null,
    };
  }
  return s;
}

/** Wire form of a job (drops daemon bookkeeping; a pending job's reason as of the latest pass). */
export function toWireJob(j: StoredJob): Job {
  return {
    id: j.id, owner: j.owner, spec: j.spec, state: j.state, devices: j.devices,
    submitted_at: j.submitted_at, started_at: j.started_at, result: j.result, reason: j.reason ?? null,
    queue_timeout: j.spec.queue_timeout ?? null,
    cpus: j.spec.cpus ?? 0, mem: j.spec.mem ?? 0, array: wireArray(j.array),
    attempt: j.attempt ?? 1, dependency: j.spec.dependency ?? null, begin_at: j.spec.begin_at ?? null,
    priority: j.priority ?? 0, nice: j.spec.nice ?? 0, share: j.spec.share ?? null,
  };
}

/** Summary of an in-memory job (same shape as rowToSummary). */
export function toSummary(j: Job): JobSummary {
  const base = { id: j.id, owner: j.owner, name: j.spec.name, state: j.state, count: j.spec.count };
  const tail = {
    kind: j.spec.kind ?? null, devices: j.devices, submitted_at: j.submitted_at,
    started_at: j.started_at, finished_at: j.result ? j.result.finished_at : null, reason: j.reason ?? null,
    cpus: j.spec.cpus ?? 0, mem: j.spec.mem ?? 0, array: wireArray(j.array),
    priority: j.priority ?? 0, nice: j.spec.nice ?? 0, share: j.spec.share ?? null,
  };
  return j.spec.device_ids !== undefined ? { ...base, device_ids: j.spec.device_ids, ...tail } : { ...base, ...tail };
}

/** Storage errors (disk full, I/O error) become a clear, stable error for clients. */
function storageError(e: unknown): XlurmError {
  if (e instanceof XlurmError) return e;
  const code = (e as { code?: string }).code ?? '';
  if (code === 'SQLITE_FULL') return new XlurmError('STORAGE', 'cannot write the job database: disk is full; free space under XLURM_HOME and retry');
  return new XlurmError('STORAGE', `cannot write the job database: ${(e as Error).message}`);
}

/** WAL header + 1000 frames of 4 KiB pages (+24-byte frame headers), and some slack. */
const WAL_PREGROW_BYTES = 32 + 1010 * (4096 + 24);

/** Pause before a failed WAL sync is tried again for waiters that arrived during it. */
const SYNC_RETRY_MS = 1000;

export class Store {
  readonly db: Database.Database;
  private readonly stmts;
  /** Callers waiting for the open transaction to be committed and synced (or to fail). */
  private waiters: Array<(err: XlurmError | null) => void> = [];
  /** Callers waiting for a committed transaction to be synced, by commit number. */
  private syncWaiters: Array<{ seq: number; fn: (err: XlurmError | null) => void }> = [];
  /** Commits made, and the highest one known to be on disk. */
  private committed = 0;
  private synced = 0;
  private syncing = false;
  /** The WAL, opened for fdatasync(2) (the inode is synced whichever descriptor is used). */
  private walFd: number;
  private readonly walFile: string;
  private flushQueued = false;
  /** Told when a sync of the WAL fails (the daemon logs it). */
  onSyncError: ((e: Error) => void) | undefined;
  /** Called at the end of a turn just before its group commit (the daemon runs a queued pass). */
  beforeFlush: (() => void) | undefined;

  /**
   * Open (or create) the database. A file that is not an xlurm database, or
   * is corrupt, or is newer than this program, stops start-up with a clear
   * message: never a silent reset.
   */
  constructor(file: string) {
    // An existing file is identified and checked read-only first, so a
    // foreign, newer or damaged file is refused before anything (journal
    // mode, migrations) is written to it.
    if (fs.existsSync(file)) Store.inspect(file);
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { fileMustExist: false });
      // WAL: readers never block the writer. A committed transition (RUNNING
      // before spawn) still survives power loss: see synchronous below.
      db.pragma('journal_mode = WAL');
      // NORMAL: COMMIT does not fsync; the store syncs the WAL off the event
      // loop and acknowledges nothing before that (see the header).
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      db.pragma('busy_timeout = 5000');
      this.migrate(db);
    } catch (e) {
      try { db?.close(); } catch { /* already unusable */ }
      if (e instanceof XlurmError) throw e;
      throw new XlurmError('STORAGE', `cannot open job database ${file}: ${(e as Error).message}; move it aside to start with an empty queue`);
    }
    this.db = db;
    this.walFile = `${file}-wal`;
    // Opened once, now: a daemon out of descriptors later must still be able to sync.
    try {
      this.walFd = fs.openSync(this.walFile, 'r+');
    } catch (e) {
      db.close();
      throw new XlurmError('STORAGE', `cannot open the job database's write-ahead log ${this.walFile}: ${(e as Error).message}`);
    }
    // Only an optimisation: a full disk must not stop start-up.
    try { Store.pregrowWal(this.walFd); } catch { /* commits append instead */ }
    this.stmts = {
      insert: db.prepare(`INSERT INTO jobs (owner_uid, owner_gid, owner_name, name, count, kind, device_ids, spec, state, submitted_at, cpus, mem)
                          VALUES (@uid, @gid, @oname, @name, @count, @kind, @device_ids, @spec, 'PENDING', @now, @cpus, @mem)`),
      get: db.prepare('SELECT * FROM jobs WHERE id = ?'),
      active: db.prepare(`SELECT * FROM jobs WHERE state IN ('PENDING', 'RUNNING') ORDER BY id`),
      start: db.prepare(`UPDATE jobs SET state = 'RUNNING', devices = ?, started_at = ?, device_weight = ? WHERE id = ? AND state = 'PENDING'`),
      unstart: db.prepare(`UPDATE jobs SET state = 'PENDING', devices = '[]', started_at = NULL WHERE id = ? AND state = 'RUNNING'`),
      finish: db.prepare(`UPDATE jobs SET state = ?, exit_code = ?, finished_at = ?, error = ?, peak_memory = ?, cpu_seconds = ?
                          WHERE id = ? AND state IN ('PENDING', 'RUNNING')`),
      recent: db.prepare('SELECT * FROM jobs ORDER BY id DESC LIMIT ?'),
      all: db.prepare('SELECT * FROM jobs ORDER BY id'),
      expired: db.prepare(`SELECT id FROM jobs WHERE finished_at IS NOT NULL AND finished_at <= ?
                           AND state NOT IN ('PENDING', 'RUNNING') ORDER BY id LIMIT 1000`),
      remove: db.prepare('DELETE FROM jobs WHERE id = ?'),
      counts: db.prepare('SELECT state, count(*) AS n FROM jobs GROUP BY state'),
      running: db.prepare(`SELECT id FROM jobs WHERE state = 'RUNNING' ORDER BY id`),
      text: db.prepare('SELECT text FROM job_texts WHERE id = ?'),
      insertText: db.prepare('INSERT INTO job_texts (text) VALUES (?)'),
      // Which of env, script and command a row keeps itself (NULL: from its text).
      ownKeys: db.prepare(`SELECT text_id, json_type(spec, '$.env') AS env, json_type(spec, '$.script') AS script,
                           json_type(spec, '$.command') AS command FROM jobs WHERE id = ?`),
    };
  }

  /**
   * Identify and check an existing database without writing to it: empty
   * (fine, initialised later), an xlurm database this program can use, or
   * a clear STORAGE error naming the file.
   */
  static inspect(file: string): void {
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { readonly: true, fileMustExist: true });
      const version = db.pragma('user_version', { simple: true }) as number;
      const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((r) => r.name);
      if (version === 0 && tables.length === 0) return;
      const app = tables.includes('meta')
        ? (db.prepare(`SELECT value FROM meta WHERE key = 'application'`).get() as { value: string } | undefined)?.value : undefined;
      if (app !== 'xlurm') throw new XlurmError('STORAGE', `job database ${file} is not an xlurm database; move it aside to start with an empty queue`);
      if (version > SCHEMA_VERSION) {
        throw new XlurmError('STORAGE', `job database ${file} has schema version ${version}, newer than this xlurm (${SCHEMA_VERSION}); install the newer xlurm`);
      }
      const check = String(db.pragma('quick_check', { simple: true }));
      if (check !== 'ok') {
        // One line: the first problem found, and how many more there are.
        const problems = check.split('\n').filter((l) => l && !l.startsWith('*** '));
        throw new Error(`integrity check failed: ${problems[0] ?? check}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`);
      }
    } catch (e) {
      if (e instanceof XlurmError) throw e;
      throw new XlurmError('STORAGE', `cannot open job database ${file}: ${(e as Error).message}; move it aside to start with an empty queue`);
    } finally {
      try { db?.close(); } catch { /* nothing to release */ }
    }
  }

  private migrate(db: Database.Database): void {
    const version = db.pragma('user_version', { simple: true }) as number;
    for (let v = version; v < SCHEMA_VERSION; v++) {
      db.transaction(() => {
        db.exec(MIGRATIONS[v]!);
        db.pragma(`user_version = ${v + 1}`);
      })();
    }
  }

  /**
   * Run one write inside the open group-commit transaction (BEGIN if none),
   * and make sure it is committed by the end of this event-loop turn.
   */
  private write<T>(fn: () => T): T {
    if (!this.db.inTransaction) this.db.exec('BEGIN');
    if (!this.flushQueued) {
      this.flushQueued = true;
      setImmediate(() => {
        this.flushQueued = false;
        this.beforeFlush?.();
        try { this.commit(); } catch { /* waiters were told; the next write retries */ }
      });
    }
    try {
      return fn();
    } catch (e) {
      // Some errors (SQLITE_FULL, IOERR) roll the whole transaction back:
      // everything written in it is lost, so its waiters must hear so.
      if (!this.db.inTransaction) this.fail(storageError(e));
      throw e;
    }
  }

  private fail(err: XlurmError): void {
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn(err);
  }

  /**
   * Commit the open transaction now (in the WAL, not yet synced: durable()
   * tells when it is). On failure the transaction is rolled back, its
   * waiters get the error, and it throws.
   */
  commit(): void {
    if (!this.db.inTransaction) return; // nothing open: waiters were answered when it closed
    try {
      this.db.exec('COMMIT');
    } catch (e) {
      try { if (this.db.inTransaction) this.db.exec('ROLLBACK'); } catch { /* already rolled back */ }
      const err = storageError(e);
      this.fail(err);
      throw err;
    }
    const seq = ++this.committed;
    for (const fn of this.waiters) this.syncWaiters.push({ seq, fn });
    this.waiters = [];
    this.syncSoon();
  }

  /**
   * Write the WAL out to the size it reaches between checkpoints (1000
   * pages, SQLite's default wal_autocheckpoint), once. Commits then overwrite
   * allocated blocks instead of growing the file, and fdatasync(2) of an
   * overwrite needs no file-system journal commit: about half the latency of
   * an append here (docs/performance.md). Safe because recovery reads frames
   * only while their salt and checksum match the header: zeros past the last
   * valid frame are ignored exactly like the stale frames SQLite itself
   * leaves behind when it restarts the log.
   */
  private static pregrowWal(fd: number): void {
    const target = WAL_PREGROW_BYTES;
    const size = fs.fstatSync(fd).size;
    if (size >= target) return;
    const zeros = Buffer.alloc(256 * 1024);
    for (let at = size; at < target; at += zeros.length) fs.writeSync(fd, zeros, 0, Math.min(zeros.length, target - at), at);
    fs.fdatasyncSync(fd);
  }

  /** Start a sync of the WAL unless one is running; it covers every commit made so far. */
  private syncSoon(): void {
    if (this.syncing || this.synced >= this.committed) return;
    this.syncing = true;
    const upTo = this.committed;
    fs.fdatasync(this.walFd, (e) => {
      this.syncing = false;
      if (e) this.onSyncError?.(e);
      else this.synced = Math.max(this.synced, upTo);
      this.settleSynced(e ? storageError(e) : null, upTo);
      if (!e) { this.syncSoon(); return; }
      // A failing disk is retried on demand (the next commit or durable()),
      // or after a pause for waiters that came meanwhile: never in a tight
      // loop of syncs and log lines.
      if (this.syncWaiters.length) setTimeout(() => this.syncSoon(), SYNC_RETRY_MS).unref();
    });
  }

  /** Answer the sync waiters whose commits are covered (all of them up to `upTo` on error). */
  private settleSynced(err: XlurmError | null, upTo = this.committed): void {
    const done = this.syncWaiters.filter((w) => w.seq <= upTo);
    this.syncWaiters = this.syncWaiters.filter((w) => w.seq > upTo);
    for (const w of done) w.fn(err);
  }

  /** Sync the WAL now, blocking (shutdown: nothing committed may stay unsynced). */
  syncNow(): void {
    if (this.synced >= this.committed) return;
    try {
      fs.fdatasyncSync(this.walFd);
      this.synced = this.committed;
      this.settleSynced(null);
    } catch (e) {
      this.settleSynced(storageError(e));
    }
  }

  /** Abandon the open transaction; its waiters get an error. */
  rollback(): void {
    try { if (this.db.inTransaction) this.db.exec('ROLLBACK'); } catch { /* already rolled back */ }
    this.fail(new XlurmError('STORAGE', 'cannot write the job database: the change was rolled back'));
  }

  /** Resolves once everything written so far is committed and synced; rejects if it was rolled back or cannot be synced. */
  durable(): Promise<void> {
    if (this.db.inTransaction) {
      return new Promise((resolve, reject) => { this.waiters.push((err) => (err ? reject(err) : resolve())); });
    }
    if (this.synced >= this.committed) return Promise.resolve();
    const seq = this.committed;
    return new Promise((resolve, reject) => {
      this.syncWaiters.push({ seq, fn: (err) => (err ? reject(err) : resolve()) });
      this.syncSoon();
    });
  }

  /** Insert a PENDING job (durable once durable() resolves); returns it with its new id. */
  insert(o: Owner, spec: Submission, now: number, specText = JSON.stringify(spec)): StoredJob {
    let id: number;
    try {
      const info = this.write(() => this.stmts.insert.run({
        uid: o.uid, gid: o.gid, oname: o.name, name: spec.name, count: spec.count,
        kind: spec.kind ?? null, device_ids: spec.device_ids ? JSON.stringify(spec.device_ids) : null,
        spec: specText, now, cpus: spec.cpus ?? 0, mem: spec.mem ?? 0,
      }));
      id = Number(info.lastInsertRowid);
    } catch (e) {
      if ((e as { code?: string }).code === 'SQLITE_FULL' && /AUTOINCREMENT|rowid/i.test(String(e))) {
        throw new XlurmError('JOB_ID_EXHAUSTED', 'job ID exhausted');
      }
      throw storageError(e);
    }
    // No reason property: PendingJobs adds its accessor when it queues the job (see rowToJob).
    const j: Unreasoned = { id, owner: o, spec, state: 'PENDING', devices: [], submitted_at: now, started_at: null, result: null, attempt: 1 };
    return j as StoredJob;
  }

  get(id: number): StoredJob | undefined {
    const r = this.stmts.get.get(id) as Row | undefined;
    return r ? rowToJob(r, (t) => this.textOf(t)) : undefined;
  }

  /**
   * PENDING and RUNNING jobs in id order. Each array's text is read and
   * parsed once, and all its tasks share that one object: a queue of
   * 100,000 tasks costs memory by its rows, not by their text
   * (docs/behaviour.md §28.2).
   */
  active(): StoredJob[] {
    const texts = new Map<number, SharedText>();
    const lookup: TextLookup = (id) => {
      let t = texts.get(id);
      if (!t) texts.set(id, t = this.textOf(id));
      return t;
    };
    const owners = new Map<number, Owner>(); // one owner object per user, shared by their jobs
    const out: StoredJob[] = [];
    for (const r of this.stmts.active.iterate() as IterableIterator<Row>) out.push(rowToJob(r, lookup, owners));
    return out;
  }

  /** An array's text (docs/behaviour.md §28.2); a missing one (never expected) reads as empty, so the job still loads. */
  private textOf(id: number): SharedText {
    const r = this.stmts.text.get(id) as { text: string } | undefined;
    if (!r) return { env: {}, script: null };
    const t = JSON.parse(r.text) as SharedText;
    return { env: t.env ?? {}, script: t.script ?? null, ...(t.command ? { command: t.command } : {}) };
  }

  /**
   * What an active job's row keeps of a changed spec: all of it, or, for a
   * task of an array, only the keys it does not take from the array's text
   * (hold, release, update never change those: its text stays as it is).
   */
  private storedSpec(id: number, spec: Submission): string {
    const k = this.stmts.ownKeys.get(id) as { text_id: number | null; env: string | null; script: string | null; command: string | null } | undefined;
    if (!k || k.text_id === null) return JSON.stringify(spec);
    const { env, script, command, ...rest } = spec;
    const own: Partial<Submission> = rest;
    if (k.env !== null) own.env = env;
    if (k.script !== null) own.script = script;
    if (k.command !== null) own.command = command;
    return JSON.stringify(own);
  }

  /** Newest `limit` jobs of any state, in ascending id order. */
  recentSummaries(limit: number): JobSummary[] {
    return (this.stmts.recent.all(limit) as Row[]).reverse().map(rowToSummary);
  }

  allSummaries(): JobSummary[] { return (this.stmts.all.all() as Row[]).map(rowToSummary); }

  /**
   * PENDING → RUNNING in the open transaction; the caller commit()s before spawning. A slice job
   * (`share`) records its device weight as its cards' memory is known now (docs/behaviour.md
   * §25.4, §26.1: statistics and the device-seconds metric read it); a whole-device job: NULL,
   * its device count.
   */
  markRunning(id: number, devices: Device[], now: number, share?: { mem: number } | null): void {
    const weight = share && devices.length > 0 ? deviceRate(devices, share) : null;
    try {
      const r = this.write(() => this.stmts.start.run(JSON.stringify(devices), now, weight, id));
      if (r.changes !== 1) throw new Error(`job ${id} is not pending`);
    } catch (e) { throw storageError(e); }
  }

  // --- Fairness (docs/behaviour.md §22.1, §23.3) ---
  /** A pending job's order keys: admin priority, `xlurm top`'s number, and its spec (nice); in the open transaction. */
  setOrderKeys(id: number, priority: number, top: number, spec: Submission): void {
    try {
      this.write(() => this.db.prepare(`UPDATE jobs SET priority = ?, top = ?, spec = ? WHERE id = ?`).run(priority, top, this.storedSpec(id, spec), id));
    } catch (e) { throw storageError(e); }
  }

  /**
   * Several writes of one change as one unit: all of them or none (a
   * savepoint inside the open group-commit transaction, so a failure undoes
   * only this change, never another caller's writes of the same turn).
   */
  unit<T>(fn: () => T): T {
    try { return this.write(() => this.db.transaction(fn)()); } catch (e) { throw storageError(e); }
  }

  /** Run statements of another module (accounting/usage.ts) in the open group-commit transaction. */
  inWrite<T>(fn: () => T): T {
    try { return this.write(fn); } catch (e) { throw storageError(e); }
  }

  /** RUNNING → PENDING, committed now: the supervisor could not be started and nothing ran. */
  unstart(id: number): void {
    try {
      this.write(() => this.stmts.unstart.run(id));
    } catch (e) { throw storageError(e); }
    this.commit();
  }

  /** Commit a terminal outcome (and whatever else is open) now (or with the open transaction); false if the job was already terminal. */
  finish(id: number, o: Outcome, commitNow = true): boolean {
    let changed: boolean;
    try {
      changed = this.write(() => this.stmts.finish.run(o.state, o.exit_code, o.finished_at, o.error, o.peak_memory ?? null, o.cpu_seconds ?? null, id).changes === 1);
    } catch (e) { throw storageError(e); }
    // Not now: a dependency cascade writes its cancellations first, all in one commit.
    if (commitNow) this.commit();
    return changed;
  }

  /** Ids of terminal jobs finished at or before `cutoff` (a bounded batch). */
  expiredIds(cutoff: number): number[] {
    return (this.stmts.expired.all(cutoff) as { id: number }[]).map((r) => r.id);
  }

  removeJobs(ids: number[]): void {
    this.db.transaction(() => { for (const id of ids) this.stmts.remove.run(id); })();
  }

  /**
   * Record this boot's id and return the one the previous daemon recorded
   * ('' if none): tells a daemon restart from a reboot (see Runner.adopt).
   */
  swapBootId(bootId: string): string {
    const prev = this.db.prepare(`SELECT value FROM meta WHERE key = 'boot_id'`).get() as { value: string } | undefined;
    try {
      this.db.prepare(`INSERT OR REPLACE INTO meta(key, value) VALUES ('boot_id', ?)`).run(bootId);
    } catch {
      // A full disk must not stop start-up: not recorded means not trusted ('').
      return '';
    }
    return prev?.value ?? '';
  }

  runningIds(): number[] { return (this.stmts.running.all() as { id: number }[]).map((r) => r.id); }

  // --- Workflows (docs/behaviour.md §23.3, §23.5) ---
  private workflowStmts: { spec: Database.Statement; requeue: Database.Statement; queuedAt: Database.Statement } | undefined;
  private get wf() {
    return this.workflowStmts ??= {
      spec: this.db.prepare(`UPDATE jobs SET spec = ?, name = ? WHERE id = ? AND state IN ('PENDING', 'RUNNING')`),
      requeue: this.db.prepare(`UPDATE jobs SET state = 'PENDING', devices = '[]', started_at = NULL, attempt = ?, queued_at = ?
                                WHERE id = ? AND state = 'RUNNING'`),
      queuedAt: this.db.prepare('UPDATE jobs SET queued_at = ? WHERE id = ?'),
    };
  }

  /** A changed spec (hold, release, update) of an active job, in the open transaction; `queuedAt` restarts its queue wait. */
  updateSpec(id: number, spec: Submission, queuedAt?: number): void {
    try {
      this.write(() => {
        if (this.wf.spec.run(this.storedSpec(id, spec), spec.name, id).changes !== 1) throw new Error(`job ${id} is not active`);
        if (queuedAt !== undefined) this.wf.queuedAt.run(queuedAt, id);
      });
    } catch (e) { throw storageError(e); }
  }

  /** RUNNING → PENDING for another attempt (a retried failure), in the open transaction. */
  requeue(id: number, attempt: number, queuedAt: number): void {
    try {
      const r = this.write(() => this.wf.requeue.run(attempt, queuedAt, id));
      if (r.changes !== 1) throw new Error(`job ${id} is not running`);
    } catch (e) { throw storageError(e); }
  }

  // --- Arrays (docs/behaviour.md §23.2) ---
  private arrayStmts: { member: Database.Statement; task: Database.Statement; counted: Database.Statement; tasks: Database.Statement; taskOf: Database.Statement } | undefined;
  private get arr() {
    return this.arrayStmts ??= {
      counted: this.db.prepare(`INSERT INTO metric_totals(name, label, value) VALUES ('jobs', 'PENDING', ?)
                                ON CONFLICT(name, label) DO UPDATE SET value = value + excluded.value`),
      member: this.db.prepare('UPDATE jobs SET array_id = ?, array_task = ?, text_id = ? WHERE id = ?'),
      task: this.db.prepare(`INSERT INTO jobs (owner_uid, owner_gid, owner_name, name, count, kind, device_ids, spec, state, submitted_at, cpus, mem,
                                               array_id, array_task, text_id)
                             VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', ?, ?, ?, ?, ?, ?)`),
      // Tasks have consecutive ids from the array's: a range of the primary key, never a scan.
      tasks: this.db.prepare('SELECT * FROM jobs WHERE id >= @id AND id < @id + @n AND array_id = @id ORDER BY id'),
      taskOf: this.db.prepare(`SELECT * FROM jobs WHERE id >= @id AND id < @id + @n AND array_id = @id
                               AND json_extract(array_task, '$.index') = @index`),
    };
  }

  /**
   * Insert every task of an array PENDING in the open transaction, as one
   * unit (a savepoint: all of them or, on any error, none), with
   * consecutive ids; the array's id is the first task's. The first task's
   * environment, script and command are written once, as the array's text
   * (docs/behaviour.md §28.2); each row is the plain insert's less what it
   * shares with that text, then its membership.
   */
  insertArray(o: Owner, specs: readonly Submission[], members: ReadonlyArray<Omit<ArrayMembership, 'id'>>, now: number): StoredJob[] {
    const jobs: StoredJob[] = [];
    try {
      this.write(() => this.db.exec('SAVEPOINT xlurm_array'));
    } catch (e) { throw storageError(e); }
    try {
      let first = 0;
      const head = specs[0]!;
      const text: SharedText = { env: head.env, script: head.script ?? null, command: head.command };
      const textId = Number(this.stmts.insertText.run(JSON.stringify(text)).lastInsertRowid);
      for (let i = 0; i < specs.length; i++) {
        const spec = specs[i]!;
        const m = members[i]!;
        let j: StoredJob;
        if (i === 0) {
          j = this.insert(o, spec, now, taskSpecText(spec, text));
          first = j.id;
          this.arr.member.run(first, JSON.stringify(m), textId, j.id);
        } else {
          // One statement per later task, its membership in it (the array's id is known now): half the work of insert + update.
          const id = Number(this.arr.task.run(
            o.uid, o.gid, o.name, spec.name, spec.count, spec.kind ?? null, spec.device_ids ? JSON.stringify(spec.device_ids) : null,
            taskSpecText(spec, text), now, spec.cpus ?? 0, spec.mem ?? 0, first, JSON.stringify(m), textId,
          ).lastInsertRowid);
          if (id !== first + i) throw new Error('array ids are not consecutive');
          const u: Unreasoned = { id, owner: o, spec, state: 'PENDING', devices: [], submitted_at: now, started_at: null, result: null, attempt: 1 };
          j = u as StoredJob;
        }
        j.array = { id: first, ...m };
        jobs.push(j);
      }
      // The later tasks' count (schema.ts: its trigger skips rows inserted with a text).
      if (specs.length > 1) this.arr.counted.run(specs.length - 1);
      this.db.exec('RELEASE xlurm_array');
    } catch (e) {
      try { if (this.db.inTransaction) { this.db.exec('ROLLBACK TO xlurm_array'); this.db.exec('RELEASE xlurm_array'); } } catch { /* rolled back whole */ }
      throw e instanceof XlurmError ? e : storageError(e);
    }
    return jobs;
  }

  /** Summaries of array `id`'s tasks (`count` of them at most), or of its task of index `index`, in id order. */
  arraySummaries(id: number, count: number, index?: number): JobSummary[] {
    const rows = (index === undefined ? this.arr.tasks.all({ id, n: count }) : this.arr.taskOf.all({ id, n: count, index })) as Row[];
    return rows.map(rowToSummary);
  }

  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.stmts.counts.all() as { state: string; n: number }[]) out[r.state] = r.n;
    return out;
  }

  close(): void {
    if (this.db.inTransaction) { try { this.commit(); } catch { /* waiters were told */ } }
    this.syncNow();
    this.db.close();
    if (this.walFd >= 0) { try { fs.closeSync(this.walFd); } catch { /* closing anyway */ } this.walFd = -1; }
  }
}
