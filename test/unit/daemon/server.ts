// Server (packages/daemon/src/server.ts): a real server on a temporary socket over a test Core;
// every failure is a coded error frame, never a crash or a hang.
import t, { type Test } from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { FrameDecoder, MAX_REQUEST_BYTES, MAX_RESPONSE_BYTES, PROTOCOL_VERSION, XlurmError, jobPaths, type Frame } from '@xlurm/protocol';
import { Server, MAX_CONNECTIONS, ROOT_RESERVE, connectionBudget, slotRefusal } from '../../../packages/daemon/src/server';
import { handlers } from '../../../packages/daemon/src/handlers';
import { makeCore, spec, type TestCore } from '../../helpers/core';
import { waitFor } from '../../helpers/wait';

const V = PROTOCOL_VERSION;

interface Served { tc: TestCore; server: Server; sock: string; shutdowns: () => number }

async function serve(t: Test): Promise<Served> {
  const tc = await makeCore(t, { devices: 1 });
  let shutdowns = 0;
  const server = new Server(tc.core, () => { shutdowns++; });
  const sock = path.join(tc.dir, 'x.sock');
  await server.listen(sock);
  t.teardown(() => server.close());
  return { tc, server, sock, shutdowns: () => shutdowns };
}

/** Connect, write `data` (then end unless `keepOpen`), and collect every frame until the server closes. */
function exchange(sock: string, data: string | Buffer, opts: { end?: boolean } = {}): Promise<Frame[]> {
  return new Promise((resolve) => {
    const c = net.connect(sock);
    const dec = new FrameDecoder(MAX_RESPONSE_BYTES);
    const frames: Frame[] = [];
    c.on('data', (d: Buffer) => { frames.push(...dec.push(d)); });
    c.on('error', () => undefined); // the server may close before it took all of a huge write
    c.on('close', () => resolve(frames));
    c.on('connect', () => { c.write(data); if (opts.end) c.end(); });
  });
}

const req = (op: string, args?: unknown) => JSON.stringify(args === undefined ? { v: V, op } : { v: V, op, args }) + '\n';

/** The one error frame a request got. */
async function errorOf(sock: string, data: string | Buffer, opts: { end?: boolean } = {}) {
  const frames = await exchange(sock, data, opts);
  if (frames.length !== 1) throw new Error(`expected one frame, got ${JSON.stringify(frames.map((f) => f.msg))}`);
  const m = frames[0]!.msg as { v: number; ok: boolean; error?: { code: string; message: string } };
  if (m.ok !== false || m.v !== V) throw new Error(`expected an error frame, got ${JSON.stringify(m)}`);
  return m.error!;
}

/** Swap one handler for the duration of a test. */
function replaceHandler(t: Test, op: 'status' | 'info', h: () => unknown): void {
  const table = handlers as unknown as Record<string, unknown>;
  const orig = table[op];
  table[op] = h;
  t.teardown(() => { table[op] = orig; });
}

t.test('a request is answered with one ok frame and the connection closed', async (t) => {
  const { sock, tc } = await serve(t);
  const frames = await exchange(sock, req('status'));
  t.equal(frames.length, 1);
  t.match(frames[0]!.msg, { v: V, ok: true, result: { pid: process.pid, uid: tc.core.euid, excluded: [], max_running: 8 } });
});

t.test('malformed frames', async (t) => {
  const { sock } = await serve(t);
  t.match(await errorOf(sock, 'this is not json\n'), { code: 'INVALID_REQUEST', message: /^invalid request: invalid JSON: / });
  const deep = '['.repeat(40) + ']'.repeat(40) + '\n';
  t.same(await errorOf(sock, deep), { code: 'INVALID_REQUEST', message: 'invalid request: invalid JSON: nested deeper than 32 levels' });
  t.same(await errorOf(sock, '{"v":1', { end: true }), { code: 'INVALID_REQUEST', message: 'connection closed before complete message' });
  t.same(await errorOf(sock, '', { end: true }), { code: 'INVALID_REQUEST', message: 'connection closed before complete message' });
  t.same(await errorOf(sock, Buffer.alloc(MAX_REQUEST_BYTES + 1024, 0x20)), { code: 'MESSAGE_TOO_LARGE', message: 'message exceeds size limit' });
  t.same(await errorOf(sock, '[]\n'), { code: 'INVALID_REQUEST', message: 'invalid request: expected a JSON object' });
});

t.test('unknown op, wrong version, and arguments that fail validation', async (t) => {
  const { sock } = await serve(t);
  t.same(await errorOf(sock, req('frobnicate')), { code: 'UNKNOWN_OP', message: 'unknown operation: frobnicate' });
  t.match(await errorOf(sock, JSON.stringify({ v: V + 1, op: 'status' }) + '\n'), { code: 'VERSION_MISMATCH', message: /^protocol version mismatch: / });
  t.same(await errorOf(sock, req('status', { x: 1 })), { code: 'INVALID_REQUEST', message: 'invalid request: unknown field `x` in args' });
  t.match(await errorOf(sock, req('get', {})), { code: 'INVALID_REQUEST', message: /^invalid request: args / });
  t.match(await errorOf(sock, req('get', { id: 'one' })), { code: 'INVALID_REQUEST', message: /^invalid request: args\.id / });
});

t.test('a handler that throws an XlurmError: its code and message', async (t) => {
  const { sock } = await serve(t);
  t.same(await errorOf(sock, req('get', { id: 4242 })), { code: 'JOB_NOT_FOUND', message: 'job not found' });
  t.same(await errorOf(sock, req('exclude', { ids: [9] })), { code: 'UNKNOWN_DEVICE', message: 'unknown device ID(s): 9' });
});

t.test('any other exception is INTERNAL and logged; the server keeps serving', async (t) => {
  const { sock, tc } = await serve(t);
  replaceHandler(t, 'status', () => { throw new TypeError('boom'); });
  t.same(await errorOf(sock, req('status')), { code: 'INTERNAL', message: 'internal error; see daemon.log' });
  t.match(tc.logs, [/^internal error: TypeError: boom/]);
  const frames = await exchange(sock, req('info'));
  t.match(frames[0]!.msg, { ok: true, result: [{ status: 'idle' }] });
});

t.test('a reply that is a promise: answered when it settles', async (t) => {
  const { sock, tc } = await serve(t);
  const frames = await exchange(sock, req('submit', spec()));
  t.match(frames[0]!.msg, { ok: true, result: { state: 'PENDING', owner: { uid: process.getuid!() } } });
  const id = (frames[0]!.msg as { result: { id: number } }).result.id;
  t.ok(tc.store.get(id), 'durable before the answer');
  replaceHandler(t, 'info', () => Promise.reject(new XlurmError('STORAGE', 'cannot write the job database: disk full')));
  t.same(await errorOf(sock, req('info')), { code: 'STORAGE', message: 'cannot write the job database: disk full' });
});

t.test('a streamed reply: frames with raw bytes, then the end', async (t) => {
  const { sock, tc } = await serve(t);
  const job = await tc.core.submit({ uid: process.getuid!(), gid: process.getgid!(), name: 'root' }, spec({ count: 5 }));
  fs.writeFileSync(jobPaths(tc.dir, job.id).log, 'hello\n');
  const frames = await exchange(sock, req('log', { id: job.id }));
  t.match(frames.map((f) => f.msg), [{ ok: true, event: 'log', offset: 0, raw: 6 }, { ok: true, event: 'end', job: null, offset: 6 }]);
  t.equal(frames[0]!.raw?.toString(), 'hello\n');
});

t.test('beyond the connection limit: BUSY', async (t) => {
  const { sock, server } = await serve(t);
  (server as unknown as { maxConnections(): number }).maxConnections = () => 1;
  const holder = net.connect(sock);
  t.teardown(() => holder.destroy());
  await new Promise<void>((r) => holder.once('connect', () => r()));
  await waitFor(() => (server as unknown as { conns: Set<unknown> }).conns.size === 1, { what: 'first connection accepted' });
  t.same(await errorOf(sock, req('status')), { code: 'BUSY', message: 'the scheduler is at its connection limit; retry shortly' });
  holder.destroy();
  await waitFor(() => (server as unknown as { conns: Set<unknown> }).conns.size === 0, { what: 'first connection gone' });
  const frames = await exchange(sock, req('status'));
  t.match(frames[0]!.msg, { ok: true }, 'served again once below the limit');
});

t.test('stop: the reply first, then the shutdown', async (t) => {
  const { sock, shutdowns } = await serve(t);
  await exchange(sock, req('status'));
  t.equal(shutdowns(), 0, 'an ordinary request asks for none');
  const frames = await exchange(sock, req('stop'));
  t.match(frames[0]!.msg, { ok: true, result: {} });
  await waitFor(() => shutdowns() > 0, { what: 'shutdown requested' });
});

t.test('connectionBudget: two descriptors per connection beyond what the daemon keeps', async (t) => {
  t.equal(connectionBudget(1024, 20, 8), Math.floor((1024 - 20 - 16 - 16) / 2));
  t.equal(connectionBudget(1024, 20, 1000), Math.floor((1024 - 20 - 16 - 128) / 2), 'at most 64 running jobs are reserved for');
  t.equal(connectionBudget(1 << 20, 20, 8), MAX_CONNECTIONS);
  t.equal(connectionBudget(10, 20, 8), 1, 'never below one');
});

// docs/behaviour.md §28.3: a user's share, and the slots only root may take.
t.test('slotRefusal: a user beyond their share, users in root\'s reserve; root only at the limit', async (t) => {
  t.equal(connectionBudget(1 << 20, 20, 8, 100), 100, 'max_connections caps the budget');
  t.equal(slotRefusal(1000, 10, 3, 100, 4), null);
  t.equal(slotRefusal(1000, 10, 4, 100, 4), 'you have 4 connections open to the scheduler (limit max_connections_per_user 4); close some and retry');
  t.equal(slotRefusal(0, 10, 400, 100, 4), null, 'root has no share');
  t.equal(slotRefusal(1000, 100 - ROOT_RESERVE - 1, 0, 100, 256), null);
  t.equal(slotRefusal(1000, 100 - ROOT_RESERVE, 0, 100, 256), 'the scheduler is at its connection limit; retry shortly', 'the last slots are root\'s');
  t.equal(slotRefusal(0, 99, 0, 100, 256), null);
  t.equal(slotRefusal(0, 100, 0, 100, 256), 'the scheduler is at its connection limit; retry shortly');
});
