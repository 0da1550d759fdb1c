// One-shot requests without node:net (native/src/addon/request.cc): unixConnect, the peer check
// on its descriptor, unixExchange's writes, reads, end and idle deadline, against a real Unix
// socket served by this test. Needs `npm run build:native`.
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { EXCHANGE, peerCred, unixClose, unixConnect, unixExchange, type ExchangeHandle } from '../../../native/ts/index';
import { waitFor } from '../../helpers/wait';
import type { Tap } from '../../helpers/tap';

const built = fs.existsSync(path.resolve(__dirname, '../../../native/build/Release/xlurm_native.node'));
if (!built) {
  t.plan(0, 'native addon not built (npm run build:native)');
  process.exit(0);
}

/** A server on a socket in a temporary directory; `onConn` gets each accepted connection. */
async function serve(tt: Tap, onConn: (s: net.Socket) => void): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xlurm-req-'));
  const sockPath = path.join(dir, 's.sock');
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
    onConn(s);
  });
  server.listen(sockPath);
  await once(server, 'listening');
  tt.teardown(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return sockPath;
}

interface Outcome { bytes: Buffer; end: 'end' | 'idle' | number; ms: number }

/** Run one exchange to its end (end of file, an error, or the idle deadline), then close it. */
function exchange(fd: number, frame: Buffer, idleMs: number): Promise<Outcome> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let h: ExchangeHandle | undefined = undefined;
    const done = (end: Outcome['end']) => {
      unixClose(h!);
      unixClose(h!); // a second close is harmless
      resolve({ bytes: Buffer.concat(chunks), end, ms: Date.now() - t0 });
    };
    h = unixExchange(fd, frame, idleMs, (kind, value) => {
      if (kind === EXCHANGE.DATA) chunks.push(value as Buffer);
      else if (kind === EXCHANGE.END) done('end');
      else if (kind === EXCHANGE.IDLE) done('idle');
      else done(value as number);
    });
  });
}

t.test('connect, check the peer, one frame each way, end of file', async (t) => {
  let got = '';
  const sockPath = await serve(t, (s) => {
    s.on('data', (d) => {
      got += d;
      if (got.endsWith('\n')) s.end('{"v":1,"ok":true,"result":42}\n');
    });
  });
  const fd = unixConnect(sockPath);
  t.same(peerCred(fd), { pid: process.pid, uid: process.geteuid!(), gid: process.getegid!() }, 'the peer is this process');
  t.equal(fs.fstatSync(fd).isSocket(), true);
  const r = await exchange(fd, Buffer.from('{"v":1,"op":"status","args":{}}\n'), 5000);
  t.equal(got, '{"v":1,"op":"status","args":{}}\n');
  t.equal(r.bytes.toString(), '{"v":1,"ok":true,"result":42}\n');
  t.equal(r.end, 'end');
  t.throws(() => fs.fstatSync(fd), { code: 'EBADF' }, 'the descriptor is closed with the exchange');
});

t.test('a frame larger than the socket buffer is written as the peer drains it; replies in pieces are all read', async (t) => {
  const big = Buffer.alloc(4 << 20, 'a');
  big[big.length - 1] = 0x0a;
  const reply = Buffer.alloc(3 << 20, 'b');
  let n = 0;
  const sockPath = await serve(t, (s) => {
    s.pause(); // let the client's writes fill the socket first
    setTimeout(() => s.resume(), 50);
    s.on('data', (d) => {
      n += d.length;
      if (n === big.length) s.end(reply);
    });
  });
  const r = await exchange(unixConnect(sockPath), big, 5000);
  t.equal(n, big.length, 'every byte of the frame arrived');
  t.equal(r.end, 'end');
  t.ok(r.bytes.equals(reply), 'every byte of the reply, in order');
});

t.test('the idle deadline: nothing comes back', async (t) => {
  let closed = false;
  const sockPath = await serve(t, (s) => { s.resume(); s.on('close', () => { closed = true; }); });
  const r = await exchange(unixConnect(sockPath), Buffer.from('{}\n'), 60);
  t.equal(r.end, 'idle');
  t.ok(r.ms >= 59, `not before the deadline (${r.ms} ms)`);
  await waitFor(() => closed, { what: 'the server to see the connection closed' });
});

t.test('a peer that answers and closes without reading: the answer is still read', async (t) => {
  const sockPath = await serve(t, (s) => {
    s.write('{"v":1,"ok":false,"error":{"code":"BUSY","message":"busy"}}\n');
    s.destroy();
  });
  const r = await exchange(unixConnect(sockPath), Buffer.alloc(8 << 20, 'x'), 5000);
  t.match(r.bytes.toString(), /"BUSY"/);
  t.equal(r.end, 'end');
});

t.test('signals during an exchange interrupt nothing', async (t) => {
  let signals = 0;
  const onSignal = () => { signals++; };
  process.on('SIGUSR2', onSignal);
  const reply = Buffer.alloc(8 << 20, 'r');
  const big = Buffer.alloc(8 << 20, 'q');
  let n = 0;
  const sockPath = await serve(t, (s) => {
    // Slow at both ends: many short writes and reads, each a chance for EINTR.
    s.on('data', (d) => {
      n += d.length;
      s.pause();
      setTimeout(() => s.resume(), 1);
      if (n === big.length) s.end(reply);
    });
  });
  const killer = spawn('sh', ['-c', `while kill -USR2 ${process.pid} 2>/dev/null; do sleep 0.002; done`], { stdio: 'ignore' });
  // The handler goes only once the sender is gone: a signal still on its way would kill us.
  t.teardown(async () => {
    const exited = once(killer, 'exit');
    killer.kill('SIGKILL');
    await exited;
    process.removeListener('SIGUSR2', onSignal);
  });
  await waitFor(() => signals > 0, { what: 'the first signal' });
  const r = await exchange(unixConnect(sockPath), big, 5000);
  t.equal(n, big.length);
  t.equal(r.end, 'end');
  t.ok(r.bytes.equals(reply), `reply intact (${signals} signals)`);
});

t.test('connect errors are Node-style system errors', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xlurm-req-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'plain'), '');
  t.throws(() => unixConnect(path.join(dir, 'missing.sock')), { code: 'ENOENT', errno: -os.constants.errno.ENOENT, syscall: 'connect' });
  t.throws(() => unixConnect(path.join(dir, 'plain')), { code: 'ECONNREFUSED', syscall: 'connect' });
  t.throws(() => unixConnect(`/${'x'.repeat(200)}`), { code: 'ENAMETOOLONG' });
  t.throws(() => unixConnect(1 as unknown as string), TypeError);
  t.throws(() => unixExchange(-1, Buffer.alloc(1), 10, () => undefined), TypeError);
  t.throws(() => unixExchange(0, 'x' as unknown as Buffer, 10, () => undefined), TypeError);
  t.throws(() => unixExchange(0, Buffer.alloc(1), 0, () => undefined), TypeError);
});
