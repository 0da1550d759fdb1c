/**
 * Test support for the CLI unit tests: a fake daemon on a Unix socket in a
 * temporary XLURM_HOME, and stdout/stderr capture. Run directly, this file
 * tests itself; imported, it only provides the helpers.
 */
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { FrameDecoder, encodeFrame } from '@xlurm/protocol';
import { request, setPeerCheck } from '../../../packages/cli/src/client';

/** What the helpers need of a test. */
interface Tap { teardown(fn: () => unknown): void }

export interface Conn {
  /** The request frame this connection sent. */
  req: { v: number; op: string; args: any };
  socket: net.Socket;
  send(msg: object, raw?: Buffer): void;
  reply(result: unknown): void;
  refuse(code: string, message: string): void;
}

export interface FakeDaemon {
  home: string;
  requests: Conn['req'][];
  close(): Promise<void>;
  listen(): Promise<void>;
}

/** A short temporary directory (socket paths are limited to 107 bytes). */
export function tempDir(tt: Tap): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xlc-'));
  tt.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Serve `handle` for each connection's first frame. The peer check is
 * stubbed out (the native addon may not be built); client tests cover it.
 */
export async function fakeDaemon(tt: Tap, handle: (c: Conn) => unknown): Promise<FakeDaemon> {
  const home = tempDir(tt);
  const sock = path.join(home, 'xlurm.sock');
  const requests: Conn['req'][] = [];
  const sockets = new Set<net.Socket>();
  let server: net.Server;
  const listen = () => new Promise<void>((resolve) => {
    server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      const dec = new FrameDecoder(1 << 20);
      let seen = false;
      socket.on('data', (chunk) => {
        if (seen) return;
        const frames = dec.push(chunk);
        if (!frames.length) return;
        seen = true;
        const req = frames[0]!.msg as Conn['req'];
        requests.push(req);
        const send = (msg: object, raw?: Buffer) => { if (!socket.destroyed) socket.write(encodeFrame(msg, raw)); };
        void handle({
          req, socket, send,
          reply: (result) => { send({ v: 1, ok: true, result }); socket.end(); },
          refuse: (code, message) => { send({ v: 1, ok: false, error: { code, message } }); socket.end(); },
        });
      });
    });
    server.listen(sock, resolve);
  });
  const close = () => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy();
    server.close(() => resolve());
  });
  await listen();
  setPeerCheck(() => undefined);
  tt.teardown(async () => { setPeerCheck(undefined); await close(); });
  return { home, requests, close, listen };
}

export interface Captured<T> { value: T; stdout: string; stderr: string; out: Buffer }

/** Run `fn` with process.stdout/stderr writes captured (writes report no backpressure). */
export async function capture<T>(fn: () => Promise<T>): Promise<Captured<T>> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const ow = process.stdout.write;
  const ew = process.stderr.write;
  const grab = (sink: Buffer[]) => ((chunk: unknown, ...rest: unknown[]) => {
    sink.push(Buffer.isBuffer(chunk) ? Buffer.from(chunk) : Buffer.from(String(chunk)));
    const cb = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    cb?.();
    return true;
  }) as typeof process.stdout.write;
  process.stdout.write = grab(out);
  process.stderr.write = grab(err);
  try {
    const value = await fn();
    const o = Buffer.concat(out);
    return { value, stdout: o.toString(), stderr: Buffer.concat(err).toString(), out: o };
  } finally {
    process.stdout.write = ow;
    process.stderr.write = ew;
  }
}

/** Run `fn` with XLURM_HOME set to `home`. */
export async function withHome<T>(home: string, fn: () => Promise<T>): Promise<T> {
  const saved = process.env.XLURM_HOME;
  process.env.XLURM_HOME = home;
  try {
    return await fn();
  } finally {
    if (saved === undefined) delete process.env.XLURM_HOME;
    else process.env.XLURM_HOME = saved;
  }
}

if (require.main === module) {
  t.test('the fake daemon answers one frame per connection; capture grabs output', async (tt) => {
    const d = await fakeDaemon(tt, (c) => c.reply({ echo: c.req.args }));
    tt.same(await request('status', {} as any, { home: d.home }), { echo: {} });
    tt.same(d.requests, [{ v: 1, op: 'status', args: {} }]);
    const c = await capture(async () => { process.stdout.write('o'); process.stderr.write(Buffer.from('e')); return 5; });
    tt.same([c.value, c.stdout, c.stderr], [5, 'o', 'e']);
  });
}
