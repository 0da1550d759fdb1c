// The shared log-tail loop against a real file this test writes: it waits
// for more while the job runs (pausing, then on inotify), drains what was
// written before the end, stops when told, and honours backpressure.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LogTail, TAIL_PAUSE_MAX_MS, TAIL_WATCH_AFTER_MS, type TailIo } from '@xlurm/protocol';
import { waitFor } from '../../helpers/wait';

interface Recorder {
  end: boolean;
  stop: boolean;
  opens: number;
  reads: number;
  emptyReads: number;
  delivered: number;
  fds: number[];
  io: TailIo;
  text(): string;
  bytes(): Buffer;
}

/** A TailIo over `file` with a `chunk`-byte buffer, recording what it was given. */
function recorder(file: string, chunk = 4096): Recorder {
  const buf = Buffer.alloc(chunk);
  const got: Buffer[] = [];
  const r: Recorder = {
    end: false,
    stop: false,
    opens: 0,
    reads: 0,
    emptyReads: 0,
    delivered: 0,
    fds: [],
    text: () => Buffer.concat(got).toString(),
    bytes: () => Buffer.concat(got),
    io: {
      open: () => {
        r.opens++;
        try {
          const fd = fs.openSync(file, 'r');
          r.fds.push(fd);
          return fd;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') return -1;
          throw e;
        }
      },
      caughtUp: false,
      read(fd, offset) {
        const n = fs.readSync(fd, buf, 0, chunk, offset);
        this.caughtUp = n < chunk;
        r.reads++;
        if (n === 0) r.emptyReads++;
        return n;
      },
      deliver: (n) => { got.push(Buffer.from(buf.subarray(0, n))); },
      delivered: () => { r.delivered++; },
      ended: () => r.end,
      stopped: () => r.stop,
    },
  };
  return r;
}

t.test('waits for more while the job runs, then drains and ends', async (t) => {
  const file = path.join(t.testdir(), 'job.log');
  fs.writeFileSync(file, 'first\n');
  const r = recorder(file);
  const tail = new LogTail(file, 0, r.io, { openPollMs: 20 });
  const run = tail.run();
  await waitFor(() => r.text() === 'first\n', { what: 'the first line' });
  // Quiet long enough that the loop stopped pausing and waits on inotify:
  // the pauses 1, 2, 4, 8, 8... ms add up past TAIL_WATCH_AFTER_MS, then one
  // more read follows the watch.
  let quiet = 0;
  let empty = 0;
  for (let p = 1; quiet < TAIL_WATCH_AFTER_MS; p = Math.min(2 * p, TAIL_PAUSE_MAX_MS)) { quiet += p; empty++; }
  await waitFor(() => r.emptyReads >= empty + 1, { what: 'a quiet spell' });
  fs.appendFileSync(file, 'second\n');
  await waitFor(() => r.text() === 'first\nsecond\n', { what: 'the line written after the quiet spell' });
  fs.appendFileSync(file, 'last\n');
  r.end = true;
  tail.poke();
  t.equal(await run, true, 'drained after the end');
  t.equal(r.text(), 'first\nsecond\nlast\n', 'what was written before the end is all read');
  t.equal(tail.offset, fs.statSync(file).size);
  t.equal(r.delivered, 3);
  t.throws(() => fs.fstatSync(r.fds[0]!), { code: 'EBADF' }, 'the descriptor is closed');
});

t.test('bytes written before the end are all read: "ended" is looked at before each read', async (t) => {
  const file = path.join(t.testdir(), 'job.log');
  fs.writeFileSync(file, Buffer.alloc(10_000, 'a'));
  const r = recorder(file, 4096);
  const deliver = r.io.deliver;
  let first = true;
  r.io.deliver = (n, offset) => {
    if (first) {
      first = false;
      // The job writes its last bytes and ends while the first chunk is delivered.
      fs.appendFileSync(file, Buffer.alloc(5000, 'b'));
      r.end = true;
    }
    return deliver(n, offset);
  };
  t.equal(await new LogTail(file, 0, r.io, { openPollMs: 20 }).run(), true);
  t.same(r.bytes(), Buffer.concat([Buffer.alloc(10_000, 'a'), Buffer.alloc(5000, 'b')]));
  t.equal(r.reads, 5, 'four chunks (4096, 4096, 4096, 2712), then the empty read that ends it');
});

t.test('from an offset; a log that appears later is found on a poke', async (t) => {
  const file = path.join(t.testdir(), 'job.log');
  const r = recorder(file);
  // A long poll: only the poke can find the file in time.
  const tail = new LogTail(file, 3, r.io, { openPollMs: 60_000 });
  const run = tail.run();
  await waitFor(() => r.opens >= 2 && r.fds.length === 0, { what: 'the looks before the log exists' });
  fs.writeFileSync(file, 'skipmore\n');
  tail.poke();
  await waitFor(() => r.text() === 'pmore\n', { what: 'the bytes beyond the offset' });
  r.end = true;
  tail.poke();
  t.equal(await run, true);
  t.equal(tail.offset, 9);
});

t.test('stops when told, without reading on; the descriptor is closed', async (t) => {
  const file = path.join(t.testdir(), 'job.log');
  fs.writeFileSync(file, 'x');
  const r = recorder(file);
  const tail = new LogTail(file, 0, r.io, { openPollMs: 20 });
  const run = tail.run();
  await waitFor(() => r.text() === 'x', { what: 'the first byte' });
  r.stop = true;
  tail.poke();
  t.equal(await run, false, 'stopped, not drained');
  const reads = r.reads;
  fs.appendFileSync(file, 'y');
  t.equal(r.reads, reads);
  t.equal(r.text(), 'x');
  t.throws(() => fs.fstatSync(r.fds[0]!), { code: 'EBADF' });
});

t.test('backpressure: nothing more is read until a delivery was taken', async (t) => {
  const file = path.join(t.testdir(), 'job.log');
  fs.writeFileSync(file, Buffer.alloc(3 * 4096, 'z'));
  const r = recorder(file, 4096);
  const deliver = r.io.deliver;
  const waiting: (() => void)[] = [];
  r.io.deliver = (n, offset) => {
    void deliver(n, offset);
    return new Promise<void>((resolve) => waiting.push(resolve));
  };
  r.end = true;
  const tail = new LogTail(file, 0, r.io, { openPollMs: 20 });
  const run = tail.run();
  for (let i = 1; i <= 3; i++) {
    await waitFor(() => waiting.length === 1, { what: `delivery ${i}` });
    t.equal(r.reads, i, 'one read per delivery taken');
    t.equal(r.delivered, i - 1, 'the buffer is not released before the bytes were taken');
    t.equal(tail.offset, (i - 1) * 4096);
    waiting.pop()!();
  }
  t.equal(await run, true);
  t.equal(r.bytes().length, 3 * 4096);
});

t.test('the turn hook runs before each read and is waited for; an open failure rejects', async (t) => {
  const file = path.join(t.testdir(), 'job.log');
  fs.writeFileSync(file, 'a');
  const r = recorder(file);
  const order: string[] = [];
  let release: (() => void) | undefined;
  r.io.turn = () => {
    order.push('turn');
    if (order.length > 1) return undefined;
    return new Promise<void>((resolve) => { release = resolve; });
  };
  const read = r.io.read.bind(r.io);
  r.io.read = (fd, offset) => { order.push('read'); return read(fd, offset); };
  r.end = true;
  const run = new LogTail(file, 0, r.io, { openPollMs: 20 }).run();
  await waitFor(() => release !== undefined, { what: 'the first turn' });
  t.same(order, ['turn'], 'no read while the turn hook is pending');
  release!();
  t.equal(await run, true);
  t.same(order, ['turn', 'read', 'turn', 'read']);

  const failing = recorder(file);
  failing.io.open = () => { throw new Error('not a regular file of this account'); };
  await t.rejects(new LogTail(file, 0, failing.io, { openPollMs: 20 }).run(), { message: 'not a regular file of this account' });
});
