/**
 * Fair-share bookkeeping (docs/behaviour.md §22.2): per user, the
 * device-seconds their jobs used (a CPU-only job counts its CPUs, at least
 * one, over the host's CPU count, so a CPU hog does not starve everyone),
 * raw and decayed with the configured half-life, kept in the store's
 * `usage` table across restarts.
 *
 * Charged as jobs run, not only when they end: Core calls `accrue` before
 * each pass (at most once a second), `finish` when a job ends, and `persist`
 * on a timer. Every user's decayed value is kept as of one common time
 * (`at`): decay multiplies them all by the same factor, so between accruals
 * it never changes their order, and the order step reads the values as they
 * are (an input, `forOrder`), with no clock of its own.
 *
 * A row's `at` is the time up to which that user's running jobs were
 * charged, so a daemon restarted while jobs run charges them from there,
 * never twice.
 */
import type Database from 'better-sqlite3';
import type { ShareRow } from '@xlurm/protocol';
import { deviceRate } from '../sharing/weight';

/** What usage needs of a running job. */
export interface ChargedJob {
  id: number;
  owner: { uid: number; name: string };
  devices: readonly unknown[];
  spec: { cpus?: number | undefined; share?: { mem: number } | null | undefined };
  started_at: number | null;
}

/** What usage needs of the store: its database and its group-commit writes. */
export interface UsageStore {
  readonly db: Database.Database;
  inWrite<T>(fn: () => T): T;
}

interface UserUsage { uid: number; name: string; usage: number; decayed: number; chargedUntil: number }

/** The decay factor over `secs` with half-life `halfLife` (seconds). */
export function decayFactor(secs: number, halfLife: number): number {
  if (secs <= 0) return 1;
  if (halfLife <= 0) return 0;
  return Math.pow(2, -secs / halfLife);
}

/** Device-seconds per second of wall time for one running job. */
export function chargeRate(j: ChargedJob, hostCpus: number): number {
  // A slice is weighted by its share of the card's memory (sharing/weight.ts, docs/behaviour.md §25.4).
  if (j.devices.length > 0) return deviceRate(j.devices, j.spec.share);
  return Math.max(1, j.spec.cpus ?? 0) / Math.max(1, hostCpus);
}

export class UsageBook {
  private readonly users = new Map<number, UserUsage>();
  /** The time (unix seconds) every decayed value is as of. */
  private at = 0;
  /** Running job id → unix seconds it is charged up to. */
  private readonly charged = new Map<number, number>();
  /** Owner name → decayed usage, for the order step; rebuilt when usage changes. */
  private order: Map<string, number> | undefined;
  private readonly stmts: { all: Database.Statement; put: Database.Statement } | undefined;

  constructor(private readonly store: UsageStore | undefined, private readonly hostCpus: number, private halfLife: number) {
    this.stmts = store && {
      all: store.db.prepare('SELECT uid, name, usage, decayed, at FROM usage'),
      put: store.db.prepare(`INSERT INTO usage(uid, name, usage, decayed, at) VALUES (?, ?, ?, ?, ?)
                             ON CONFLICT(uid) DO UPDATE SET name = excluded.name, usage = excluded.usage, decayed = excluded.decayed, at = excluded.at`),
    };
  }

  /** Read the table (at start): every row decayed to `now`. */
  load(now: number): void {
    this.users.clear();
    this.at = now;
    if (!this.stmts) return;
    for (const r of this.stmts.all.all() as Array<{ uid: number; name: string; usage: number; decayed: number; at: number }>) {
      this.users.set(r.uid, { uid: r.uid, name: r.name, usage: r.usage, decayed: r.decayed * decayFactor(now - r.at, this.halfLife), chargedUntil: r.at });
    }
    this.order = undefined;
  }

  /** A new half-life (reload) applies from now on. */
  setHalfLife(secs: number, now: number, running: Iterable<ChargedJob>): void {
    if (secs === this.halfLife) return;
    this.accrue(running, now);
    this.halfLife = secs;
  }

  private user(o: { uid: number; name: string }): UserUsage {
    let u = this.users.get(o.uid);
    if (!u) this.users.set(o.uid, u = { uid: o.uid, name: o.name, usage: 0, decayed: 0, chargedUntil: 0 });
    else if (u.name !== o.name) { u.name = o.name; this.order = undefined; }
    return u;
  }

  /** Charge every running job up to `now` (unix seconds, fractions allowed), after decaying everyone to it. */
  accrue(running: Iterable<ChargedJob>, now: number): void {
    const f = decayFactor(now - this.at, this.halfLife);
    if (f !== 1) for (const u of this.users.values()) u.decayed *= f;
    if (now > this.at) this.at = now;
    for (const j of running) this.charge(j, now);
    this.order = undefined;
  }

  private charge(j: ChargedJob, now: number): void {
    const u = this.user(j.owner);
    let from = this.charged.get(j.id);
    if (from === undefined) from = Math.max(j.started_at ?? now, u.chargedUntil);
    const dt = now - from;
    if (dt > 0) {
      const c = dt * chargeRate(j, this.hostCpus);
      u.usage += c;
      u.decayed += c;
    }
    this.charged.set(j.id, Math.max(from, now));
  }

  /**
   * A job ended at `end`: charge its last slice (everyone accrued to then)
   * and write its owner's row in the open transaction (the job's end commits it).
   */
  finish(j: ChargedJob, end: number, running: Iterable<ChargedJob>): void {
    if (j.started_at === null) return;
    this.accrue(running, Math.max(end, this.at));
    this.charge(j, Math.max(end, this.at));
    this.charged.delete(j.id);
    const u = this.users.get(j.owner.uid);
    if (u && this.stmts) this.write([u]);
  }

  /** Write every user's row (the timer; shutdown). Everyone is charged up to `at`. */
  persist(running: Iterable<ChargedJob>, now: number): void {
    this.accrue(running, now);
    if (this.stmts && this.users.size) this.write([...this.users.values()]);
  }

  private write(users: UserUsage[]): void {
    const put = this.stmts!.put;
    this.store!.inWrite(() => {
      for (const u of users) {
        u.chargedUntil = this.at;
        put.run(u.uid, u.name, u.usage, u.decayed, this.at);
      }
    });
  }

  /** Owner name → decayed usage: the order step's input (docs/behaviour.md §21.1). */
  forOrder(): ReadonlyMap<string, number> {
    if (!this.order) {
      this.order = new Map();
      for (const u of this.users.values()) this.order.set(u.name, u.decayed);
    }
    return this.order;
  }

  /** The users by rank (lowest decayed usage first; ties by name), as of `now`. */
  shares(now: number): ShareRow[] {
    const f = decayFactor(now - this.at, this.halfLife);
    const rows = [...this.users.values()].map((u) => ({ user: u.name, uid: u.uid, usage: round(u.usage), decayed: round(u.decayed * f), rank: 0 }));
    rows.sort((a, b) => a.decayed - b.decayed || (a.user < b.user ? -1 : a.user > b.user ? 1 : a.uid - b.uid));
    rows.forEach((r, i) => { r.rank = i + 1; });
    return rows;
  }
}

/** Millisecond precision is plenty for device-seconds. */
const round = (x: number) => Math.round(x * 1000) / 1000;
