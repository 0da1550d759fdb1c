/**
 * The workflow gates of pending jobs (docs/behaviour.md §23.1, §23.3,
 * §23.4): held, waiting for a dependency, or before its begin time. Core
 * owns the transitions; this keeps, for every PENDING job that may not start
 * whatever the host has free, its reason (`waits`, handed to each scheduling
 * pass, scheduler/admit.ts), and re-evaluates a job only when something it
 * depends on changed:
 *   - a parent started or ended (an index parent → dependents),
 *   - a job of a singleton's owner and name started or ended,
 *   - its begin time came (one timer, for the earliest begin time),
 *   - it was held, released or updated.
 * A pass therefore does no dependency work per job: it reads one map.
 *
 * It also computes a dependency cascade (which dependents can never start
 * once a job ends, transitively) before Core writes anything, so the job's
 * end and its dependents' cancellations are one transaction.
 */
import { EarliestTimer } from './earliest-timer';
import * as fs from 'node:fs';
import type { Dependencies, JobState, Reason, Submission } from '@xlurm/protocol';
import { dependencyIds, parseDependency, statePaths } from '@xlurm/protocol';
import { randomDigits, withDir } from './safe-fs';
import { dependencyStatus, type DependencyStatus, type ParentState } from './scheduler/dependency';
import type { StoredJob } from './store/store';

export interface WorkflowHost {
  /** The job as Core holds it now (memory for active jobs, else the store). */
  job(id: number): Readonly<StoredJob> | undefined;
  /** Every PENDING and RUNNING job. */
  active(): Iterable<Readonly<StoredJob>>;
  /** A gate opened (or changed): the host schedules a pass. */
  changed(): void;
}

/** A dependent that can never start: it ends CANCELLED with `error`. */
export interface Doomed { id: number; error: string }

const singletonKey = (j: Readonly<StoredJob>) => `${j.owner.uid}\0${j.spec.name}`;

/** `2026-12-01 14:00:00 UTC`: reasons are read host-wide, so in one zone for everyone. */
export function formatUtc(secs: number): string {
  const at = new Date(secs * 1000);
  // A time no Date holds (stored before submissions were checked, §28.4) is shown, never thrown over.
  if (Number.isNaN(at.getTime())) return `${secs} (Unix seconds)`;
  return `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

export class Workflow {
  /** PENDING jobs that may not start, with why (Held, Dependency, BeginTime). */
  readonly waits = new Map<number, Reason>();
  /** Parsed `-d` lists of pending jobs that have one. */
  private readonly deps = new Map<number, Dependencies>();
  /** Parent id → pending jobs that name it. */
  private readonly dependents = new Map<number, Set<number>>();
  /** Owner and name → pending singleton jobs with them. */
  private readonly singletons = new Map<string, Set<number>>();
  /** Pending jobs whose wait is their begin time. */
  private readonly beginning = new Set<number>();
  /** One timer, for the earliest begin time of a waiting job. */
  private readonly begin = new EarliestTimer(() => this.beginDue());

  constructor(private readonly host: WorkflowHost) {}

  /**
   * A job entered the queue (submitted, recovered, released for a retry):
   * index it and set its gate. Returns the error when its dependency can
   * never be met (the caller cancels it).
   */
  queued(j: Readonly<StoredJob>): string | undefined {
    const text = j.spec.dependency;
    if (text) {
      const d = parseDependency(text);
      // Checked at submission; a stored list that no longer parses waits for nothing.
      if (!('error' in d)) {
        this.deps.set(j.id, d);
        for (const t of d.terms) for (const p of t.ids) {
          let s = this.dependents.get(p);
          if (!s) this.dependents.set(p, s = new Set());
          s.add(j.id);
        }
        if (d.singleton) {
          const k = singletonKey(j);
          let s = this.singletons.get(k);
          if (!s) this.singletons.set(k, s = new Set());
          s.add(j.id);
        }
      }
    }
    return this.refresh(j);
  }

  /** The job left the queue (started, ended): forget its gate and its entries in the indexes. */
  left(j: Readonly<StoredJob>): void {
    this.waits.delete(j.id);
    this.beginning.delete(j.id);
    const d = this.deps.get(j.id);
    if (!d) return;
    this.deps.delete(j.id);
    for (const t of d.terms) for (const p of t.ids) {
      const s = this.dependents.get(p);
      if (s) { s.delete(j.id); if (!s.size) this.dependents.delete(p); }
    }
    if (d.singleton) {
      const k = singletonKey(j);
      const s = this.singletons.get(k);
      if (s) { s.delete(j.id); if (!s.size) this.singletons.delete(k); }
    }
  }

  /**
   * A job started, ended or went back to the queue: the jobs that depend on
   * it look again. Returns those whose dependency can now never be met (only
   * possible when the caller did not cascade first, e.g. after a restart).
   */
  touched(j: Readonly<StoredJob>): Doomed[] {
    const out: Doomed[] = [];
    const look = (id: number) => {
      const c = this.host.job(id);
      if (!c || c.state !== 'PENDING') return;
      const error = this.refresh(c);
      if (error) out.push({ id, error });
    };
    const ds = this.dependents.get(j.id);
    if (ds) for (const id of [...ds]) look(id);
    const ss = this.singletons.get(singletonKey(j));
    if (ss) for (const id of [...ss]) if (id !== j.id) look(id);
    return out;
  }

  /**
   * Everything that can never start once job `id` ends in `state`: its
   * dependents whose dependency that end breaks, theirs in turn (each ends
   * CANCELLED), in the order found. Nothing is changed.
   */
  doomedBy(id: number, state: JobState): Doomed[] {
    if (!this.dependents.has(id)) return [];
    const ended = new Map<number, JobState>([[id, state]]);
    const out: Doomed[] = [];
    const stateOf = (x: number): ParentState => ended.get(x) ?? this.host.job(x)?.state ?? null;
    for (let i = 0, queue = [id]; i < queue.length; i++) {
      const ds = this.dependents.get(queue[i]!);
      if (!ds) continue;
      for (const c of ds) {
        if (ended.has(c)) continue;
        const d = this.deps.get(c);
        if (!d || this.host.job(c)?.state !== 'PENDING') continue;
        const st = dependencyStatus(d, stateOf, null);
        if (st.kind !== 'never') continue;
        out.push({ id: c, error: st.error });
        ended.set(c, 'CANCELLED');
        queue.push(c);
      }
    }
    return out;
  }

  /** Set a pending job's gate from its spec and the states of what it depends on; the error if it can never start. */
  refresh(j: Readonly<StoredJob>): string | undefined {
    const before = this.waits.get(j.id);
    const d = this.deps.get(j.id);
    let dep: DependencyStatus = { kind: 'ready' };
    if (d) {
      dep = dependencyStatus(d, (id) => this.host.job(id)?.state ?? null, d.singleton ? this.singletonWith(j) : null);
      if (dep.kind === 'never') return dep.error;
    }
    let reason: Reason | undefined;
    this.beginning.delete(j.id);
    const begin = j.spec.begin_at;
    if (j.spec.hold) reason = { code: 'Held', message: `held until released (xlurm release ${j.id})` };
    else if (dep.kind === 'wait') reason = dep.reason;
    else if (begin !== undefined && begin !== null && begin * 1000 > Date.now()) {
      reason = { code: 'BeginTime', message: `begins at ${formatUtc(begin)}` };
      this.beginning.add(j.id);
      this.begin.arm(begin);
    }
    if (reason) this.waits.set(j.id, reason); else this.waits.delete(j.id);
    if (before?.code !== reason?.code || before?.message !== reason?.message) this.host.changed();
    return undefined;
  }

  /** The job a singleton waits for: another of its owner and name that runs, or waits having been submitted earlier. */
  private singletonWith(j: Readonly<StoredJob>): number | null {
    let found: number | null = null;
    for (const o of this.host.active()) {
      if (o.id === j.id || o.owner.uid !== j.owner.uid || o.spec.name !== j.spec.name) continue;
      if (o.state === 'RUNNING' || o.id < j.id) found = found === null ? o.id : Math.min(found, o.id);
    }
    return found;
  }

  private beginDue(): void {
    for (const id of [...this.beginning]) {
      const j = this.host.job(id);
      if (!j || j.state !== 'PENDING') { this.beginning.delete(id); continue; }
      this.refresh(j); // re-arms the timer for those still to come
    }
  }

  stop(): void {
    this.begin.stop();
  }
}

/**
 * Tell a running job's supervisor its new time limit (`xlurm update -t`,
 * docs/behaviour.md §23.3): seconds from its start, written to a temporary
 * file (0600) renamed over `<id>.limit`, which the supervisor looks at on
 * every wake-up (native/src/stepd/supervisor.c). Throws when it cannot be written.
 */
export function writeLimit(home: string, id: number, secs: number): void {
  // Through safe-fs.ts (extensions 28.1): an unpredictable temporary name, created O_EXCL, that
  // retention still recognises as a job's temporary file (`<id>.tmp.<digits>`).
  withDir(statePaths(home).jobs, (d) => d.writeAtomic(`${id}.limit`, `${secs}\n`, 0o600, { temp: `${id}.tmp.${randomDigits()}` }));
}

/**
 * The workflow checks of a submission that need the queue (docs/behaviour.md
 * §23.1): its `-d` list parses, and every job it names exists. The message
 * of the first that fails, or null.
 */
export function checkWorkflow(spec: Submission, exists: (id: number) => boolean): string | null {
  if (spec.dependency === undefined || spec.dependency === null) return null;
  const d = parseDependency(spec.dependency);
  if ('error' in d) return d.error;
  for (const id of dependencyIds(d)) if (!exists(id)) return `dependency on unknown job ${id}`;
  return null;
}

/** `[xlurm] retry 1 of 3 after exit 1`: the line between a failed run and the next (docs/behaviour.md §23.5). */
export function retryLine(k: number, n: number, exitCode: number): string {
  return `[xlurm] retry ${k} of ${n} after exit ${exitCode}\n`;
}

/**
 * Before a failed job runs again: append the retry line to its log and
 * remove the previous run's result and cancel marker (a result left there
 * would be taken for the next run's). The log is opened as the supervisor's
 * is (append only, created 0600 when missing), never through a symbolic
 * link. Errors are returned, not thrown: a log line that could not be
 * written must not stop the retry.
 */
export function prepareRetry(home: string, id: number, line: string): Error | undefined {
  let err: Error | undefined;
  try {
    withDir(statePaths(home).jobs, (d) => {
      // The next run reads its limit from its spec (which holds any change).
      for (const f of ['result', 'cancel', 'limit']) {
        try { d.remove(`${id}.${f}`); } catch (e) { err ??= e as Error; }
      }
      // Through safe-fs.ts: a link under the log's name is not followed (ELOOP); a FIFO or
      // device planted there is no log, and nothing is written to it.
      const fd = d.openAppend(`${id}.log`);
      if (fd !== null) {
        try { fs.writeSync(fd, line); } finally { fs.closeSync(fd); }
      }
    });
  } catch (e) {
    err ??= e as Error;
  }
  return err;
}
