/**
 * Streaming a job's log (and, for `follow`, its state changes) to one client.
 *
 * Why the bytes go through the daemon: the log is created by the daemon's
 * account, mode 0600, under `jobs/` (0700), so the job's owner cannot open
 * it, and must not be able to open anyone else's. Handing the client a
 * read-only descriptor of its own log (SCM_RIGHTS, after the SO_PEERCRED
 * owner check) would be the zero-copy way, but Node cannot pass descriptors
 * over a Unix socket without native code. So the daemon checks the caller
 * (`Core.jobFor`: owner or root) once and relays the bytes. (A client that
 * runs as the daemon's own account can open the file anyway; xrun then reads
 * it itself and asks `follow` for state changes only: `bytes` false.)
 *
 * The relay is built for throughput with bounded memory:
 *
 * - large frames, read straight into the buffer that is sent (no copy in the
 *   daemon beyond the read itself; the server writes the frame head and the
 *   bytes with one writev, no concatenation);
 * - the large buffers are reused from a small pool: a fresh buffer of a
 *   megabyte is fresh memory, and the page faults of filling it cost more
 *   than the read (1 GiB read into fresh 1 MiB buffers took ~4.7 s on the
 *   development VM, into a reused one 0.25 s);
 * - one chunk per stream: the next is read only once the socket took the
 *   previous one, so a client that stops reading holds one chunk; at most
 *   MAX_LARGE streams hold a large one at a time, the others read 64 KiB
 *   chunks (heap memory sized to what is there), so thousands of stuck
 *   readers cannot exhaust the daemon;
 * - following a live job, reads wait until the writer wrote a while (see
 *   PAUSE_MIN_MS), so a fast job's output travels in large chunks.
 */
import * as fs from 'node:fs';
import type { Job } from '@xlurm/protocol';
import { PROTOCOL_VERSION, jobPaths, isTerminal } from '@xlurm/protocol';
import { toWireJob } from '../store/store';
import type { Caller, Core } from '../core';
import type { StreamOut } from './types';

/** Largest chunk of one log frame. */
export const CHUNK_MAX = 1 << 20;
/** Chunk of a stream that gets no large buffer. */
export const CHUNK_MIN = 64 * 1024;
/** Large buffers in use by all streams together, at most (8 MiB). */
export const MAX_LARGE = 8;
/** Idle large buffers kept for the next stream. */
const KEEP_LARGE = 2;
const IDLE_POLL_MS = 250;
/**
 * Following a live job: after a read that caught up with the writer, and
 * while the file stays quiet, look again after PAUSE_MIN_MS, doubling up to
 * PAUSE_MAX_MS; once it was quiet for WATCH_AFTER_MS, wait on inotify
 * instead. Reading on every inotify event while a job writes fast meant one
 * event, one read and one frame per few KiB the job wrote (and a job slowed
 * down by its own follower); pausing lets the writes gather into large
 * chunks, and output after a quiet spell still shows at once.
 */
const PAUSE_MIN_MS = 1;
const PAUSE_MAX_MS = 8;
const WATCH_AFTER_MS = 30;
const V = PROTOCOL_VERSION;

const idle: Buffer[] = [];
let largeInUse = 0;

/** Bytes read; `large`: the pooled buffer they are in; `all`: they were everything the file held. */
interface Chunk { bytes: Buffer; large: Buffer | undefined; all: boolean }
const NOTHING: Chunk = { bytes: Buffer.alloc(0), large: undefined, all: true };

function release(c: Chunk | undefined): void {
  if (!c?.large) return;
  largeInUse--;
  if (idle.length < KEEP_LARGE) idle.push(c.large);
}

/** Read what `fd` holds beyond `offset`, up to one chunk. */
function readChunk(fd: number, offset: number): Chunk {
  const avail = fs.fstatSync(fd).size - offset;
  if (avail <= 0) return NOTHING;
  let large: Buffer | undefined;
  let buf: Buffer;
  if (avail > CHUNK_MIN && largeInUse < MAX_LARGE) {
    large = idle.pop() ?? Buffer.allocUnsafeSlow(CHUNK_MAX);
    largeInUse++;
    buf = large;
  } else {
    buf = Buffer.allocUnsafe(Math.min(avail, CHUNK_MIN));
  }
  let n = 0;
  try {
    n = fs.readSync(fd, buf, 0, Math.min(avail, buf.length), offset);
  } finally {
    if (n === 0) release({ bytes: buf, large, all: true });
  }
  return n === 0 ? NOTHING : { bytes: buf.subarray(0, n), large, all: n >= avail };
}

/** `follow` with `bytes` false sends state changes only; the log is not even opened. */
export function logStream(core: Core, caller: Caller, id: number, start: number, follow: boolean, bytes = true) {
  let job: Job = toWireJob(core.jobFor(caller, id));
  return {
    stream: async (out: StreamOut): Promise<void> => {
      const file = jobPaths(core.home, id).log;
      let offset = start;
      let fd = -1;
      let wake: (() => void) | undefined;
      let dirty = true;
      const poke = () => { dirty = true; const w = wake; wake = undefined; w?.(); };
      /** Wait for a poke, or `ms` at most. */
      const nap = (ms: number) => new Promise<void>((resolve) => { wake = resolve; setTimeout(poke, ms).unref(); });
      let watcher: fs.FSWatcher | undefined;
      const unwatch = () => { watcher?.close(); watcher = undefined; };
      let pause = PAUSE_MIN_MS;
      let quietMs = 0;
      let jobChanged = false;
      /** The chunk being sent, until the socket took all of it (or closed). */
      let chunk: Chunk | undefined;
      const unlisten = follow ? core.listen(id, (j) => { job = j; jobChanged = true; poke(); }) : undefined;
      void out.gone.then(poke);
      try {
        if (follow) await out.send({ v: V, ok: true, event: 'job', job });
        for (;;) {
          if (out.closed) return;
          if (jobChanged) { jobChanged = false; await out.send({ v: V, ok: true, event: 'job', job }); }
          if (fd < 0 && bytes) {
            try { fd = fs.openSync(file, 'r'); } catch { fd = -1; }
          }
          // Snapshot "terminal" before reading: bytes written before the end are then all read.
          const done = !follow || isTerminal(job.state);
          chunk = fd >= 0 ? readChunk(fd, offset) : NOTHING;
          const n = chunk.bytes.length;
          if (n > 0) {
            const caughtUp = chunk.all;
            await out.send({ v: V, ok: true, event: 'log', offset }, chunk.bytes);
            release(chunk);
            chunk = undefined;
            offset += n;
            unwatch();
            pause = PAUSE_MIN_MS;
            quietMs = 0;
            // Caught up with a live writer: let it write more before the next read.
            if (caughtUp && !done) await nap(PAUSE_MIN_MS);
            continue;
          }
          if (done) {
            await out.send({ v: V, ok: true, event: 'end', job: follow ? job : null, offset });
            return;
          }
          if (fd >= 0 && quietMs < WATCH_AFTER_MS) {
            // Quiet for a moment only: look again soon, without inotify.
            if (!dirty) await nap(pause);
            quietMs += pause;
            pause = Math.min(2 * pause, PAUSE_MAX_MS);
          } else {
            if (fd >= 0 && !watcher) {
              try { watcher = fs.watch(file, { persistent: false }, poke); watcher.on('error', () => undefined); } catch { watcher = undefined; }
              // A write between the last read and the watch has no event: read once more.
              if (watcher) { dirty = false; continue; }
            }
            // inotify can miss nothing we need, but a file created after the
            // watch was attempted has none: poll slowly as a backstop.
            if (!dirty) await nap(IDLE_POLL_MS);
          }
          dirty = false;
        }
      } finally {
        // A send that did not finish resolved on 'close': the socket is done with the buffer.
        release(chunk);
        unlisten?.();
        unwatch();
        if (fd >= 0) fs.closeSync(fd);
      }
    },
  };
}
