import t from 'tap';
import * as fs from 'node:fs';
import { request, stream } from '../../../packages/cli/src/client';
import { Follower, retryable, type FollowDeps } from '../../../packages/cli/src/follow';
import { ConnectError, ConnectionClosed } from '../../../packages/cli/src/client';
import { CliError } from '../../../packages/cli/src/errors';
import { fakeDaemon, tempDir, type Conn } from './fake-daemon';

const T = Date.UTC(2024, 4, 1) / 1000;
const job = (state: string, extra: object = {}): any => ({
  id: 5, owner: { uid: 0, gid: 0, name: 'root' }, spec: {}, state, devices: [], submitted_at: T, started_at: null, result: null, ...extra,
});
const running = () => job('RUNNING', { started_at: T + 1 });
const done = (state: string, code: number, error: string | null = null, started: number | null = T + 1) =>
  job(state, { started_at: started, result: { state, exit_code: code, finished_at: T + 2, error } });

/** Resolves once `pred` holds, checking after every I/O turn (no fixed sleeps). */
async function until(pred: () => boolean): Promise<void> {
  while (!pred()) await new Promise((r) => setImmediate(r));
}

function harness(home: string, over: Partial<FollowDeps> = {}) {
  const out: Buffer[] = [];
  const status: string[] = [];
  const deps: FollowDeps = {
    stream, request, home,
    write: async (b) => { out.push(Buffer.from(b)); },
    status: (l) => { status.push(l); },
    now: () => new Date(Date.UTC(2024, 4, 1, 12, 0, 0)),
    retryEveryMs: 5,
    ...over,
  };
  return { deps, out, status, text: () => Buffer.concat(out).toString() };
}

const LINE = /^\[xlurm\] 2024-05-01 12:00:00 UTC Job 5: /;

t.test('log bytes, the started line once, exit with the result', async (t) => {
  const d = await fakeDaemon(t, (c) => {
    c.send({ v: 1, ok: true, event: 'job', job: running() });
    c.send({ v: 1, ok: true, event: 'log', offset: 0 }, Buffer.from('out\n'));
    c.send({ v: 1, ok: true, event: 'job', job: running() });
    c.send({ v: 1, ok: true, event: 'log', offset: 4 }, Buffer.from('err\n'));
    c.send({ v: 1, ok: true, event: 'end', job: done('FAILED', 7), offset: 8 });
    c.socket.end();
  });
  const h = harness(d.home);
  const code = await new Follower(h.deps).follow(job('PENDING'));
  t.equal(code, 7);
  t.equal(h.text(), 'out\nerr\n');
  t.same(h.status, ['[xlurm] 2024-05-01 12:00:00 UTC Job 5: Task started.']);
});

t.test('waiting line after the delay while PENDING, then the started line', async (t) => {
  let conn: Conn | undefined;
  const d = await fakeDaemon(t, (c) => { conn = c; c.send({ v: 1, ok: true, event: 'job', job: job('PENDING') }); });
  const h = harness(d.home, { waitingAfterMs: 10 });
  const p = new Follower(h.deps).follow(job('PENDING'));
  // the connection must exist too: under load the timer can fire before the accept
  await until(() => h.status.length === 1 && conn !== undefined);
  t.match(h.status[0], /^\[xlurm\] 2024-05-01 12:00:00 UTC Job 5: Waiting for resources\.\.\.$/);
  conn!.send({ v: 1, ok: true, event: 'job', job: running() });
  conn!.send({ v: 1, ok: true, event: 'end', job: done('COMPLETED', 0), offset: 0 });
  t.equal(await p, 0);
  t.equal(h.status.length, 2);
  t.match(h.status[1], LINE);
  t.match(h.status[1], /Task started\.$/);
});

t.test('no waiting line for a job that started in time; none at all for a job that ends quickly', async (t) => {
  const d = await fakeDaemon(t, (c) => {
    c.send({ v: 1, ok: true, event: 'end', job: done('COMPLETED', 0), offset: 0 });
    c.socket.end();
  });
  // a delay far longer than the local round trip, even on a loaded machine
  const h = harness(d.home, { waitingAfterMs: 3000 });
  t.equal(await new Follower(h.deps).follow(job('PENDING')), 0);
  t.same(h.status, ['[xlurm] 2024-05-01 12:00:00 UTC Job 5: Task started.'], 'a job that finished between events still gets its started line');
});

t.test('a job cancelled before it started: no started line, exit 130', async (t) => {
  const d = await fakeDaemon(t, (c) => {
    c.send({ v: 1, ok: true, event: 'end', job: done('CANCELLED', 130, null, null), offset: 0 });
    c.socket.end();
  });
  const h = harness(d.home);
  t.equal(await new Follower(h.deps).follow(job('PENDING')), 130);
  t.same(h.status, []);
});

t.test('an execution error is printed as xlurm: <error>', async (t) => {
  const d = await fakeDaemon(t, (c) => {
    c.send({ v: 1, ok: true, event: 'end', job: done('FAILED', 1, 'cannot execute nope: No such file or directory (os error 2)'), offset: 0 });
    c.socket.end();
  });
  const h = harness(d.home);
  t.equal(await new Follower(h.deps).follow(running()), 1);
  t.same(h.status, ['[xlurm] 2024-05-01 12:00:00 UTC Job 5: Task started.', 'xlurm: cannot execute nope: No such file or directory (os error 2)']);
});

t.test('a dropped connection is resumed from the last offset: nothing lost, nothing repeated', async (t) => {
  let n = 0;
  const d = await fakeDaemon(t, (c) => {
    n++;
    if (n === 1) {
      c.send({ v: 1, ok: true, event: 'job', job: running() });
      c.send({ v: 1, ok: true, event: 'log', offset: 0 }, Buffer.from('hello '));
      c.socket.destroy(); // daemon restarted
    } else if (n === 2) {
      c.socket.destroy(); // and again, before saying anything
    } else {
      // the new daemon resends from an earlier offset than asked for
      c.send({ v: 1, ok: true, event: 'job', job: running() });
      c.send({ v: 1, ok: true, event: 'log', offset: 3 }, Buffer.from('lo world'));
      c.send({ v: 1, ok: true, event: 'log', offset: 11 }, Buffer.from('!'));
      c.send({ v: 1, ok: true, event: 'end', job: done('COMPLETED', 0), offset: 12 });
      c.socket.end();
    }
  });
  const h = harness(d.home);
  const f = new Follower(h.deps);
  t.equal(await f.follow(job('PENDING')), 0);
  t.equal(h.text(), 'hello world!');
  t.equal(f.written, 12);
  t.same(d.requests.map((r) => r.args), [{ id: 5, offset: 0 }, { id: 5, offset: 6 }, { id: 5, offset: 6 }]);
  t.equal(h.status.length, 1, 'the started line is printed once across reconnects');
});

t.test('reconnects while the daemon is down, and while it is shutting down', async (t) => {
  let n = 0;
  const d = await fakeDaemon(t, async (c) => {
    n++;
    if (n === 1) {
      c.send({ v: 1, ok: true, event: 'log', offset: 0 }, Buffer.from('a'));
      c.refuse('SHUTTING_DOWN', 'xlurm is shutting down');
      return;
    }
    if (n === 2) {
      c.socket.destroy();
      await d.close(); // the socket disappears for a while
      await until(() => attempts >= 3);
      await d.listen();
      return;
    }
    c.send({ v: 1, ok: true, event: 'log', offset: 1 }, Buffer.from('b'));
    c.send({ v: 1, ok: true, event: 'end', job: done('COMPLETED', 0), offset: 2 });
    c.socket.end();
  });
  let attempts = 0;
  const h = harness(d.home, {
    stream: (...a: Parameters<typeof stream>) => { attempts++; return stream(...a); },
  });
  t.equal(await new Follower(h.deps).follow(running()), 0);
  t.equal(h.text(), 'ab');
  t.ok(attempts >= 4);
});

t.test('retrying gives up after the limit with the connection error', async (t) => {
  const home = tempDir(t);
  const h = harness(home, { retryForMs: 30 });
  await t.rejects(new Follower(h.deps).follow(running()), { message: /^xlurm is not running; (ask the administrator to run `sudo xlurm start`|start it with `xlurm start`): / });
});

t.test('a refusal while following is final', async (t) => {
  const d = await fakeDaemon(t, (c) => c.refuse('PERMISSION_DENIED', 'permission denied: job belongs to bob (UID 1001)'));
  const h = harness(d.home);
  await t.rejects(new Follower(h.deps).follow(running()), { message: 'permission denied: job belongs to bob (UID 1001)' });
  t.equal(d.requests.length, 1);
});

t.test('the first signal sends one cancel on a separate connection; following continues to the end', async (t) => {
  let follow: Conn | undefined;
  const d = await fakeDaemon(t, (c) => {
    if (c.req.op === 'follow') { follow = c; c.send({ v: 1, ok: true, event: 'job', job: running() }); return; }
    c.reply({});
    follow!.send({ v: 1, ok: true, event: 'end', job: done('CANCELLED', 130), offset: 0 });
    follow!.socket.end();
  });
  const h = harness(d.home);
  const f = new Follower(h.deps);
  const p = f.follow(job('PENDING'));
  await until(() => follow !== undefined);
  f.requestCancel();
  f.requestCancel();
  t.equal(await p, 130);
  t.same(d.requests.map((r) => r.op), ['follow', 'cancel']);
  t.same(d.requests[1]!.args, { id: 5 });
});

t.test('a signal before the job id is known cancels as soon as it is', async (t) => {
  const d = await fakeDaemon(t, (c) => {
    if (c.req.op === 'cancel') { c.reply({}); return; }
    c.send({ v: 1, ok: true, event: 'end', job: done('CANCELLED', 130, null, null), offset: 0 });
    c.socket.end();
  });
  const h = harness(d.home);
  const f = new Follower(h.deps);
  f.requestCancel();
  t.equal(await f.follow(job('PENDING')), 130);
  await until(() => d.requests.some((r) => r.op === 'cancel'));
  t.same(d.requests.find((r) => r.op === 'cancel')!.args, { id: 5 });
});

t.test('a refused cancel aborts following', async (t) => {
  const d = await fakeDaemon(t, (c) => {
    if (c.req.op === 'cancel') { c.refuse('PERMISSION_DENIED', 'permission denied: job belongs to bob (UID 1001)'); return; }
    c.send({ v: 1, ok: true, event: 'job', job: running() });
  });
  const h = harness(d.home);
  const f = new Follower(h.deps);
  const p = f.follow(running());
  await until(() => d.requests.length === 1);
  f.requestCancel();
  await t.rejects(p, { message: 'permission denied: job belongs to bob (UID 1001)' });
});

t.test('what is worth retrying', async (t) => {
  t.ok(retryable(new ConnectionClosed()));
  t.ok(retryable(new ConnectError('x')));
  t.ok(retryable(new CliError('bye', 'SHUTTING_DOWN')));
  t.notOk(retryable(new CliError('job not found', 'JOB_NOT_FOUND')));
  t.notOk(retryable(new Error('x')));
});

/** Deps of the direct path: the log is `file` (the harness's writes copy: the reader reuses its buffer). */
function direct(home: string, file: string, over: Partial<FollowDeps> = {}) {
  const h = harness(home, over);
  h.deps.logFile = () => file;
  return h;
}

t.test('direct path: state changes only from the daemon, the bytes from the log file, all of them', async (t) => {
  const dir = tempDir(t);
  const file = `${dir}/5.log`;
  let conn: Conn | undefined;
  const d = await fakeDaemon(t, (c) => { conn = c; c.send({ v: 1, ok: true, event: 'job', job: running() }); });
  const h = direct(d.home, file);
  const f = new Follower(h.deps);
  const p = f.follow(job('PENDING'));
  await until(() => conn !== undefined);
  t.same(d.requests[0]!.args, { id: 5, bytes: false }, 'no bytes over the socket');
  fs.writeFileSync(file, 'first\n'); // created once the job started
  await until(() => h.text() === 'first\n');
  fs.appendFileSync(file, 'second\n');
  fs.appendFileSync(file, Buffer.alloc(3 << 20, 'x')); // more than one read
  fs.appendFileSync(file, 'last\n'); // written just before the end: still read
  conn!.send({ v: 1, ok: true, event: 'end', job: done('COMPLETED', 4), offset: 0 });
  conn!.socket.end();
  t.equal(await p, 4);
  t.ok(Buffer.concat(h.out).equals(fs.readFileSync(file)), 'the whole log, once, in order');
  t.equal(f.written, fs.statSync(file).size);
  t.same(h.status, ['[xlurm] 2024-05-01 12:00:00 UTC Job 5: Task started.']);
});

t.test('direct path: a reconnect resumes the state stream; the bytes continue from the file', async (t) => {
  const dir = tempDir(t);
  const file = `${dir}/5.log`;
  fs.writeFileSync(file, 'before ');
  let n = 0;
  let last: Conn | undefined;
  const d = await fakeDaemon(t, (c) => {
    n++;
    c.send({ v: 1, ok: true, event: 'job', job: running() });
    if (n === 1) { c.socket.destroy(); return; } // daemon restarted
    last = c;
  });
  const h = direct(d.home, file);
  const p = new Follower(h.deps).follow(running());
  await until(() => last !== undefined && h.text() === 'before ');
  fs.appendFileSync(file, 'after');
  last!.send({ v: 1, ok: true, event: 'end', job: done('COMPLETED', 0), offset: 0 });
  last!.socket.end();
  t.equal(await p, 0);
  t.equal(h.text(), 'before after');
  t.same(d.requests.map((r) => r.args), [{ id: 5, bytes: false }, { id: 5, bytes: false }]);
});

t.test('direct path: a daemon that does not know `bytes` relays instead, from the bytes already written', async (t) => {
  const dir = tempDir(t);
  const file = `${dir}/5.log`;
  const content = 'hello world';
  fs.writeFileSync(file, content.slice(0, 6));
  const d = await fakeDaemon(t, async (c) => {
    if (c.req.args.bytes === false) {
      // Refused only once the file reader has written what the file holds, so the relay must resume after it.
      await until(() => h.text() === content.slice(0, 6));
      c.refuse('INVALID_REQUEST', 'invalid request: unknown field `bytes` in args');
      return;
    }
    const from = c.req.args.offset ?? 0;
    c.send({ v: 1, ok: true, event: 'log', offset: from }, Buffer.from(content.slice(from)));
    c.send({ v: 1, ok: true, event: 'end', job: done('COMPLETED', 0), offset: content.length });
    c.socket.end();
  });
  const h = direct(d.home, file);
  t.equal(await new Follower(h.deps).follow(running()), 0);
  t.equal(h.text(), content, 'nothing lost, nothing twice');
  t.equal(d.requests.length, 2);
  t.ok(d.requests[1]!.args.offset <= 6, 'relayed from where the file reader stopped');
});

t.test('direct path: a log that is not a regular file of this account is relayed instead', async (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(`${dir}/elsewhere`, 'not the log');
  fs.symlinkSync(`${dir}/elsewhere`, `${dir}/5.log`);
  const d = await fakeDaemon(t, (c) => {
    c.send({ v: 1, ok: true, event: 'job', job: running() });
    if (c.req.args.bytes === false) return; // stays open until the follower gives it up
    c.send({ v: 1, ok: true, event: 'log', offset: 0 }, Buffer.from('relayed'));
    c.send({ v: 1, ok: true, event: 'end', job: done('COMPLETED', 0), offset: 7 });
    c.socket.end();
  });
  const h = direct(d.home, `${dir}/5.log`);
  t.equal(await new Follower(h.deps).follow(running()), 0);
  t.equal(h.text(), 'relayed', 'the link was not followed');
  t.same(d.requests[d.requests.length - 1]!.args, { id: 5, offset: 0 }, 'relayed from the start');
});

t.test('direct path: a job that never started (no log) ends without output', async (t) => {
  const dir = tempDir(t);
  const d = await fakeDaemon(t, (c) => {
    c.send({ v: 1, ok: true, event: 'end', job: done('CANCELLED', 130, null, null), offset: 0 });
    c.socket.end();
  });
  const h = direct(d.home, `${dir}/5.log`);
  t.equal(await new Follower(h.deps).follow(job('PENDING')), 130);
  t.equal(h.text(), '');
});

t.test('Pending lines: after the waiting line, then once per change of the reason code', async (t) => {
  let conn: Conn | undefined;
  const r = (code: string, message: string) => job('PENDING', { reason: { code, message } });
  const d = await fakeDaemon(t, (c) => { conn = c; c.send({ v: 1, ok: true, event: 'job', job: r('Resources', 'needs 1 nv device: nv:0 held by job 4 (root)') }); });
  const h = harness(d.home, { waitingAfterMs: 10 });
  const p = new Follower(h.deps).follow(job('PENDING'));
  await until(() => h.status.length === 2 && conn !== undefined);
  t.match(h.status[0], /Job 5: Waiting for resources\.\.\.$/);
  t.equal(h.status[1], '[xlurm] 2024-05-01 12:00:00 UTC Job 5: Pending: Resources: needs 1 nv device: nv:0 held by job 4 (root)');
  // the same code with another message is not news; a new code is
  conn!.send({ v: 1, ok: true, event: 'job', job: r('Resources', 'needs 1 nv device: nv:0 held by job 6 (root)') });
  conn!.send({ v: 1, ok: true, event: 'job', job: r('MaxRunning', '1 job running (limit 1)') });
  await until(() => h.status.length === 3);
  t.equal(h.status[2], '[xlurm] 2024-05-01 12:00:00 UTC Job 5: Pending: MaxRunning: 1 job running (limit 1)');
  conn!.send({ v: 1, ok: true, event: 'job', job: running() });
  conn!.send({ v: 1, ok: true, event: 'end', job: done('COMPLETED', 0), offset: 0 });
  t.equal(await p, 0);
  t.equal(h.status.length, 4);
  t.match(h.status[3], /Task started\.$/);
});

t.test('no Pending line before the waiting line', async (t) => {
  const d = await fakeDaemon(t, (c) => {
    c.send({ v: 1, ok: true, event: 'job', job: job('PENDING', { reason: { code: 'Resources', message: 'x' } }) });
    c.send({ v: 1, ok: true, event: 'job', job: running() });
    c.send({ v: 1, ok: true, event: 'end', job: done('COMPLETED', 0), offset: 0 });
    c.socket.end();
  });
  const h = harness(d.home, { waitingAfterMs: 3000 });
  t.equal(await new Follower(h.deps).follow(job('PENDING')), 0);
  t.same(h.status, ['[xlurm] 2024-05-01 12:00:00 UTC Job 5: Task started.']);
});
