/**
 * xrun's follower: one streaming `follow` connection carries state changes
 * and log bytes until the job has a result. If the connection drops (the
 * daemon restarted), it reconnects from the last byte written, every 100 ms
 * for up to 60 s, so log bytes are neither lost nor repeated. The first
 * SIGINT/SIGTERM asks the daemon to cancel the job (once, on a separate
 * connection) and following continues until the job's end.
 */
import type { Job } from '@xlurm/protocol';
import { ConnectError, ConnectionClosed, request as realRequest, stream as realStream } from './client';
import { CliError } from './errors';
import { formatUtc } from './format/time';

export interface FollowDeps {
  stream: typeof realStream;
  request: typeof realRequest;
  /** Write log bytes; resolves when the bytes are accepted (backpressure). */
  write(bytes: Buffer): Promise<void>;
  /** One status line on stderr. */
  status(line: string): void;
  now(): Date;
  home?: string;
  retryEveryMs?: number;
  retryForMs?: number;
  waitingAfterMs?: number;
}

/** Dropped connections and a daemon that is shutting down are worth retrying. */
export function retryable(e: unknown): boolean {
  return e instanceof ConnectError || e instanceof ConnectionClosed || (e instanceof CliError && e.code === 'SHUTTING_DOWN');
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) { reject(signal.reason); return; }
    const onAbort = () => { clearTimeout(t); reject(signal.reason); };
    const t = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
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
    if (job.started_at !== null && job.started_at !== undefined && !this.startedPrinted) {
      this.startedPrinted = true;
      this.line('Task started.');
    }
  }

  private async onLog(offset: number, bytes: Buffer): Promise<void> {
    let data = bytes;
    let at = offset;
    if (at < this.offset) { // already written before a reconnect
      const skip = this.offset - at;
      if (skip >= data.length) return;
      data = data.subarray(skip);
      at = this.offset;
    }
    if (data.length) await this.deps.write(data);
    this.offset = at + data.length;
  }

  /** Follow `job` (as returned by submit) to its end; resolves with the exit status for xrun. */
  async follow(job: Job): Promise<number> {
    const id = job.id;
    this.id = id;
    this.noteJob(job);
    if (this.cancelRequested) void this.sendCancel(id);
    const waiting = setTimeout(() => {
      if (!this.finished && this.lastState === 'PENDING' && !this.startedPrinted) this.line('Waiting for resources...');
    }, this.deps.waitingAfterMs ?? 1000);
    let retrySince: number | undefined;
    try {
      for (;;) {
        try {
          const end = await this.deps.stream('follow', { id, offset: this.offset }, {
            onFirstFrame: () => { retrySince = undefined; },
            onJob: (j) => this.noteJob(j),
            onLog: (off, bytes) => this.onLog(off, bytes),
          }, { home: this.deps.home, signal: this.abort.signal });
          this.finished = true;
          if (!end.job) throw new CliError('job not found');
          this.noteJob(end.job);
          const result = end.job.result;
          if (!result) throw new CliError('unexpected response');
          if (result.error) this.deps.status(`xlurm: ${result.error}`);
          return result.exit_code;
        } catch (e) {
          if (this.fatal !== undefined) throw this.fatal;
          if (!retryable(e)) throw e;
          retrySince ??= Date.now();
          if (Date.now() - retrySince >= (this.deps.retryForMs ?? 60_000)) throw e;
          try { await sleep(this.deps.retryEveryMs ?? 100, this.abort.signal); } catch { throw this.fatal; }
        }
      }
    } finally {
      this.finished = true;
      clearTimeout(waiting);
      if (!this.abort.signal.aborted) this.abort.abort(new CliError('finished')); // stops a cancel retry
    }
  }
}
