/**
 * Whether a job's supervisor lives, and how its job ended (docs/behaviour.md §6.2). The lock on
 * `jobs/<id>.lock` is the truth: it is held by the supervisor's inherited descriptor for the
 * supervisor's whole life, so a restarted daemon can tell a live job (lock held) from a
 * finished or vanished one (lock free) without trusting PIDs. The same test settles a reaped
 * supervisor, one the launcher started without tracking it, and the jobs a lost launcher
 * still owed an answer.
 */
import * as fs from 'node:fs';
import type { Outcome } from '@xlurm/protocol';
import { flockExclusive, flockUnlock } from '@xlurm/native';
import { SPAWN_MARK, type JobFiles } from './job-files';

export const VANISHED = 'executor worker disappeared without an exit result';
const ADOPTED_POLL_MS = 100;

export interface LivenessEvents {
  /** The supervisor is gone and its outcome is known. */
  finished(id: number, outcome: Outcome): void;
  /** Nothing ran (the start never reached the payload): the job can wait and start later. */
  deferred(id: number, reason: string): void;
}

export class Liveness {
  /**
   * Set at start-up: true only when the previous daemon ran in this same boot. A missing lock
   * file or an unsynced spawn mark proves "never started" only then (see neverStarted).
   */
  trustMissingLock = false;
  /** Jobs whose lock or result could not be opened (logged once until they can). */
  private readonly lockTrouble = new Set<number>();
  private readonly adopted = new Set<number>();
  private adoptTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly files: JobFiles,
    private readonly events: LivenessEvents,
    private readonly log: (msg: string) => void,
    private readonly now: () => number,
  ) {}

  /**
   * Watch these jobs through their locks until each one's supervisor is gone. After a daemon
   * restart (afterRestart), a job with no lock file at all was committed as RUNNING but never
   * reached its spawn (the lock file is made just before it): nothing ran, so it goes back to
   * the queue instead of failing, in the same boot only (trustMissingLock); after a reboot
   * such a job fails as before.
   */
  adopt(ids: readonly number[], afterRestart = false): void {
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

  /** The supervisor was reaped: collect its result (or keep watching if the lock cannot be opened now). */
  reaped(id: number): void {
    if (!this.collect(id)) this.adopt([id]);
  }

  /**
   * The launcher went away owing answers for these jobs. Each job's supervisor may or may
   * not have been forked; its lock tells, as after a daemon restart (in the same boot, so the
   * lock's mark can be trusted): a free lock that still holds the spawn mark with no result
   * means nothing ran (the job waits for a new start), anything else is watched.
   */
  launcherLost(ids: readonly number[]): void {
    for (const id of ids) if (!this.neverStarted(id, 'the supervisor launcher')) this.adopt([id]);
  }

  stop(): void {
    if (this.adoptTimer) clearInterval(this.adoptTimer);
  }

  /**
   * Did `who` stop before the job's payload could have started? True (and the job is handed
   * back to the queue) when the lock file does not exist (killed before it was created) or is
   * free and still holds SPAWN_MARK with no result (killed before spawn(2), or the supervisor
   * died before it forked the payload). The page cache survives a daemon crash, so within one
   * boot the lock file's name and content can be trusted without fsync.
   */
  private neverStarted(id: number, who = 'the previous daemon'): boolean {
    const p = this.files.paths(id);
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

  /**
   * If the job's lock is free, its supervisor is gone: report the outcome
   * (from the result file, or FAILED when there is none) and return true.
   */
  private collect(id: number): boolean {
    let fd = -1;
    try {
      fd = fs.openSync(this.files.paths(id).lock, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
      if (!flockExclusive(fd)) return false;
      // Read before reporting: a result that cannot be read right now (no
      // free descriptor) is read later, never taken for a missing one.
      const outcome = this.outcome(id);
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

  /** The supervisor's outcome; VANISHED when it left none. Throws when the result exists but cannot be read now. */
  private outcome(id: number): Outcome {
    const r = this.files.readResult(id);
    if (r === 'missing') return { state: 'FAILED', exit_code: 1, finished_at: this.now(), error: VANISHED };
    if (r === 'malformed') return { state: 'FAILED', exit_code: 1, finished_at: this.now(), error: `${VANISHED} (unreadable result file)` };
    return r;
  }
}
