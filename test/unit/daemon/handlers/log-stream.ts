// The log relay (handlers/log-stream.ts): chunks of at most CHUNK_MAX in order from the offset
// asked for, the next read only once the socket took the previous chunk, and at most MAX_LARGE
// large buffers held by all streams together (the rest read CHUNK_MIN). The handlers' own
// tests (log.ts, follow.ts) cover authorisation and following.
import t from 'tap';
import * as fs from 'node:fs';
import { jobPaths } from '@xlurm/protocol';
import { CHUNK_MAX, CHUNK_MIN, MAX_LARGE, logStream } from '../../../../packages/daemon/src/handlers/log-stream';
import type { StreamOut } from '../../../../packages/daemon/src/handlers/types';
import { alice, aliceCaller, makeCore, spec } from '../../../helpers/core';
import { waitFor } from '../../../helpers/wait';

interface Frame { event: string; offset?: number; bytes?: Buffer }

/** A client whose socket takes each frame only when `take()` is called (or at once, if `eager`). */
function client(eager: boolean) {
  const frames: Frame[] = [];
  const waiting: Array<() => void> = [];
  let closed = false;
  let gone!: () => void;
  const out: StreamOut = {
    get closed() { return closed; },
    gone: new Promise<void>((r) => { gone = r; }),
    send(msg: object, raw?: Buffer) {
      // Copied: the relay reuses its large buffers once a send resolved.
      frames.push({ ...(msg as Frame), ...(raw ? { bytes: Buffer.from(raw) } : {}) });
      if (eager) return Promise.resolve();
      return new Promise<void>((r) => waiting.push(r));
    },
  };
  return {
    out, frames,
    /** The socket took everything sent so far. */
    take() { for (const r of waiting.splice(0)) r(); },
    close() { closed = true; gone(); this.take(); },
  };
}

/** A job whose log holds `size` bytes of a known pattern. */
async function jobWithLog(t: Parameters<typeof makeCore>[0], size: number) {
  const tc = await makeCore(t);
  const job = await tc.core.submit(alice, spec({ count: 1 })); // no device: stays pending
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = 32 + (i % 95);
  fs.writeFileSync(jobPaths(tc.dir, job.id).log, bytes);
  return { tc, id: job.id, bytes };
}

t.test('a large log: chunks of at most CHUNK_MAX, contiguous, from the offset asked for', async (t) => {
  const size = 2 * CHUNK_MAX + 12345;
  const { tc, id, bytes } = await jobWithLog(t, size);
  for (const start of [0, 1000]) {
    const c = client(true);
    await logStream(tc.core, aliceCaller, id, start, false).stream(c.out);
    const logs = c.frames.filter((f) => f.event === 'log');
    t.ok(logs.every((f) => f.bytes!.length <= CHUNK_MAX && f.bytes!.length > 0), `start ${start}: no chunk above CHUNK_MAX`);
    t.equal(logs[0]!.bytes!.length, CHUNK_MAX, 'the first chunk is a full one');
    let offset = start;
    for (const f of logs) { t.equal(f.offset, offset); offset += f.bytes!.length; }
    t.ok(Buffer.concat(logs.map((f) => f.bytes!)).equals(bytes.subarray(start)), 'every byte, in order');
    t.match(c.frames.at(-1), { event: 'end', offset: size });
  }
});

t.test('a small log: one frame of exactly its bytes', async (t) => {
  const { tc, id, bytes } = await jobWithLog(t, 100);
  const c = client(true);
  await logStream(tc.core, aliceCaller, id, 0, false).stream(c.out);
  t.same(c.frames.map((f) => [f.event, f.offset, f.bytes?.length]), [['log', 0, 100], ['end', 100, undefined]]);
  t.ok(c.frames[0]!.bytes!.equals(bytes));
});

t.test('stuck clients hold one chunk each, and at most MAX_LARGE large ones in all', async (t) => {
  const { tc, id, bytes } = await jobWithLog(t, 2 * CHUNK_MAX);
  const clients = Array.from({ length: MAX_LARGE + 2 }, () => client(false));
  const streams: Promise<void>[] = [];
  for (const c of clients) {
    streams.push(logStream(tc.core, aliceCaller, id, 0, false).stream(c.out));
    await waitFor(() => c.frames.length === 1, { what: 'the first chunk' });
  }
  t.same(clients.map((c) => c.frames[0]!.bytes!.length),
    [...Array<number>(MAX_LARGE).fill(CHUNK_MAX), CHUNK_MIN, CHUNK_MIN], 'the streams beyond MAX_LARGE read small chunks');
  t.same(clients.map((c) => c.frames.length), clients.map(() => 1), 'nothing more is read before the socket took the chunk');
  // The first client takes its chunk: the next one is read (and its large buffer reused).
  clients[0]!.take();
  await waitFor(() => clients[0]!.frames.length === 2, { what: 'the second chunk' });
  t.equal(clients[0]!.frames[1]!.bytes!.length, CHUNK_MAX);
  for (const c of clients.slice(1)) c.close();
  // The first one reads to the end.
  const first = clients[0]!;
  const drain = setInterval(() => first.take(), 1);
  t.teardown(() => clearInterval(drain));
  await Promise.all(streams);
  t.ok(Buffer.concat(first.frames.filter((f) => f.event === 'log').map((f) => f.bytes!)).equals(bytes));
  // Every large buffer came back: MAX_LARGE new stuck streams get one each.
  const more = Array.from({ length: MAX_LARGE }, () => client(false));
  const moreStreams = more.map((c) => logStream(tc.core, aliceCaller, id, 0, false).stream(c.out));
  await waitFor(() => more.every((c) => c.frames.length === 1), { what: 'the first chunks' });
  t.same(more.map((c) => c.frames[0]!.bytes!.length), more.map(() => CHUNK_MAX), 'large buffers released by closed and finished streams');
  for (const c of more) c.close();
  await Promise.all(moreStreams);
});
