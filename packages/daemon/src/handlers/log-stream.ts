/**
 * Streaming a job's log (and, for `follow`, its state changes) to one client.
 * Bytes travel as raw frame attachments. Reads are paced by the socket: the
 * next chunk is read only after the previous one drained, so a slow reader
 * costs one buffer, not memory that grows with the log.
 */
import * as fs from 'node:fs';
import type { Job } from '@xlurm/protocol';
import { PROTOCOL_VERSION, jobPaths, isTerminal } from '@xlurm/protocol';
import { toWireJob } from '../store/store';
import type { Caller, Core } from '../core';
import type { StreamOut } from './types';

/**
 * Bytes read per frame. A client that stops reading holds one chunk in its
 * socket's queue, so this bounds the memory a stuck reader costs.
 */
const CHUNK = 256 * 1024;
/** One read buffer for every stream: reads are synchronous and each chunk is copied out before any await. */
const readBuf = Buffer.allocUnsafe(CHUNK);
const IDLE_POLL_MS = 250;
const V = PROTOCOL_VERSION;

export function logStream(core: Core, caller: Caller, id: number, start: number, follow: boolean) {
  let job: Job = toWireJob(core.jobFor(caller, id));
  return {
    stream: async (out: StreamOut): Promise<void> => {
      const file = jobPaths(core.home, id).log;
      let offset = start;
      let fd = -1;
      let wake: (() => void) | undefined;
      let dirty = true;
      const poke = () => { dirty = true; const w = wake; wake = undefined; w?.(); };
      let watcher: fs.FSWatcher | undefined;
      let jobChanged = false;
      const unlisten = follow ? core.listen(id, (j) => { job = j; jobChanged = true; poke(); }) : undefined;
      void out.gone.then(poke);
      try {
        if (follow) await out.send({ v: V, ok: true, event: 'job', job });
        for (;;) {
          if (out.closed) return;
          if (jobChanged) { jobChanged = false; await out.send({ v: V, ok: true, event: 'job', job }); }
          if (fd < 0) {
            try { fd = fs.openSync(file, 'r'); } catch { fd = -1; }
            if (fd >= 0 && follow && !watcher) {
              try { watcher = fs.watch(file, { persistent: false }, poke); watcher.on('error', () => undefined); } catch { watcher = undefined; }
            }
          }
          // Snapshot "terminal" before reading: bytes written before the end are then all read.
          const done = !follow || isTerminal(job.state);
          let n = 0;
          if (fd >= 0) n = fs.readSync(fd, readBuf, 0, CHUNK, offset);
          if (n > 0) {
            await out.send({ v: V, ok: true, event: 'log', offset }, Buffer.from(readBuf.subarray(0, n)));
            offset += n;
            continue;
          }
          if (done) {
            await out.send({ v: V, ok: true, event: 'end', job: follow ? job : null, offset });
            return;
          }
          if (!dirty) {
            await new Promise<void>((resolve) => {
              wake = resolve;
              // inotify can miss nothing we need, but a file created after the
              // watch was attempted has none: poll slowly as a backstop.
              setTimeout(poke, IDLE_POLL_MS).unref();
            });
          }
          dirty = false;
        }
      } finally {
        unlisten?.();
        watcher?.close();
        if (fd >= 0) fs.closeSync(fd);
      }
    },
  };
}
