/**
 * Following a job's log file while the job writes it: read what is there,
 * wait until more arrives or the job ended, and once it ended drain what is
 * left. Two readers use it: the daemon relaying a log to a client
 * (daemon/src/handlers/log-stream.ts) and xrun reading its own job's log
 * directly when it runs as the daemon's account (cli/src/follow.ts). The
 * waiting policy lives here once; what differs between the two (how the file
 * is opened, the buffers, where the bytes go, how backpressure is signalled)
 * is the caller's `TailIo`.
 *
 * The policy:
 *
 * - "ended" is read *before* each read: bytes written before the end are then
 *   all read, and the tail stops at the first read after the end that finds
 *   nothing;
 * - a read that caught up with a live writer is followed by a
 *   TAIL_PAUSE_MIN_MS pause, so a fast writer's output gathers into large
 *   chunks (reading on every inotify event meant one read and one frame per
 *   few KiB the job wrote, and a job slowed down by its own follower);
 * - while the file stays quiet, look again after TAIL_PAUSE_MIN_MS, doubling
 *   up to TAIL_PAUSE_MAX_MS; once it was quiet for TAIL_WATCH_AFTER_MS, wait
 *   on inotify, with a TAIL_POLL_MS backstop poll (a watch can fail, e.g. out
 *   of watches); output after a quiet spell still shows at once;
 * - a log that does not exist yet (the job is about to start) is looked for
 *   again every `openPollMs`, or at once on a `poke()`.
 *
 * The loop adds no allocation and no await per chunk of its own: a delivery
 * that returns nothing costs no promise.
 */
import * as fs from 'node:fs';

/** First pause after a read that caught up with the writer, and while the file is quiet. */
export const TAIL_PAUSE_MIN_MS = 1;
/** Longest of the doubling pauses. */
export const TAIL_PAUSE_MAX_MS = 8;
/** Quiet for this long: wait on inotify instead of pausing. */
export const TAIL_WATCH_AFTER_MS = 30;
/** Backstop poll while waiting on inotify. */
export const TAIL_POLL_MS = 250;

/** What the two readers of a log do differently. */
export interface TailIo {
  /** Open the log read-only: its descriptor, or -1 while it does not exist yet. Throw to give up. */
  open(): number;
  /**
   * Read what `fd` holds beyond `offset`, at most one chunk, into a buffer
   * of the caller's: the number of bytes read, 0 when there was nothing new.
   * Sets `caughtUp`.
   */
  read(fd: number, offset: number): number;
  /** After a `read`: whether its bytes were all the file held (the reader caught up with the writer). */
  caughtUp: boolean;
  /**
   * Hand on the `n` bytes just read, which start at `offset`. Returns nothing
   * when they were taken at once, or a promise that resolves once they were
   * (backpressure).
   */
  deliver(n: number, offset: number): void | Promise<void>;
  /** The bytes of the last `deliver` were taken: their buffer may be reused. */
  delivered?(): void;
  /** Nothing more will be written (the job ended, or only what is there now is wanted). */
  ended(): boolean;
  /** Stop now (the reader is gone or gave up); checked before every read. */
  stopped(): boolean;
  /** Runs first in every turn (the daemon sends a state change here); a promise is waited for. */
  turn?(): void | Promise<void>;
}

export interface TailOptions {
  /** How often to look for a log that does not exist yet (a `poke()` looks at once). */
  openPollMs: number;
}

/** One log file followed from an offset; `run()` once. */
export class LogTail {
  /** Bytes delivered so far (the next read starts here). */
  offset: number;
  private wake: (() => void) | undefined;
  /** Something happened since the last wait (a poke): look again without waiting. */
  private dirty = true;

  constructor(
    private readonly file: string,
    start: number,
    private readonly io: TailIo,
    private readonly opts: TailOptions,
  ) {
    this.offset = start;
  }

  /** Look again now: the log may have grown, the job may have changed or ended, or the reader stopped. */
  readonly poke = (): void => {
    this.dirty = true;
    const w = this.wake;
    this.wake = undefined;
    w?.();
  };

  /** Wait for a poke, or `ms` at most. */
  private nap(ms: number): Promise<void> {
    return new Promise<void>((resolve) => { this.wake = resolve; setTimeout(this.poke, ms).unref(); });
  }

  /**
   * Follow the log until `ended()` was true before a read that found nothing
   * more (resolves true), or until `stopped()` (resolves false). Rejects with
   * what `io` threw. The descriptor and any watch are closed either way.
   */
  async run(): Promise<boolean> {
    const io = this.io;
    let fd = -1;
    let watcher: fs.FSWatcher | undefined;
    const unwatch = () => { watcher?.close(); watcher = undefined; };
    let pause = TAIL_PAUSE_MIN_MS;
    let quietMs = 0;
    try {
      for (;;) {
        if (io.stopped()) return false;
        const turn = io.turn?.();
        if (turn) await turn;
        if (fd < 0) fd = io.open();
        // Snapshot the end before reading: what was written before it is then all read.
        const final = io.ended();
        const n = fd >= 0 ? io.read(fd, this.offset) : 0;
        if (n > 0) {
          const caughtUp = io.caughtUp;
          const pending = io.deliver(n, this.offset);
          if (pending) await pending;
          io.delivered?.();
          this.offset += n;
          unwatch();
          pause = TAIL_PAUSE_MIN_MS;
          quietMs = 0;
          // Caught up with a live writer: let it write more before the next
          // read. Else, if the delivery waited for nothing, let the event
          // loop run once (signals, the state stream) before reading on.
          if (caughtUp && !final) await this.nap(TAIL_PAUSE_MIN_MS);
          else if (!pending) await new Promise<void>((r) => setImmediate(r));
          continue;
        }
        if (final) return true;
        if (fd < 0) {
          // Not created yet: the job is about to start (or never will; the end says so).
          if (!this.dirty) await this.nap(this.opts.openPollMs);
        } else if (quietMs < TAIL_WATCH_AFTER_MS) {
          // Quiet for a moment only: look again soon, without inotify.
          if (!this.dirty) await this.nap(pause);
          quietMs += pause;
          pause = Math.min(2 * pause, TAIL_PAUSE_MAX_MS);
        } else {
          if (!watcher) {
            try {
              watcher = fs.watch(this.file, { persistent: false }, this.poke);
              watcher.on('error', () => undefined);
            } catch {
              watcher = undefined;
            }
            // A write between the last read and the watch has no event: read once more.
            if (watcher) { this.dirty = false; continue; }
          }
          if (!this.dirty) await this.nap(TAIL_POLL_MS);
        }
        this.dirty = false;
      }
    } finally {
      unwatch();
      if (fd >= 0) fs.closeSync(fd);
    }
  }
}
