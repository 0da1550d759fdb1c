/**
 * Protocol abuse: thousands of random and mutated frames, idle and slow
 * clients, clients that never read and clients that vanish in the middle of a
 * `follow`. Each bad request gets a coded error or a closed connection; the
 * daemon never crashes, never answers INTERNAL, gives back every descriptor,
 * keeps its memory bounded, and answers a well-behaved client throughout.
 */
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { LatencyProbe, Rng, exchange, fdCount, judge, rssKiB, stopSupervisorsOf } from '../helpers/probe';
import { waitFor } from '../helpers/wait';

const SEED = Number(process.env.XLURM_FUZZ_SEED ?? 20240611);
const FRAMES = Number(process.env.XLURM_FUZZ_FRAMES ?? 1500);
const MiB = 1024 * 1024;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Valid requests the mutations start from (never `stop` or `restart`). */
function bases(cwd: string): Array<{ v: number; op: string; args: Json }> {
  return [
    { v: 1, op: 'status', args: {} },
    { v: 1, op: 'info', args: {} },
    { v: 1, op: 'queue', args: { all: true, limit: 5 } },
    { v: 1, op: 'queue', args: { all: false } },
    { v: 1, op: 'get', args: { id: 1 } },
    { v: 1, op: 'cancel', args: { id: 999999 } },
    { v: 1, op: 'log', args: { id: 1, offset: 0 } },
    { v: 1, op: 'follow', args: { id: 1, offset: 3 } },
    {
      v: 1, op: 'submit',
      args: { command: ['true'], cwd, env: { PATH: '/usr/bin:/bin' }, name: 'fuzz', count: 0, time_limit: 5, kind: null, script: null },
    },
    { v: 1, op: 'exclude', args: { ids: [7] } },
  ];
}

const WEIRD: Json[] = [
  null, true, false, 0, -1, 0.5, -0, 1e308, -1e308, 2 ** 53 + 2, 2 ** 64, -(2 ** 63), '', 'x'.repeat(70000),
  '\u0000', '\ud800', [], [[]], {}, { a: { b: { c: {} } } }, ['true'], 'status',
];

const deepCache = new Map<string, string>();
/** `[[…]]` n levels deep, or `{"a":{"a":…1}}` with objects. */
function deep(n: number, objects = false): string {
  const key = `${n}${objects}`;
  let s = deepCache.get(key);
  if (s === undefined) {
    s = objects ? '{"a":'.repeat(n - 1) + '{"a":1}' + '}'.repeat(n - 1) : '['.repeat(n) + ']'.repeat(n);
    deepCache.set(key, s);
  }
  return s;
}

const frameCache = new Map<string, Buffer>();
/** Big frames are built once (they are sent as they are, never mutated). */
function cached(key: string, make: () => Buffer): Buffer {
  let b = frameCache.get(key);
  if (!b) { b = make(); frameCache.set(key, b); }
  return b;
}

/** Every path (as key lists) into a JSON value. */
function paths(v: Json, at: Array<string | number> = []): Array<Array<string | number>> {
  const out = [at];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...at, i])));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, k]));
  return out;
}

function setAt(root: Json, p: Array<string | number>, value: Json | undefined): Json {
  if (p.length === 0) return value === undefined ? null : value;
  const copy = structuredClone(root) as Record<string | number, Json>;
  let cur = copy;
  for (const k of p.slice(0, -1)) cur = cur[k] as Record<string | number, Json>;
  const last = p[p.length - 1]!;
  if (value === undefined) {
    if (Array.isArray(cur)) cur.splice(last as number, 1); else delete cur[last];
  } else cur[last] = value;
  return copy;
}

/** One bad (or, by chance, valid) frame and a label for the statistics. */
function mutant(rng: Rng, cwd: string): { kind: string; bytes: Buffer } {
  const base = rng.pick(bases(cwd)) as unknown as Json;
  const text = (v: Json) => Buffer.from(JSON.stringify(v) + '\n');
  // Deep nesting (5) and big values (14) cost megabytes each: a third of the weight of the others.
  let which = rng.int(0, 15);
  if ((which === 5 || which === 14) && !rng.chance(1 / 3)) which = rng.pick([0, 2, 6, 7, 9, 11]);
  switch (which) {
    case 0: { // wrong type somewhere
      const p = rng.pick(paths(base));
      return { kind: 'wrong-type', bytes: text(setAt(base, p, rng.pick(WEIRD))) };
    }
    case 1: { // a field removed
      const p = rng.pick(paths(base).filter((x) => x.length > 0));
      return { kind: 'missing-field', bytes: text(setAt(base, p, undefined)) };
    }
    case 2: { // an unknown field at some object
      const objs = paths(base).filter((p) => {
        let v: Json = base;
        for (const k of p) v = (v as Record<string | number, Json>)[k]!;
        return v !== null && typeof v === 'object' && !Array.isArray(v);
      });
      const p = rng.pick(objs);
      return { kind: 'unknown-field', bytes: text(setAt(base, [...p, rng.pick(['owner', 'uid', 'raw', '__proto__', 'constructor', 'x'.repeat(300)])], 0)) };
    }
    case 3: { // unknown op
      const op = rng.pick(['', 'STATUS', 'shutdown', 'hello', '__proto__', 'toString', 'constructor', 'x'.repeat(10000), 'stat\u0000us']);
      return { kind: 'unknown-op', bytes: text({ ...(base as object), op } as Json) };
    }
    case 4: { // huge and odd numbers, as literal JSON text
      const lit = rng.pick(['1e400', '-1e400', '123456789012345678901234567890', '1.5', '-0', '9007199254740993', '1e-400', '0e0']);
      const text0 = JSON.stringify(base);
      const at = rng.pick([...text0.matchAll(/:(\d+)/g)].map((m) => m.index!));
      const s = text0.slice(0, at) + text0.slice(at).replace(/:\d+/, `:${lit}`);
      return { kind: 'huge-number', bytes: Buffer.from(s + '\n') };
    }
    case 5: { // deep nesting
      const depth = rng.pick([40, 1000, 1000, 100000, 600000]);
      const where = rng.int(0, 2);
      return {
        kind: 'deep-nesting',
        bytes: cached(`deep${depth}/${where}`, () => {
          const nest = deep(depth, where !== 0);
          const s = where === 0 ? nest : where === 1 ? `{"v":1,"op":"status","args":${nest}}` : `{"v":1,"op":"submit","args":{"command":${deep(depth)}}}`;
          return Buffer.from(s + '\n');
        }),
      };
    }
    case 6: { // truncated JSON (with the newline, or just cut)
      const b = text(base);
      const cut = rng.int(0, b.length - 2);
      return { kind: 'truncated', bytes: rng.chance(0.5) ? Buffer.concat([b.subarray(0, cut), Buffer.from('\n')]) : b.subarray(0, cut) };
    }
    case 7: { // random byte flips (invalid UTF-8, control bytes, quotes)
      const b = Buffer.from(text(base));
      for (let i = rng.int(1, 4); i > 0; i--) b[rng.int(0, b.length - 2)] = rng.pick([0xff, 0xc0, 0x80, 0xed, 0x00, 0x22, 0x5c, 0x7b, 0x0a, rng.int(0, 255)]);
      return { kind: 'byte-flip', bytes: b };
    }
    case 8: { // invalid UTF-8 inside a string value
      const s = JSON.stringify(base);
      const i = s.indexOf('"op":"') + 6;
      return { kind: 'invalid-utf8', bytes: Buffer.concat([Buffer.from(s.slice(0, i)), Buffer.from(rng.pick([[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]])), Buffer.from(s.slice(i) + '\n')]) };
    }
    case 9: { // not an object
      const s = rng.pick(['null', '[]', '"status"', '42', 'true', '', ' ', '{}', '{"v":1}', '[{"v":1,"op":"status"}]', 'NaN', '{"v":1,"op":"status","args":[]}']);
      return { kind: 'not-an-object', bytes: Buffer.from(s + '\n') };
    }
    case 10: { // envelope: wrong versions
      return { kind: 'version', bytes: text({ ...(base as object), v: rng.pick([0, 2, '1', 1.0000001, null, -1, 1e308]) } as Json) };
    }
    case 11: { // random garbage
      const n = rng.int(1, 2000);
      const b = Buffer.alloc(n);
      for (let i = 0; i < n; i++) b[i] = rng.int(0, 255);
      return { kind: 'garbage', bytes: b };
    }
    case 12: { // two frames on one connection, or trailing bytes after the frame
      return { kind: 'pipelined', bytes: Buffer.concat([text(base), rng.chance(0.5) ? text(base) : Buffer.from('garbage')]) };
    }
    case 13: { // a raw attachment on a request
      const raw = rng.pick([0, 5, 1000, 16 * MiB]);
      return { kind: 'raw-attachment', bytes: Buffer.concat([text({ ...(base as object), raw } as Json), Buffer.alloc(Math.min(raw, 4096), 0x41)]) };
    }
    case 14: { // big strings and arrays inside the limit
      const k = rng.int(0, 2);
      return {
        kind: 'big-values',
        bytes: cached(`big${k}`, () => {
          const big = k === 0 ? { command: Array(70000).fill('x') } : k === 1 ? { name: 'n'.repeat(5000) }
            : { env: Object.fromEntries(Array.from({ length: 20000 }, (_, i) => [`V${i}`, 'v'])) };
          return text({ v: 1, op: 'submit', args: { ...((bases(cwd)[8]!.args) as object), ...big } } as unknown as Json);
        }),
      };
    }
    default: { // duplicated keys, whitespace, BOM, CRLF
      const s = JSON.stringify(base);
      const b = rng.pick([`\ufeff${s}\n`, `${s}\r\n`, ` \t${s} \n`, s.replace('{', '{"op":"stop",'), s.replace('{', '{"v":2,')]);
      return { kind: 'lexical', bytes: Buffer.from(b) };
    }
  }
}

/** Would this frame ask the daemon to stop? (a correct daemon obeys; skip those) */
function stopsDaemon(bytes: Buffer): boolean {
  for (const line of bytes.toString().split('\n')) {
    if (!/stop|restart/.test(line)) continue; // and never JSON.parse a deep one here
    try {
      const m = JSON.parse(line.replace(/^\ufeff/, '')) as { op?: unknown };
      if (m && (m.op === 'stop' || m.op === 'restart')) return true;
    } catch { /* not JSON */ }
  }
  return false;
}

async function inBatches<T>(items: T[], width: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

function connectIdle(socket: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socket);
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

t.test('protocol abuse', async (t) => {
  const d: Daemon = await startDaemon(t, { maxRunning: 8 });
  const pid = d.proc!.pid!;
  t.teardown(() => stopSupervisorsOf(d.home));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-proto-'));
  fs.chmodSync(dir, 0o755);
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

  // Job 1 (finished, with a log) for get/log/follow; job 2 chatty until cancelled.
  const first = await d.batch('echo hello', ['-g', '0']);
  t.equal(first, 1);
  await d.waitState(1, 'COMPLETED');
  const chatty = await d.batch('while :; do seq 1 3000; sleep 0.01; done', ['-g', '0', '-t', '300']);
  await d.waitState(chatty, 'RUNNING');
  await waitFor(() => (fs.statSync(path.join(d.jobsDir, `${chatty}.log`), { throwIfNoEntry: false })?.size ?? 0) > MiB, { what: 'chatty log' });

  // Warm up every path once (lazy modules, inotify, the SQLite page cache), then take the baseline.
  for (const b of bases(dir)) {
    if (b.op === 'exclude') continue;
    await exchange(d.socket, JSON.stringify(b) + '\n');
  }
  await exchange(d.socket, JSON.stringify({ v: 1, op: 'log', args: { id: chatty } }) + '\n');
  await waitFor(async () => (await d.job(first + 2)).state !== 'PENDING' && (await d.job(first + 2)).state !== 'RUNNING', { what: 'warm-up job' });
  const fd0 = fdCount(pid);
  const rss0 = rssKiB(pid);
  t.comment(`baseline: ${fd0} descriptors, RSS ${(rss0 / 1024).toFixed(1)} MiB`);
  let rssPeak = rss0;
  const rssTimer = setInterval(() => { try { rssPeak = Math.max(rssPeak, rssKiB(pid)); } catch { /* exiting */ } }, 50);
  t.teardown(() => clearInterval(rssTimer));

  t.test(`${FRAMES} random and mutated frames get coded errors or closed connections`, async (t) => {
    const rng = new Rng(SEED);
    const frames: Array<{ kind: string; bytes: Buffer }> = [];
    while (frames.length < FRAMES) {
      const m = mutant(rng, dir);
      if (!stopsDaemon(m.bytes)) frames.push(m);
    }
    // Oversized frames: just over the limit with and without a newline, and far over it.
    for (const n of [4 * MiB + 1, 4 * MiB + 1024, 6 * MiB]) {
      frames.push({ kind: 'oversized', bytes: Buffer.concat([Buffer.from('{"v":1,"op":"status","args":{"x":"'), Buffer.alloc(n, 0x61), Buffer.from('"}}\n')]) });
      frames.push({ kind: 'oversized', bytes: Buffer.alloc(n, 0x20) });
    }
    const stats = new Map<string, Map<string, number>>();
    const bad: string[] = [];
    const t0 = Date.now();
    await inBatches(frames, 24, async (f) => {
      const r = await exchange(d.socket, f.bytes);
      const v = judge(r);
      const m = stats.get(f.kind) ?? new Map<string, number>();
      m.set(v.label, (m.get(v.label) ?? 0) + 1);
      stats.set(f.kind, m);
      if (!v.ok && bad.length < 10) bad.push(`${f.kind} → ${v.label}: ${JSON.stringify(r.frame)?.slice(0, 300)} ← ${f.bytes.subarray(0, 200).toString()}`);
      if (f.kind === 'oversized' && !(v.label === 'MESSAGE_TOO_LARGE' || v.label === 'closed')) bad.push(`oversized frame → ${v.label}`);
    });
    t.comment(`${frames.length} frames in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    for (const [kind, m] of [...stats].sort()) t.comment(`  ${kind}: ${[...m].map(([k, n]) => `${k} ${n}`).join(', ')}`);
    t.same(bad, [], 'every reply is a coded error (never INTERNAL), a result, or a closed connection');
    t.ok(d.proc!.exitCode === null && d.proc!.signalCode === null, 'daemon still running');
    t.ok(await d.ping(), 'daemon answers');
  });

  t.test('a request frame cannot carry a raw attachment (no buffering beyond the request limit)', async (t) => {
    const r = await exchange(d.socket, '{"v":1,"op":"status","args":{},"raw":16000000}\n', { end: false, timeout: 3000 });
    t.equal((r.frame as { error?: { code?: string } })?.error?.code, 'INVALID_REQUEST', 'refused at once, not after the read deadline');
  });

  t.test('a deeply nested frame is refused without stalling other clients', async (t) => {
    const probe = new LatencyProbe(d.socket, 10);
    const deepFrame = '{"v":1,"op":"status","args":' + deep(600000, true) + '}\n';
    const r = await exchange(d.socket, deepFrame);
    const lat = await probe.stop();
    t.match(r.frame, { ok: false, error: { code: 'INVALID_REQUEST', message: /nested deeper than/ } });
    t.comment(`status latency while a ${(deepFrame.length / MiB).toFixed(1)} MiB nested frame was refused: max ${lat.max.toFixed(1)} ms`);
    t.equal(lat.failures, 0);
  });

  t.test('huge offsets and limits are refused with a clear error', async (t) => {
    for (const args of [{ op: 'log', args: { id: 1, offset: 1e300 } }, { op: 'log', args: { id: 1, offset: 2 ** 63 } },
      { op: 'queue', args: { limit: 1e300 } }, { op: 'queue', args: { all: true, limit: 2 ** 64 } }, { op: 'get', args: { id: 1e300 } }]) {
      const r = await exchange(d.socket, JSON.stringify({ v: 1, ...args }) + '\n');
      const v = judge(r);
      t.ok(v.ok && v.label !== 'closed', `${JSON.stringify(args)} → ${v.label}`);
    }
  });

  t.test('500 idle and slow connections do not stop a well-behaved client', async (t) => {
    const idle: net.Socket[] = [];
    for (let i = 0; i < 500; i++) {
      const s = await connectIdle(d.socket);
      s.on('error', () => undefined);
      idle.push(s);
    }
    // Half of them trickle a valid request one byte at a time.
    const frame = Buffer.from('{"v":1,"op":"status","args":{}}\n');
    let pos = 0;
    const trickle = setInterval(() => {
      for (let i = 0; i < 250; i++) if (!idle[i]!.destroyed && pos < frame.length - 1) idle[i]!.write(frame.subarray(pos, pos + 1));
      pos++;
    }, 100);
    const probe = new LatencyProbe(d.socket, 10);
    await new Promise((r) => setTimeout(r, 3000)); // the measurement window, not a wait for a condition
    const lat = await probe.stop();
    clearInterval(trickle);
    t.comment(`status latency with 500 idle/slow connections open: max ${lat.max.toFixed(1)} ms, p99 ${lat.p99.toFixed(1)} ms, p50 ${lat.p50.toFixed(1)} ms over ${lat.n} requests`);
    t.equal(lat.failures, 0, 'every status request answered');
    t.ok(lat.n > 0 && lat.max < 5000, 'answered within 5 s');
    // The read deadline answers or closes them all.
    const ended = await Promise.all(idle.map((s) => new Promise<boolean>((res) => {
      if (s.destroyed) { res(true); return; }
      const timer = setTimeout(() => res(false), 15000);
      s.on('close', () => { clearTimeout(timer); res(true); });
      s.resume();
    })));
    t.equal(ended.filter(Boolean).length, 500, 'the daemon closed every silent connection itself (read deadline)');
  });

  t.test('clients that never read a log stream cost bounded memory', async (t) => {
    const stuck: net.Socket[] = [];
    for (let i = 0; i < 100; i++) {
      const s = await connectIdle(d.socket);
      s.on('error', () => undefined);
      s.pause();
      s.write(JSON.stringify({ v: 1, op: 'log', args: { id: chatty } }) + '\n');
      stuck.push(s);
    }
    const probe = new LatencyProbe(d.socket, 10);
    await new Promise((r) => setTimeout(r, 2000)); // measurement window
    const lat = await probe.stop();
    const rss = rssKiB(pid);
    t.comment(`100 non-reading log clients: RSS ${(rss / 1024).toFixed(1)} MiB (baseline ${(rss0 / 1024).toFixed(1)}), status max ${lat.max.toFixed(1)} ms`);
    t.equal(lat.failures, 0);
    // One chunk (256 KiB) per stuck reader; it was 2 MiB each before the chunks shrank.
    t.ok(rss - rss0 < 100 * 1024, 'memory stays bounded (< 100 MiB above baseline for 100 stuck readers)');
    for (const s of stuck) s.destroy();
  });

  t.test('clients that vanish in the middle of a follow leak nothing', async (t) => {
    const rng = new Rng(SEED + 1);
    const runs = Array.from({ length: 100 }, (_, i) => i);
    await inBatches(runs, 16, async () => {
      await new Promise<void>((resolve) => {
        const s = net.createConnection(d.socket);
        const want = rng.int(0, 256 * 1024);
        let got = 0;
        s.on('connect', () => s.write(JSON.stringify({ v: 1, op: 'follow', args: { id: chatty, offset: rng.int(0, 1000) } }) + '\n'));
        s.on('data', (b: Buffer) => {
          got += b.length;
          if (got >= want) s.destroy();
        });
        s.on('error', () => undefined);
        s.on('close', () => resolve());
      });
    });
    t.ok(await d.ping());
  });

  t.test('descriptors return to the baseline and memory stays bounded', async (t) => {
    const fds = await waitFor(() => { const n = fdCount(pid); return n <= fd0 ? n : undefined; }, { timeout: 20000, what: `descriptors back to ${fd0}` })
      .catch(() => fdCount(pid));
    const rss = rssKiB(pid);
    t.comment(`after abuse: ${fds} descriptors (baseline ${fd0}), RSS ${(rss / 1024).toFixed(1)} MiB, peak ${(rssPeak / 1024).toFixed(1)} MiB (baseline ${(rss0 / 1024).toFixed(1)} MiB)`);
    t.ok(fds <= fd0, `no descriptor leaked (${fds} ≤ ${fd0})`);
    t.ok(rssPeak - rss0 < 400 * 1024, 'peak RSS bounded (< 400 MiB above baseline)');
    t.ok(d.proc!.exitCode === null && d.proc!.signalCode === null, 'daemon never exited');
    const st = await d.request('status', {}) as { ok: boolean };
    t.ok(st.ok);
  });

  t.test('cleanup', async () => {
    await d.request('cancel', { id: chatty });
    await d.waitState(chatty, 'CANCELLED');
  });
});
