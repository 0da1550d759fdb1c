/**
 * Accept, authenticate (SO_PEERCRED, captured once at accept), read one
 * request frame, validate, dispatch, reply. Every connection has deadlines so
 * slow or silent clients cannot pin resources, and every failure is answered
 * with a coded error or a closed connection, never a crash.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import type { OpName } from '@xlurm/protocol';
import {
  FrameDecoder, FrameSyntax, FrameTooLarge, MAX_REQUEST_BYTES, MAX_REQUEST_DEPTH, PROTOCOL_VERSION, XlurmError, encodeFrame,
} from '@xlurm/protocol';
import { getNofileLimit, peerCred } from '@xlurm/native';
import type { Caller, Core } from './core';
import { accountFor } from './accounts';
import { handlers } from './handlers';
import type { Ctx, Handler, StreamOut } from './handlers/types';
import { validateRequest } from './validate';

/** A whole request must arrive within this time. */
const READ_DEADLINE_MS = 5000;
/** A one-shot reply must be taken by the client within this time. */
const WRITE_DEADLINE_MS = 10000;
/** How long a refused connection may linger for its client to read the refusal and close. */
const REFUSED_LINGER_MS = 1000;
/** How long a read RLIMIT_NOFILE is trusted. */
const NOFILE_TTL_MS = 1000;
/** `[daemon] max_connections`'s default: beyond this many open connections new ones are refused with BUSY. */
export const MAX_CONNECTIONS = 4096;
/** `[daemon] max_connections_per_user`'s default: one user's share of them (docs/behaviour.md §28.3). */
export const MAX_CONNECTIONS_PER_USER = 256;
/** Slots only root may take, so an administrator is served while users hold the rest. */
export const ROOT_RESERVE = 8;
/** Descriptors kept free beyond those open at start, for the daemon's own work. */
const FD_HEADROOM = 16;

/**
 * How many connections RLIMIT_NOFILE allows: each may hold two descriptors
 * (its socket and, when it streams a log, the log file), and the daemon keeps
 * what it had open at start plus room to start (lock, log, spec pipe) and
 * collect jobs. Beyond it clients get BUSY instead of a descriptor-starved
 * daemon that can neither answer them nor start jobs.
 */
export function connectionBudget(nofile: number, openAtStart: number, maxRunning: number, max = MAX_CONNECTIONS): number {
  const reserve = openAtStart + FD_HEADROOM + 2 * Math.min(maxRunning, 64);
  return Math.max(1, Math.min(max, Math.floor((nofile - reserve) / 2)));
}

/**
 * Whether a new connection of `uid` gets a slot (docs/behaviour.md §28.3):
 * no user beyond their share (root has none: it is the one who must get
 * in to clean up), and the last ROOT_RESERVE slots of `limit` are root's.
 * `held`: slots open now (this one not counted), `mine`: this user's.
 */
export function slotRefusal(uid: number, held: number, mine: number, limit: number, perUser: number): string | null {
  if (uid !== 0 && perUser > 0 && mine >= perUser) {
    return `you have ${mine} connections open to the scheduler (limit max_connections_per_user ${perUser}); close some and retry`;
  }
  const room = uid === 0 ? limit : Math.max(0, limit - ROOT_RESERVE);
  if (held >= room) return 'the scheduler is at its connection limit; retry shortly';
  return null;
}

export class Server {
  private readonly server: net.Server;
  private readonly conns = new Set<net.Socket>();
  /** Slots held per uid: connections that were given one (refused ones hold none). */
  private readonly slots = new Map<number, number>();
  private held = 0;
  private shutdownRequested = false;
  private openAtStart = 0;
  private acceptErrors = 0;
  private acceptErrorLogged = 0;

  constructor(private readonly core: Core, private readonly onShutdown: () => void) {
    this.server = net.createServer({ allowHalfOpen: true, pauseOnConnect: false }, (s) => this.accept(s));
    this.server.on('error', (e) => this.serverError(e));
  }

  /**
   * accept(2) failures (EMFILE: libuv then closes the connection it could not
   * take) are logged at most every 10 s, with a count, not once per client.
   */
  private serverError(e: Error): void {
    this.acceptErrors++;
    const now = Date.now();
    if (now - this.acceptErrorLogged < 10_000) return;
    this.acceptErrorLogged = now;
    this.core.log(`server error: ${e.message}${this.acceptErrors > 1 ? ` (${this.acceptErrors} since the last report)` : ''}`);
    this.acceptErrors = 0;
  }

  private nofile = { value: Number.MAX_SAFE_INTEGER, until: 0 };
  /**
   * Current connection limit. RLIMIT_NOFILE is re-read at most every
   * NOFILE_TTL_MS (an administrator may change it with prlimit), not on
   * every accept.
   */
  private maxConnections(): number {
    const now = Date.now();
    if (this.nofile.until <= now) {
      try { this.nofile.value = getNofileLimit()[0]; } catch { /* keep the last value */ }
      this.nofile.until = now + NOFILE_TTL_MS;
    }
    const cfg = this.core.cfg;
    return connectionBudget(this.nofile.value, this.openAtStart, cfg.maxRunning, cfg.maxConnections ?? MAX_CONNECTIONS);
  }

  /** Slots held now per user, largest first (`xlurm status` as root, docs/behaviour.md §28.3). */
  connections(): Array<{ user: string; count: number }> {
    return [...this.slots].map(([uid, count]) => ({ user: accountFor(uid)?.name ?? String(uid), count }))
      .sort((a, b) => b.count - a.count || (a.user < b.user ? -1 : a.user > b.user ? 1 : 0));
  }

  /** Give `caller` a slot, freed when the socket closes; false when it gets none. */
  private takeSlot(sock: net.Socket, uid: number): boolean {
    const mine = this.slots.get(uid) ?? 0;
    const why = slotRefusal(uid, this.held, mine, this.maxConnections(), this.core.cfg.maxConnectionsPerUser ?? MAX_CONNECTIONS_PER_USER);
    if (why) {
      this.refuse(sock, new XlurmError('BUSY', why));
      return false;
    }
    this.slots.set(uid, mine + 1);
    this.held++;
    sock.once('close', () => {
      this.held--;
      const n = (this.slots.get(uid) ?? 1) - 1;
      if (n > 0) this.slots.set(uid, n); else this.slots.delete(uid);
    });
    return true;
  }

  listen(path: string): Promise<void> {
    try { this.openAtStart = fs.readdirSync('/proc/self/fd').length; } catch { this.openAtStart = 64; }
    return new Promise((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      this.server.once('error', onError);
      this.server.listen(path, () => { this.server.off('error', onError); resolve(); });
    });
  }

  close(): Promise<void> {
    for (const s of this.conns) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(sock: net.Socket): void {
    this.conns.add(sock);
    sock.on('close', () => this.conns.delete(sock));
    sock.on('error', () => undefined);
    // Far beyond any share (a flood faster than replies close): refused before the peer is read.
    if (this.conns.size > 2 * this.maxConnections()) {
      this.refuse(sock, new XlurmError('BUSY', 'the scheduler is at its connection limit; retry shortly'));
      return;
    }
    let caller: Caller;
    try {
      const fd = (sock as unknown as { _handle?: { fd?: number } })._handle?.fd;
      if (typeof fd !== 'number' || fd < 0) throw new Error('no descriptor');
      caller = peerCred(fd);
    } catch {
      this.replyError(sock, new XlurmError('UNAUTHENTICATED', 'cannot authenticate Unix socket peer'));
      return;
    }
    if (!this.takeSlot(sock, caller.uid)) return;
    // Depth is checked before JSON.parse (deep nesting would block the loop for
    // seconds); a request never carries a raw attachment, so a `raw` field is
    // just an unknown field, never a reason to buffer more bytes.
    const decoder = new FrameDecoder(MAX_REQUEST_BYTES, { maxDepth: MAX_REQUEST_DEPTH, raw: false });
    let handled = false;
    const deadline = setTimeout(() => {
      this.replyError(sock, new XlurmError('INVALID_REQUEST', 'request not received in time'));
    }, READ_DEADLINE_MS);
    deadline.unref();
    sock.on('data', (chunk: Buffer) => {
      if (handled) return; // one request per connection; later bytes are ignored
      let frames;
      try {
        frames = decoder.push(chunk);
      } catch (e) {
        handled = true;
        clearTimeout(deadline);
        const err = e instanceof FrameTooLarge ? new XlurmError('MESSAGE_TOO_LARGE', 'message exceeds size limit')
          : new XlurmError('INVALID_REQUEST', e instanceof FrameSyntax ? `invalid request: ${e.message}` : 'invalid request');
        this.replyError(sock, err);
        return;
      }
      if (frames.length === 0) return;
      handled = true;
      clearTimeout(deadline);
      this.dispatch(sock, caller, frames[0]!.msg);
    });
    sock.on('end', () => {
      if (!handled) {
        handled = true;
        clearTimeout(deadline);
        this.replyError(sock, new XlurmError('INVALID_REQUEST', 'connection closed before complete message'));
      }
    });
  }

  private dispatch(sock: net.Socket, caller: Caller, msg: unknown): void {
    let reply: unknown;
    const ctx: Ctx = {
      core: this.core, caller, shutdownAfterReply: () => { this.shutdownRequested = true; }, connections: () => this.connections(),
    };
    try {
      const { op, args } = validateRequest(msg);
      const h = handlers[op] as Handler<OpName>;
      reply = h(ctx, args as never);
    } catch (e) {
      this.replyError(sock, this.toXlurm(e));
      return;
    }
    if (reply !== null && typeof reply === 'object' && 'stream' in reply && typeof reply.stream === 'function') {
      this.runStream(sock, reply.stream as (out: StreamOut) => Promise<void>);
      return;
    }
    if (reply instanceof Promise) {
      // Answered once durable (group commit: see Store.durable).
      reply.then((r) => this.finish(sock, encodeFrame({ v: PROTOCOL_VERSION, ok: true, result: r })),
        (e) => this.replyError(sock, this.toXlurm(e)));
      return;
    }
    this.finish(sock, encodeFrame({ v: PROTOCOL_VERSION, ok: true, result: reply }));
    if (this.shutdownRequested) {
      // Respond first, then act: the client sees Ok before the socket goes.
      sock.once('close', () => this.onShutdown());
      setTimeout(() => this.onShutdown(), 1000).unref();
    }
  }

  private runStream(sock: net.Socket, body: (out: StreamOut) => Promise<void>): void {
    let closed = false;
    let goneResolve!: () => void;
    const gone = new Promise<void>((r) => { goneResolve = r; });
    sock.once('close', () => { closed = true; goneResolve(); });
    // The client only reads from here on, so the end of its writing means it
    // went away (closed, or died): its slot and descriptors are freed now,
    // not when the stream next writes (an idle follow may write nothing for days).
    sock.once('end', () => sock.destroy());
    const out: StreamOut = {
      get closed() { return closed || sock.destroyed; },
      gone,
      send(m: object, raw?: Buffer): Promise<void> {
        if (closed || sock.destroyed) return Promise.resolve();
        let flowing: boolean;
        if (raw && raw.length > 0) {
          // Head and bytes in one writev: the bytes are not copied into a frame.
          sock.cork();
          sock.write(encodeFrame({ ...m, raw: raw.length }));
          flowing = sock.write(raw);
          sock.uncork();
        } else {
          flowing = sock.write(encodeFrame(m, raw));
        }
        if (flowing) return Promise.resolve();
        return new Promise((resolve) => {
          const done = () => { sock.off('drain', done); sock.off('close', done); resolve(); };
          sock.on('drain', done);
          sock.on('close', done);
        });
      },
    };
    body(out).then(
      () => { if (!sock.destroyed) sock.end(); },
      (e) => {
        const err = this.toXlurm(e);
        if (!sock.destroyed) this.finish(sock, encodeFrame({ v: PROTOCOL_VERSION, ok: false, error: err.toWire() }));
      },
    );
  }

  private toXlurm(e: unknown): XlurmError {
    if (e instanceof XlurmError) return e;
    this.core.log(`internal error: ${(e as Error)?.stack ?? String(e)}`);
    return new XlurmError('INTERNAL', 'internal error; see daemon.log');
  }

  /**
   * Refuse a connection before its request is read: the reply, then only our
   * side closed, so the client's request still lands (closing at once would
   * fail its write with EPIPE before it read the refusal, and a client would
   * see a dropped connection, not BUSY to retry). The rest is discarded and
   * the socket goes when the client closes, or after REFUSED_LINGER_MS.
   */
  private refuse(sock: net.Socket, e: XlurmError): void {
    const t = setTimeout(() => sock.destroy(), REFUSED_LINGER_MS);
    t.unref();
    sock.once('close', () => clearTimeout(t));
    sock.once('end', () => sock.destroy());
    sock.resume();
    sock.end(encodeFrame({ v: PROTOCOL_VERSION, ok: false, error: e.toWire() }));
  }

  private replyError(sock: net.Socket, e: XlurmError): void {
    this.finish(sock, encodeFrame({ v: PROTOCOL_VERSION, ok: false, error: e.toWire() }));
  }

  /** Write a final frame and close; a client that never reads it is cut off. */
  private finish(sock: net.Socket, frame: Buffer): void {
    if (sock.destroyed) return;
    const t = setTimeout(() => sock.destroy(), WRITE_DEADLINE_MS);
    t.unref();
    // Unix sockets hand written bytes straight to the peer's queue, so closing
    // once they are written loses nothing and frees the descriptor at once.
    sock.end(frame, () => { clearTimeout(t); sock.destroy(); });
    sock.once('close', () => clearTimeout(t));
  }
}
