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
 * - following a live job, reads wait until the writer wrote a while, so a
 *   fast job's output travels in large chunks (the waiting policy is
 *   protocol's LogTail, shared with xrun's direct read of its own log).
 */
import * as fs from 'node:fs';
import type { Job } from '@xlurm/protocol';
import { LogTail, PROTOCOL_VERSION, isTerminal } from '@xlurm/protocol';
import { jobLogPath } from '../runner/job-files';
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
/**
 * Looking for a log that does not exist yet: the stream is poked on every
 * state change of the job (its start creates the log), so this is a backstop.
 */
const OPEN_POLL_MS = 250;
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
      const file = jobLogPath(core.home, id);
      let jobChanged = false;
      /** The chunk being sent, until the socket took all of it (or closed). */
      let chunk: Chunk | undefined;
      const tail = new LogTail(file, start, {
        open: () => {
          if (!bytes) return -1;
          try { return fs.openSync(file, 'r'); } catch { return -1; }
        },
        caughtUp: false,
        read(fd, offset) {
          chunk = readChunk(fd, offset);
          this.caughtUp = chunk.all;
          return chunk.bytes.length;
        },
        deliver: (_n, offset) => out.send({ v: V, ok: true, event: 'log', offset }, chunk!.bytes),
        delivered: () => { release(chunk); chunk = undefined; },
        // Snapshot before each read (LogTail's order): bytes written before the end are then all read.
        ended: () => !follow || isTerminal(job.state),
        stopped: () => out.closed,
        turn: () => {
          if (!jobChanged) return undefined;
          jobChanged = false;
          return out.send({ v: V, ok: true, event: 'job', job });
        },
      }, { openPollMs: OPEN_POLL_MS });
      const unlisten = follow ? core.listen(id, (j) => { job = j; jobChanged = true; tail.poke(); }) : undefined;
      void out.gone.then(tail.poke);
      try {
        if (follow) await out.send({ v: V, ok: true, event: 'job', job });
        if (await tail.run()) await out.send({ v: V, ok: true, event: 'end', job: follow ? job : null, offset: tail.offset });
      } finally {
        // A send that did not finish resolved on 'close': the socket is done with the buffer.
        release(chunk);
        unlisten?.();
      }
    },
  };
}
