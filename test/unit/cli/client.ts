import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { ConnectError, ConnectionClosed, busyDelay, connect, notRunningMessage, request, setPeerCheck, stream } from '../../../packages/cli/src/client';
import { fakeDaemon, tempDir } from './fake-daemon';
import { waitFor } from '../../helpers/wait';

const job = (state: string, extra: object = {}) => ({ id: 9, state, started_at: null, result: null, ...extra });

t.test('one request per connection: {v, op, args} in, result out', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply([{ id: 1 }]));
  t.same(await request('queue', {}, { home: d.home }), [{ id: 1 }]);
  t.same(await request('get', { id: 3 }, { home: d.home }), [{ id: 1 }]);
  t.same(d.requests, [{ v: 1, op: 'queue', args: {} }, { v: 1, op: 'get', args: { id: 3 } }]);
});

t.test('a refusal fails with exactly its message and keeps its code', async (t) => {
  const d = await fakeDaemon(t, (c) => c.refuse('JOB_NOT_FOUND', 'job not found'));
  await t.rejects(request('get', { id: 1 }, { home: d.home }), { name: 'CliError', message: 'job not found', code: 'JOB_NOT_FOUND' });
});

t.test('broken replies', async (t) => {
  const replies: Array<(c: net.Socket) => void> = [
    (s) => s.end(),
    (s) => s.end('{"v":1,"ok":true,"result":'),
    (s) => s.end('not json\n'),
    (s) => s.end('[1,2]\n'),
    (s) => s.end('{"v":1,"ok":false}\n'),
    (s) => s.end('{"v":1}\n'),
    (s) => s.destroy(),
  ];
  const expected = [
    'connection closed before complete message', 'connection closed before complete message', 'unexpected response',
    'unexpected response', 'unexpected response', 'unexpected response', 'connection closed before complete message',
  ];
  let i = 0;
  const d = await fakeDaemon(t, (c) => replies[i++]!(c.socket));
  for (const message of expected) await t.rejects(request('status', {}, { home: d.home }), { message });
});

t.test('a reply that never comes times out', async (t) => {
  const d = await fakeDaemon(t, () => undefined);
  await t.rejects(request('status', {}, { home: d.home, timeoutMs: 50 }), { message: 'timed out waiting for the daemon' });
});

t.test('no daemon: the docs/behaviour.md §2.9 message with the OS error', async (t) => {
  const home = tempDir(t);
  await t.rejects(request('status', {}, { home }), {
    name: 'CliError',
    message: notRunningMessage('No such file or directory (os error 2)'),
  });
  fs.writeFileSync(path.join(home, 'xlurm.sock'), '');
  const e = await request('status', {}, { home }).catch((x) => x);
  t.ok(e instanceof ConnectError);
  t.equal(e.message, notRunningMessage('Connection refused (os error 111)'));
});

t.test('root is told to start the daemon, anyone else to ask the administrator', async (t) => {
  t.equal(notRunningMessage('Connection refused (os error 111)', 0), 'xlurm is not running; start it with `xlurm start`: Connection refused (os error 111)');
  t.equal(notRunningMessage('No such file or directory (os error 2)', 1000),
    'xlurm is not running; ask the administrator to run `sudo xlurm start`: No such file or directory (os error 2)');
  t.equal(notRunningMessage('x'), notRunningMessage('x', process.geteuid!()), 'the caller\'s own uid by default');
});

t.test('a failed peer check closes the connection before anything is sent', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply({}));
  setPeerCheck(() => { throw new Error('socket peer does not own the state directory'); });
  await t.rejects(request('status', {}, { home: d.home }), { message: 'socket peer does not own the state directory' });
  t.same(d.requests, []);
});

let nativeOk = true;
try { require('@xlurm/native').native(); } catch { nativeOk = false; }

t.test('the real SO_PEERCRED check', { skip: nativeOk ? false : 'native addon not built' }, async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply({ ok: 1 }));
  setPeerCheck(undefined);
  t.same(await request('status', {}, { home: d.home }), { ok: 1 }, 'peer (this process) owns the home');
  if (process.getuid!() === 0) {
    fs.chownSync(d.home, 1, 1);
    await t.rejects(request('status', {}, { home: d.home }), { message: 'socket peer does not own the state directory' });
    fs.chownSync(d.home, 0, 0);
  }
  const s = await connect(d.home);
  s.destroy();
});

t.test('streams: job and log events until end; raw bytes exact', async (t) => {
  const bytes = Buffer.from([0, 10, 255, 13, 10, 0x80]);
  const d = await fakeDaemon(t, (c) => {
    c.send({ v: 1, ok: true, event: 'job', job: job('RUNNING') });
    c.send({ v: 1, ok: true, event: 'log', offset: 0 }, bytes);
    c.send({ v: 1, ok: true, event: 'log', offset: 6 }, Buffer.from('tail'));
    c.send({ v: 1, ok: true, event: 'end', job: job('COMPLETED'), offset: 10 });
    c.socket.end();
  });
  const seen: unknown[] = [];
  const end = await stream('follow', { id: 9, offset: 0 }, {
    onJob: (j) => { seen.push(['job', j.state]); },
    onLog: async (off, b) => { seen.push(['log', off, b.toString('hex')]); },
  }, { home: d.home });
  t.same(seen, [['job', 'RUNNING'], ['log', 0, bytes.toString('hex')], ['log', 6, Buffer.from('tail').toString('hex')]]);
  t.same(end, { job: job('COMPLETED'), offset: 10 });
  t.same(d.requests[0], { v: 1, op: 'follow', args: { id: 9, offset: 0 } });
});

t.test('streams: a refusal, a dropped connection, an abort', async (t) => {
  let mode = 0;
  const d = await fakeDaemon(t, (c) => {
    if (mode === 0) c.refuse('PERMISSION_DENIED', 'permission denied: job belongs to bob (UID 1001)');
    else if (mode === 1) { c.send({ v: 1, ok: true, event: 'log', offset: 0 }, Buffer.from('x')); c.socket.destroy(); }
    else if (mode === 2) c.send({ v: 1, ok: true, event: 'surprise' });
    // mode 3: say nothing
  });
  const onLog = () => undefined;
  await t.rejects(stream('log', { id: 1 }, { onLog }, { home: d.home }), { message: 'permission denied: job belongs to bob (UID 1001)' });
  mode = 1;
  const dropped = await stream('log', { id: 1 }, { onLog }, { home: d.home }).catch((e) => e);
  t.ok(dropped instanceof ConnectionClosed);
  t.equal(dropped.message, 'connection closed before complete message');
  mode = 2;
  await t.rejects(stream('log', { id: 1 }, { onLog }, { home: d.home }), { message: 'unexpected response' });
  mode = 3;
  const ac = new AbortController();
  const p = stream('follow', { id: 1 }, { onLog, onFirstFrame: () => undefined }, { home: d.home, signal: ac.signal });
  ac.abort(new Error('stop here'));
  await t.rejects(p, { message: 'stop here' });
});

t.test('a handler error is not mistaken for a dropped connection', async (t) => {
  const d = await fakeDaemon(t, (c) => { c.send({ v: 1, ok: true, event: 'log', offset: 0 }, Buffer.from('x')); });
  const e = await stream('log', { id: 1 }, { onLog: () => { throw new Error('Broken pipe (os error 32)'); } }, { home: d.home }).catch((x) => x);
  t.notOk(e instanceof ConnectionClosed);
  t.equal(e.message, 'Broken pipe (os error 32)');
});

t.test('BUSY (connection limit) is retried with a short, growing backoff, then reported', async (t) => {
  let refusals = 2;
  const d = await fakeDaemon(t, (c) => {
    if (refusals-- > 0) c.refuse('BUSY', 'the scheduler is at its connection limit; retry shortly');
    else c.reply({ id: 4 });
  });
  t.same(await request('submit', {} as any, { home: d.home }), { id: 4 }, 'answered once a slot was free');
  t.equal(d.requests.length, 3, 'the request was sent again after each BUSY');

  refusals = 1000;
  const since = Date.now();
  await t.rejects(request('status', {}, { home: d.home, busyRetryForMs: 300 }),
    { name: 'CliError', code: 'BUSY', message: 'the scheduler is at its connection limit; retry shortly' });
  const took = Date.now() - since;
  t.ok(took >= 150 && took < 5000, `gave up after the retry window (${took} ms)`);

  refusals = 1000;
  const before = d.requests.length;
  await t.rejects(request('status', {}, { home: d.home, busyRetryForMs: 0 }), { code: 'BUSY' });
  t.equal(d.requests.length - before, 1, 'busyRetryForMs 0: no retry');
});

t.test('other refusals are not retried', async (t) => {
  const d = await fakeDaemon(t, (c) => c.refuse('SHUTTING_DOWN', 'xlurm is shutting down'));
  await t.rejects(request('status', {}, { home: d.home }), { code: 'SHUTTING_DOWN' });
  t.equal(d.requests.length, 1);
});

t.test('streams retry BUSY too; an abort stops the retrying', async (t) => {
  let refusals = 2;
  const d = await fakeDaemon(t, (c) => {
    if (refusals-- > 0) { c.refuse('BUSY', 'the scheduler is at its connection limit; retry shortly'); return; }
    c.send({ v: 1, ok: true, event: 'log', offset: 0 }, Buffer.from('ok'));
    c.send({ v: 1, ok: true, event: 'end', job: null, offset: 2 });
    c.socket.end();
  });
  const got: string[] = [];
  const end = await stream('log', { id: 1 }, { onLog: (_o, b) => { got.push(b.toString()); } }, { home: d.home });
  t.same([got, end], [['ok'], { job: null, offset: 2 }]);
  t.equal(d.requests.length, 3);

  refusals = 1000;
  const ac = new AbortController();
  const p = stream('follow', { id: 1 }, { onLog: () => undefined }, { home: d.home, signal: ac.signal });
  // Aborted while it backs off between refusals (two more requests: it is retrying).
  const before = d.requests.length;
  await waitFor(() => d.requests.length >= before + 2, { what: 'two refused retries' });
  ac.abort(new Error('interrupted'));
  await t.rejects(p, { message: 'interrupted' });
});

t.test('BUSY backoff: 20 ms doubling to 200 ms, jittered to 50-100 %', async (t) => {
  t.same([0, 1, 2, 3, 4, 5, 20].map((n) => busyDelay(n, () => 1)), [20, 40, 80, 160, 200, 200, 200]);
  t.same([0, 4].map((n) => busyDelay(n, () => 0)), [10, 100]);
});

t.test('streams: a large log frame reaches the handler in pieces with their own offsets, exact', async (t) => {
  const big = Buffer.alloc(5 << 20);
  for (let i = 0; i < big.length; i += 4) big.writeUInt32LE(i, i);
  const d = await fakeDaemon(t, (c) => {
    c.send({ v: 1, ok: true, event: 'log', offset: 1000 }, big);
    c.send({ v: 1, ok: true, event: 'end', job: null, offset: 1000 + big.length });
    c.socket.end();
  });
  const pieces: Array<[number, Buffer]> = [];
  const end = await stream('log', { id: 1, offset: 1000 }, { onLog: (off, b) => { pieces.push([off, Buffer.from(b)]); } }, { home: d.home });
  t.ok(pieces.length > 1, `pieces as they arrive, not one reassembled frame (${pieces.length})`);
  let at = 1000;
  for (const [off, b] of pieces) { t.equal(off, at); at += b.length; }
  t.ok(Buffer.concat(pieces.map((p) => p[1])).equals(big), 'every byte, in order');
  t.same(end, { job: null, offset: 1000 + big.length });
});

t.test('streams: a handler that returns a promise pauses reading until it settles', async (t) => {
  const d = await fakeDaemon(t, (c) => {
    for (let i = 0; i < 4; i++) c.send({ v: 1, ok: true, event: 'log', offset: i }, Buffer.from(String(i)));
    c.send({ v: 1, ok: true, event: 'end', job: null, offset: 4 });
    c.socket.end();
  });
  const seen: string[] = [];
  let busy = false;
  const end = await stream('log', { id: 1 }, {
    onLog: (off, b) => {
      t.notOk(busy, 'never called while a previous write is pending');
      seen.push(b.toString());
      if (off % 2) return undefined; // accepted at once
      busy = true;
      return new Promise<void>((r) => setTimeout(() => { busy = false; r(); }, 5));
    },
  }, { home: d.home });
  t.same(seen, ['0', '1', '2', '3']);
  t.equal(end.offset, 4);
});

t.test('streams: a piece handed to a pending handler stays unchanged until the handler settles', async (t) => {
  // Reads go into one reused buffer: reading must stay paused while a handler holds a view of it.
  const big = Buffer.alloc(4 << 20);
  for (let i = 0; i < big.length; i += 4) big.writeUInt32LE(i * 2654435761 >>> 0, i);
  const d = await fakeDaemon(t, (c) => {
    c.send({ v: 1, ok: true, event: 'log', offset: 0 }, big);
    c.send({ v: 1, ok: true, event: 'end', job: null, offset: big.length });
    c.socket.end();
  });
  const got: Buffer[] = [];
  let changed = 0;
  await stream('log', { id: 1 }, {
    onLog: (_off, b) => {
      const copy = Buffer.from(b);
      got.push(copy);
      return new Promise<void>((r) => setTimeout(() => { if (!b.equals(copy)) changed++; r(); }, 1));
    },
  }, { home: d.home });
  t.equal(changed, 0, 'no piece was overwritten while its handler ran');
  t.ok(Buffer.concat(got).equals(big));
});
