/**
 * xrun's follower: a streaming `follow` connection carries state changes
 * until the job has a result, and the job's log bytes reach stdout in one of
 * two ways:
 *
 * - relayed by the daemon as raw frames on that connection (the general
 *   case: the log is the daemon account's file, mode 0600 under a 0700
 *   directory, which the job's owner cannot open, and the daemon checked the
 *   caller's SO_PEERCRED identity against the job's owner);
 * - read from the log file directly, when xrun runs as the daemon's own
 *   account (root with the shared daemon, or the user of a private daemon):
 *   the kernel already lets it open the file, so nothing is granted that it
 *   did not have, and the bytes skip the daemon and the socket (the relay's
 *   throughput is bounded by the socket buffer; see docs/performance.md).
 *   The connection then asks for state changes only (`bytes: false`). A
 *   daemon too old to know that field, or a log that cannot be opened as a
 *   regular file of this account, falls back to the relay.
 *
 * If the connection drops (the daemon restarted), it reconnects from the
 * last byte written, every 100 ms for up to 60 s, so log bytes are neither
 * lost nor repeated. The first SIGINT/SIGTERM asks the daemon to cancel the
 * job (once, on a separate connection) and following continues until the
 * job's end.
 */
import * as fs from 'node:fs';
import type { Job, Reason } from '@xlurm/protocol';
import { LogTail } from '@xlurm/protocol';
import { ConnectError, ConnectionClosed, request as realRequest, stream as realStream } from './client';
import type { StreamEnd } from './client';
import { CliError } from './errors';
import { reasonText } from './format/queue';
import { formatUtc } from './format/time';
import { sleep } from './sleep';

export interface FollowDeps {
  stream: typeof realStream;
  request: typeof realRequest;
  /**
   * Write log bytes. Returns nothing when they were written out at once, or
   * a promise that resolves once they are (backpressure); the buffer is
   * reused after that.
   */
  write(bytes: Buffer): void | Promise<void>;
  /** One status line on stderr. */
  status(line: string): void;
  now(): Date;
  home?: string;
  retryEveryMs?: number;
  retryForMs?: number;
  waitingAfterMs?: number;
  /**
   * The job log's path when this process may read it itself (it runs as the
   * daemon's account); undefined or absent: the daemon relays the bytes.
   */
  logFile?(id: number): string | undefined;
}

/** Dropped connections and a daemon that is shutting down are worth retrying. */
export function retryable(e: unknown): boolean {
  return e instanceof ConnectError || e instanceof ConnectionClosed || (e instanceof CliError && e.code === 'SHUTTING_DOWN');
}

/** What waiting for a job's end needs (tests pass their own). */
export interface WaitDeps {
  stream: typeof realStream;
  request: typeof realRequest;
  retryEveryMs?: number;
  retryForMs?: number;
}

/**
 * The exit code of job `id` once it is terminal, on the daemon's `follow`
 * stream asking for state changes only (no log bytes), reconnecting while
 * the daemon is away (a restart does not end the wait). Here rather than in
 * wait.ts, which asks the engine: engine/local.ts uses it without importing
 * wait.ts back (test/unit/imports.ts).
 */
export async function waitForEnd(id: number, deps: WaitDeps): Promise<number> {
  let retrySince: number | undefined;
  for (;;) {
    try {
      const end = await deps.stream('follow', { id, bytes: false }, { onFirstFrame: () => { retrySince = undefined; }, onLog: () => undefined });
      if (!end.job) throw new CliError('job not found');
      if (!end.job.result) throw new CliError('unexpected response');
      return end.job.result.exit_code;
    } catch (e) {
      if (!retryable(e)) throw e;
      retrySince ??= Date.now();
      if (Date.now() - retrySince >= (deps.retryForMs ?? 60_000)) throw e;
      await sleep(deps.retryEveryMs ?? 100);
    }
  }
}

/**
 * Does this process run as the account of the daemon behind `home` (its
 * owner: the client verified the socket peer's SO_PEERCRED uid against it)?
 * Then it may read its jobs' logs itself, and does (the direct path above).
 */
export function runsAsDaemonAccount(home: string): boolean {
  try { return fs.statSync(home).uid === process.geteuid!(); } catch { return false; }
}

/** Read size of the direct path (one buffer, reused). */
const DIRECT_CHUNK = 1 << 20;
/** Poll while the log does not exist yet (the job is about to start). */
const DIRECT_OPEN_POLL_MS = 20;

/** The log cannot be read directly: let the daemon relay it. */
class RelayInstead extends Error {}

/**
 * Open the log read-only, or -1 while it does not exist yet. Anything but a
 * regular file of this account (a link, a FIFO, another owner) is refused.
 */
function openLog(file: string): number {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return -1;
    throw new RelayInstead((e as Error).message);
  }
  const st = fs.fstatSync(fd);
  if (!st.isFile() || st.uid !== process.geteuid!()) {
    fs.closeSync(fd);
    throw new RelayInstead('not a regular file of this account');
  }
  return fd;
}

export class Follower {
  private id: number | undefined;
  private cancelRequested = false;
  private readonly abort = new AbortController();
  private fatal: unknown;
  private offset = 0;
  private lastState = 'PENDING';
  private startedPrinted = false;
  private finished = false;
  /** The waiting line is out: `Pending:` lines may follow it. */
  private waitingPrinted = false;
  /** The pending job's latest reason, and the code of the last `Pending:` line. */
  private reason: Reason | null = null;
  private reasonShown: string | undefined;
  /** Direct path: wakes the reader (log grew, job changed, end). */
  private pokeReader: (() => void) | undefined;

  constructor(private readonly deps: FollowDeps) {}

  /** Bytes of the log written so far. */
  get written(): number { return this.offset; }

  /** Signal handler: the first call requests cancellation; later calls do nothing. */
  requestCancel(): void {
    if (this.cancelRequested) return;
    this.cancelRequested = true;
    if (this.id !== undefined) void this.sendCancel(this.id);
  }

  private async sendCancel(id: number): Promise<void> {
    const every = this.deps.retryEveryMs ?? 100;
    const limit = this.deps.retryForMs ?? 60_000;
    const since = Date.now();
    for (;;) {
      try {
        await this.deps.request('cancel', { id }, { home: this.deps.home });
        return;
      } catch (e) {
        if (this.finished) return;
        if (e instanceof ConnectError && Date.now() - since < limit) {
          try { await sleep(every, this.abort.signal); } catch { return; }
          continue;
        }
        this.fail(e);
        return;
      }
    }
  }

  private fail(e: unknown): void {
    if (this.fatal === undefined) this.fatal = e;
    this.abort.abort(e);
  }

  private line(what: string): void {
    this.deps.status(`[xlurm] ${formatUtc(this.deps.now())} UTC Job ${this.id}: ${what}`);
  }

  private noteJob(job: Job): void {
    this.lastState = job.state;
    this.reason = job.state === 'PENDING' ? job.reason ?? null : null;
    if (job.started_at !== null && job.started_at !== undefined && !this.startedPrinted) {
      this.startedPrinted = true;
      this.line('Task started.');
    }
    this.showReason();
    this.pokeReader?.();
  }

  /**
   * After the waiting line, and again whenever the code changes (a new
   * message under the same code is not news): `Pending: <Code>: <message>`
   * (docs/behaviour.md §20.4). The daemon pushes a job event when a
   * followed job's code changes.
   */
  private showReason(): void {
    if (!this.waitingPrinted || this.finished || this.startedPrinted || this.reason === null) return;
    if (this.reason.code === this.reasonShown) return;
    this.reasonShown = this.reason.code;
    this.line(`Pending: ${reasonText(this.reason)}`);
  }

  /** Synchronous unless stdout applies backpressure: no promise per chunk on the fast path. */
  private onLog(offset: number, bytes: Buffer): void | Promise<void> {
    let data = bytes;
    let at = offset;
    if (at < this.offset) { // already written before a reconnect
      const skip = this.offset - at;
      if (skip >= data.length) return;
      data = data.subarray(skip);
      at = this.offset;
    }
    const end = at + data.length;
    const pending = data.length ? this.deps.write(data) : undefined;
    if (!pending) { this.offset = end; return; }
    return pending.then(() => { this.offset = end; });
  }

  /**
   * The `follow` stream until its end, reconnecting while the daemon is away.
   * `bytes` false: state changes only. `signal` stops it (with its reason).
   */
  private async followToEnd(id: number, bytes: boolean, signal: AbortSignal): Promise<StreamEnd> {
    let retrySince: number | undefined;
    for (;;) {
      try {
        return await this.deps.stream('follow', bytes ? { id, offset: this.offset } : { id, bytes: false }, {
          onFirstFrame: () => { retrySince = undefined; },
          onJob: (j) => this.noteJob(j),
          onLog: (off, b) => (bytes ? this.onLog(off, b) : undefined),
        }, { home: this.deps.home, signal });
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        if (!retryable(e)) throw e;
        retrySince ??= Date.now();
        if (Date.now() - retrySince >= (this.deps.retryForMs ?? 60_000)) throw e;
        await sleep(this.deps.retryEveryMs ?? 100, signal);
      }
    }
  }

  /**
   * Direct path: copy the log file from `this.offset` to stdout until `ended()`
   * was true before a read that found nothing more (protocol's LogTail: the
   * same waiting policy as the daemon's relay). Rejects with RelayInstead
   * when the file cannot be read as this account's regular file.
   */
  private async readLog(file: string, ended: () => boolean, signal: AbortSignal): Promise<void> {
    const buf = Buffer.allocUnsafeSlow(DIRECT_CHUNK);
    const tail = new LogTail(file, this.offset, {
      open: () => openLog(file),
      caughtUp: false,
      read(fd, offset) {
        const n = fs.readSync(fd, buf, 0, DIRECT_CHUNK, offset);
        this.caughtUp = n < DIRECT_CHUNK;
        return n;
      },
      deliver: (n) => this.deps.write(buf.subarray(0, n)),
      ended,
      stopped: () => signal.aborted,
    }, { openPollMs: DIRECT_OPEN_POLL_MS });
    this.pokeReader = tail.poke;
    signal.addEventListener('abort', tail.poke, { once: true });
    try {
      if (!(await tail.run())) throw signal.reason;
    } finally {
      this.offset = tail.offset;
      this.pokeReader = undefined;
      signal.removeEventListener('abort', tail.poke);
    }
  }

  /**
   * Follow with the direct path: the state stream and the file reader run
   * together; the exit status is known once the stream ended and the reader
   * drained the file. Resolves undefined when the relay must take over (at
   * `this.offset`, nothing written twice).
   */
  private async followDirect(id: number, file: string): Promise<StreamEnd | undefined> {
    const stop = new AbortController();
    const onAbort = () => stop.abort(this.abort.signal.reason);
    this.abort.signal.addEventListener('abort', onAbort, { once: true });
    let end: StreamEnd | undefined;
    const reader = this.readLog(file, () => end !== undefined, stop.signal).then(
      () => undefined,
      (e) => { stop.abort(e); throw e; },
    );
    reader.catch(() => undefined); // observed below
    try {
      try {
        end = await this.followToEnd(id, false, stop.signal);
      } catch (e) {
        const oldDaemon = e instanceof CliError && e.code === 'INVALID_REQUEST';
        if (!stop.signal.aborted) stop.abort(e);
        try { await reader; } catch (r) { if (!(r instanceof RelayInstead) && r !== e) throw r; }
        if (oldDaemon || e instanceof RelayInstead) return undefined;
        throw e;
      }
      this.pokeReader?.();
      try {
        await reader;
      } catch (r) {
        if (r instanceof RelayInstead) return undefined;
        throw r;
      }
      return end;
    } finally {
      this.abort.signal.removeEventListener('abort', onAbort);
    }
  }

  /** Follow `job` (as returned by submit) to its end; resolves with the exit status for xrun. */
  async follow(job: Job): Promise<number> {
    const id = job.id;
    this.id = id;
    this.noteJob(job);
    if (this.cancelRequested) void this.sendCancel(id);
    const waiting = setTimeout(() => {
      if (!this.finished && this.lastState === 'PENDING' && !this.startedPrinted) {
        this.line('Waiting for resources...');
        this.waitingPrinted = true;
        this.showReason();
      }
    }, this.deps.waitingAfterMs ?? 1000);
    try {
      const file = this.deps.logFile?.(id);
      let end: StreamEnd | undefined;
      try {
        if (file !== undefined) end = await this.followDirect(id, file);
        end ??= await this.followToEnd(id, true, this.abort.signal);
      } catch (e) {
        if (this.fatal !== undefined) throw this.fatal;
        throw e;
      }
      this.finished = true;
      if (!end.job) throw new CliError('job not found');
      this.noteJob(end.job);
      const result = end.job.result;
      if (!result) throw new CliError('unexpected response');
      if (result.error) this.deps.status(`xlurm: ${result.error}`);
      return result.exit_code;
    } finally {
      this.finished = true;
      clearTimeout(waiting);
      if (!this.abort.signal.aborted) this.abort.abort(new CliError('finished')); // stops a cancel retry
    }
  }
}
