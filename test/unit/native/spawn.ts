// spawnSupervisorAsync / canSpawnSupervisor (native/src/addon/spawn.cc): posix_spawn of the
// supervisor on the thread pool, and its exit watched through a pidfd on Node's own loop. Needs
// `npm run build:native`.
// Children are shell scripts that report what they see through /proc into a log file; the cases
// that need a fresh process (descriptor table, uncaught exceptions, exit of Node) run in a child
// node that loads the addon directly.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { canSpawnSupervisor, flockExclusive, spawnSupervisorAsync, stepdPath, accountByUid } from '../../../native/ts/index';
import type { Tap } from '../../helpers/tap';

type Exit = [number | null, string | null];

const ROOT = path.resolve(__dirname, '../../..');
const ADDON = path.join(ROOT, 'native/build/Release/xlurm_native.node');

/** Poll `pred` every 10 ms until it holds, failing after `ms`. */
async function waitFor(pred: () => boolean, what: string, ms = 10000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(10);
  }
}

/** An executable shell script in `dir`. */
function script(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

interface Started { pid: number; exit: Promise<Exit>; calls: () => number }

/**
 * spawnSupervisorAsync, with the pid and the exit as promises. The watch does not keep Node
 * alive, so a ref'd timer does until the exit is reported.
 */
async function start(file: string, fds: [number, number, number, number]): Promise<Started> {
  let calls = 0;
  let resolve!: (e: Exit) => void;
  const exit = new Promise<Exit>(r => { resolve = r; });
  const keep = setInterval(() => {}, 1000);
  try {
    const pid = await new Promise<number>((spawned, failed) => {
      spawnSupervisorAsync(file, fds, (err, pid) => (err ? failed(err) : spawned(pid!)),
        (code, signal) => { calls++; clearInterval(keep); resolve([code, signal]); });
    });
    return { pid, exit, calls: () => calls };
  } catch (e) {
    clearInterval(keep);
    throw e;
  }
}

/** spawnSupervisorAsync's failure: the error it reports through onSpawned. */
function spawnError(file: string, fds: [number, number, number, number], onExit: () => void): Promise<Error> {
  return new Promise<Error>((resolve, reject) => {
    spawnSupervisorAsync(file, fds, (err, pid) => (err ? resolve(err) : reject(new Error(`spawned ${file} as ${pid}`))), onExit);
  });
}

/** /proc/<pid>/stat fields after the command name: [state, ppid, pgrp, session, …]. */
function statFields(pid: number | 'self'): string[] {
  const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return s.slice(s.lastIndexOf(')') + 2).trim().split(' ');
}

/** Our children that are zombies (exited, not reaped). */
function zombies(): number[] {
  const out: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const [state, ppid] = statFields(Number(e));
      if (Number(ppid) === process.pid && state === 'Z') out.push(Number(e));
    } catch { /* gone meanwhile */ }
  }
  return out;
}

const openFds = (): number => fs.readdirSync('/proc/self/fd').length;

/** Runs `code` (CommonJS, `n` = the addon) in a child node; returns its exit and output. */
async function inNode(t: Tap, code: string, args: string[] = [], timeoutMs = 20000):
  Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const file = path.join(t.testdirName, `child-${Math.random().toString(36).slice(2)}.js`);
  fs.writeFileSync(file, `'use strict';\nconst n = require(${JSON.stringify(ADDON)});\nconst fs = require('fs');\n${code}\n`);
  const started = Date.now();
  const child = spawn(process.execPath, [file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', d => { stdout += d; });
  child.stderr.on('data', d => { stderr += d; });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [exitCode] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return { code: exitCode, stdout, stderr, ms: Date.now() - started };
}

const built = fs.existsSync(ADDON);
if (!built) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else if (!canSpawnSupervisor()) {
  t.plan(0, 'pidfd_open(2) unavailable here (Linux < 5.3?)');
} else {
  t.test('exit codes are reported once, and the child is reaped', async t => {
    const dir = t.testdir();
    const log = fs.openSync(path.join(dir, 'log'), 'a');
    t.teardown(() => fs.closeSync(log));
    const before = openFds();
    const seven = await start(script(dir, 'seven', 'exit 7'), [log, log, log, log]);
    t.ok(Number.isInteger(seven.pid) && seven.pid > 1, 'reports the pid');
    t.same(await seven.exit, [7, null]);
    t.notOk(fs.existsSync(`/proc/${seven.pid}`), 'reaped by the time onExit runs');
    const zero = await start('/bin/true', [log, log, log, log]);
    t.same(await zero.exit, [0, null]);
    await delay(100);
    t.equal(seven.calls() + zero.calls(), 2, 'each reported exactly once');
    await waitFor(() => openFds() === before, 'pidfds closed');
    t.same(zombies(), []);
  });

  t.test('death by a signal is reported by name', async t => {
    const dir = t.testdir();
    const log = fs.openSync(path.join(dir, 'log'), 'a');
    t.teardown(() => fs.closeSync(log));
    const sleeper = script(dir, 'sleeper', 'exec sleep 1000');
    for (const sig of ['SIGKILL', 'SIGTERM', 'SIGUSR1'] as const) {
      const s = await start(sleeper, [log, log, log, log]);
      process.kill(s.pid, sig);
      t.same(await s.exit, [null, sig], sig);
      t.notOk(fs.existsSync(`/proc/${s.pid}`), `${sig}: reaped`);
    }
    // SIGPIPE is ignored by Node; the child must have it at its default (death).
    const piped = await start(script(dir, 'piper', 'exec sleep 1000'), [log, log, log, log]);
    await waitFor(() => fs.readFileSync(`/proc/${piped.pid}/cmdline`, 'utf8').startsWith('sleep'), 'exec of sleep');
    process.kill(piped.pid, 'SIGPIPE');
    t.same(await piped.exit, [null, 'SIGPIPE'], 'SIGPIPE kills it: default disposition');
  });

  t.test('the child: descriptors 0-3 exactly, new session, empty env, cwd /, signals reset', async t => {
    const dir = fs.realpathSync(t.testdir());
    // As the daemon hands over the job spec: a file written, opened and unlinked before the
    // spawn. Here it is a script that /bin/sh reads from its stdin.
    const specPath = path.join(dir, 'spec');
    fs.writeFileSync(specPath, [
      'echo fds', 'ls /proc/$$/fd',
      'echo links', 'readlink /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2 /proc/$$/fd/3',
      'echo stat', 'cat /proc/$$/stat',
      // Read by the shell itself: a grep child would race the shell's own wait, during which
      // dash blocks every signal for a moment.
      'echo status', 'while read -r k v; do case $k in SigBlk:|SigIgn:) echo "$k $v";; esac; done < /proc/$$/status',
      'echo cwd', 'readlink /proc/$$/cwd',
      'echo environ', 'wc -c < /proc/$$/environ',
      'echo cmdline', "tr '\\0' ' ' < /proc/$$/cmdline", 'echo',
      'echo end', '',
    ].join('\n'));
    const spec = fs.openSync(specPath, 'r');
    fs.unlinkSync(specPath);
    const logPath = path.join(dir, 'log');
    const log = fs.openSync(logPath, 'a');
    const lockPath = path.join(dir, 'lock');
    const lock = fs.openSync(lockPath, 'w+');
    t.teardown(() => { fs.closeSync(spec); fs.closeSync(log); fs.closeSync(lock); });

    const ours = fs.readFileSync('/proc/self/status', 'utf8');
    t.ok(BigInt('0x' + /SigIgn:\s*(\w+)/.exec(ours)![1]) & (1n << 12n), 'this process ignores SIGPIPE (as Node does)');

    const s = await start('/bin/sh', [spec, log, log, lock]);
    t.same(await s.exit, [0, null]);
    const text = fs.readFileSync(logPath, 'utf8');
    const section = (name: string): string[] => {
      const lines = text.split('\n');
      const from = lines.indexOf(name) + 1;
      let to = from;
      while (to < lines.length && !['fds', 'links', 'stat', 'status', 'cwd', 'environ', 'cmdline', 'end'].includes(lines[to])) to++;
      return lines.slice(from, to);
    };
    t.match(text, /\nend\n$/, `the script ran to its end:\n${text}`);
    t.same(section('fds'), ['0', '1', '2', '3'], 'exactly descriptors 0-3');
    t.same(section('links'), [`${specPath} (deleted)`, logPath, logPath, lockPath], 'fds[i] as descriptor i');

    const fields = section('stat')[0]!;
    const after = fields.slice(fields.lastIndexOf(')') + 2).split(' ');
    t.equal(Number(after[3]), s.pid, 'session leader of a new session (sid = pid)');
    t.equal(Number(after[2]), s.pid, 'and of a new process group');
    t.not(Number(after[3]), Number(statFields('self')[3]), 'not in our session');

    const status = Object.fromEntries(section('status').map(l => l.split(/:\s*/)));
    t.equal(BigInt('0x' + status.SigBlk), 0n, 'nothing blocked');
    // glibc's posix_spawn leaves its own two internal signals (32, 33) ignored; it refuses to
    // touch them (xlurm-stepd resets them for the job). Everything else is at its default.
    t.equal(BigInt('0x' + status.SigIgn) & ~(3n << 31n), 0n, `no signal ignored (SigIgn ${status.SigIgn})`);

    t.same(section('cwd'), ['/'], 'cwd /');
    t.same(section('environ').map(l => l.trim()), ['0'], 'empty environment');
    t.same(section('cmdline'), ['/bin/sh '], 'argv is [file]');
  });

  t.test('sources below 4, repeated or close-on-exec, land where asked', async t => {
    // A child node whose fds 0-3 are the files a-d, all close-on-exec: dup2(3, 0) would clobber
    // the 0 wanted on 1, and dup2(2, 2) / dup2(3, 3) would keep FD_CLOEXEC.
    const dir = fs.realpathSync(t.testdir());
    const files = ['a', 'b', 'c', 'd'].map(f => path.join(dir, f));
    const reporter = script(dir, 'report', 'readlink /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2 /proc/$$/fd/3 > /proc/$$/fd/1');
    const prog = `
      const [reporter, out, ...files] = process.argv.slice(2);
      // Reopened by Node, so close-on-exec as everything Node opens, at the same numbers 0-3.
      for (const fd of [0, 1, 2, 3]) {
        fs.closeSync(fd);
        if (fs.openSync(files[fd], 'r+') !== fd) throw new Error('not reopened as ' + fd);
      }
      const count = () => fs.readdirSync('/proc/self/fd').length;
      const before = count();
      const keep = setInterval(() => {}, 1000);
      n.spawnSupervisorAsync(reporter, [3, 0, 2, 3], (err) => { if (err) throw err; }, (code, signal) => {
        clearInterval(keep);
        fs.writeFileSync(out, JSON.stringify({ code, signal, leaked: count() - before }));
      });`;
    const fds = files.map(f => fs.openSync(f, 'w+'));
    const out = path.join(dir, 'out.json');
    const file = path.join(dir, 'child.js');
    fs.writeFileSync(file, `'use strict';\nconst n = require(${JSON.stringify(ADDON)});\nconst fs = require('fs');\n${prog}\n`);
    const child = spawn(process.execPath, [file, reporter, out, ...files], { stdio: fds });
    for (const fd of fds) fs.closeSync(fd);
    const [code] = (await once(child, 'close')) as [number | null];
    t.equal(code, 0);
    t.same(JSON.parse(fs.readFileSync(out, 'utf8')), { code: 0, signal: null, leaked: 0 }, 'temporary copies closed');
    t.same(fs.readFileSync(files[0]!, 'utf8').split('\n'), [files[3], files[0], files[2], files[3], ''],
      'child fds 0-3 = parent fds 3, 0, 2, 3');
  });

  t.test('failures are errno-coded errors and leave nothing behind', async t => {
    const dir = t.testdir({ 'not-exec': '#!/bin/sh\nexit 0\n' });
    const log = fs.openSync(path.join(dir, 'log'), 'a');
    t.teardown(() => fs.closeSync(log));
    const closed = fs.openSync(path.join(dir, 'log'), 'r');
    fs.closeSync(closed);
    const before = openFds();
    const keep = setInterval(() => {}, 1000);
    t.teardown(() => clearInterval(keep));
    const never = (): void => { t.fail('onExit called after a failed spawn'); };
    const none = (): void => { t.fail('spawned'); };

    // A descriptor that cannot be copied: thrown at once, before anything is queued.
    t.throws(() => spawnSupervisorAsync('/bin/true', [log, log, log, closed], none, never), { code: 'EBADF', syscall: 'fcntl' }, 'a closed descriptor');
    t.throws(() => spawnSupervisorAsync('/bin/true', [log, log, log, 1 << 30], none, never), { code: 'EBADF' });

    t.throws(() => spawnSupervisorAsync('bin/true', [log, log, log, log], none, never), TypeError, 'relative path');
    t.throws(() => spawnSupervisorAsync('/bin/true\0x', [log, log, log, log], none, never), TypeError);
    t.throws(() => spawnSupervisorAsync('/bin/true', [log, log, log] as unknown as [number, number, number, number], none, never), TypeError);
    t.throws(() => spawnSupervisorAsync('/bin/true', [log, log, log, -1], none, never), TypeError);
    t.throws(() => spawnSupervisorAsync('/bin/true', [log, log, log, log], none, undefined as unknown as () => void), TypeError);
    t.throws(() => spawnSupervisorAsync('/bin/true', [log, log, log, log], undefined as unknown as () => void, never), TypeError);

    t.match(await spawnError('/nonexistent-xlurm/stepd', [log, log, log, log], never), {
      code: 'ENOENT', errno: -2, syscall: 'posix_spawn', path: '/nonexistent-xlurm/stepd',
      message: 'spawn /nonexistent-xlurm/stepd: No such file or directory',
    });
    t.match(await spawnError(path.join(dir, 'not-exec'), [log, log, log, log], never), {
      code: 'EACCES', message: `spawn ${path.join(dir, 'not-exec')}: Permission denied`,
    });

    await delay(200);  // an onExit for a failed spawn would have come by now
    t.same(zombies(), [], 'no child left (glibc reaps a child whose exec failed)');
    t.equal(openFds(), before, 'no descriptor left');
  });

  t.test('onExit runs like a loop callback: nextTick and microtasks after it, async context kept', async t => {
    const dir = t.testdir();
    const log = fs.openSync(path.join(dir, 'log'), 'a');
    t.teardown(() => fs.closeSync(log));
    const order: string[] = [];
    const als = new AsyncLocalStorage<{ job: number }>();
    let store: { job: number } | undefined;
    const done = new Promise<void>(resolve => {
      const keep = setInterval(() => {}, 1000);
      als.run({ job: 42 }, () => spawnSupervisorAsync('/bin/true', [log, log, log, log], (err) => { if (err) throw err; }, () => {
        order.push('onExit');
        store = als.getStore();
        process.nextTick(() => order.push('nextTick'));
        queueMicrotask(() => order.push('microtask'));
        setImmediate(() => { order.push('immediate'); clearInterval(keep); resolve(); });
      }));
    });
    await done;
    t.same(order, ['onExit', 'nextTick', 'microtask', 'immediate']);
    t.same(store, { job: 42 }, 'AsyncLocalStorage store of the spawn call');
  });

  t.test('a throwing onExit is an uncaught exception, and the addon keeps working', async t => {
    t.testdir();
    const handled = await inNode(t, `
      const fd = fs.openSync('/dev/null', 'r+');
      const keep = setInterval(() => {}, 1000);
      const spawned = (err) => { if (err) throw err; };
      process.on('uncaughtException', (e) => {
        console.log('uncaught ' + e.message);
        n.spawnSupervisorAsync('/bin/true', [fd, fd, fd, fd], spawned, (code, signal) => {
          console.log('second ' + code + ' ' + signal);
          clearInterval(keep);
        });
      });
      n.spawnSupervisorAsync('/bin/true', [fd, fd, fd, fd], spawned, () => { throw new Error('boom'); });`);
    t.equal(handled.code, 0, handled.stderr);
    t.equal(handled.stdout, 'uncaught boom\nsecond 0 null\n');

    const unhandled = await inNode(t, `
      const fd = fs.openSync('/dev/null', 'r+');
      const keep = setInterval(() => {}, 1000);
      n.spawnSupervisorAsync('/bin/true', [fd, fd, fd, fd], (err) => { if (err) throw err; }, () => { throw new Error('boom'); });`);
    t.equal(unhandled.code, 1, 'Node exits as for any uncaught exception');
    t.match(unhandled.stderr, /Error: boom/);
  });

  t.test('the watch does not keep Node alive', async t => {
    const dir = t.testdir();
    const sleeper = script(dir, 'sleeper', 'exec sleep 60');
    const r = await inNode(t, `
      const fd = fs.openSync('/dev/null', 'r+');
      n.spawnSupervisorAsync(process.argv[2], [fd, fd, fd, fd], (err, pid) => console.log(err ? err.message : pid),
        () => console.log('exit seen'));`,
    [sleeper], 20000);
    const pid = Number(r.stdout.trim());
    t.teardown(() => { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } });
    t.equal(r.code, 0, r.stderr);
    t.ok(Number.isInteger(pid) && pid > 1, `printed the pid (${r.stdout})`);
    t.ok(r.ms < 10000, `exited in ${r.ms} ms, with the child still running`);
    t.ok(fs.existsSync(`/proc/${pid}`), 'the supervisor outlives the node that started it');
  });

  t.test('no pidfd to be had (EMFILE): a timer reaps instead; no room for the copies is EMFILE', async t => {
    t.testdir();
    const r = await inNode(t, `
      const { execFileSync } = require('child_process');
      const out = [];
      const log = fs.openSync('/dev/null', 'r+');
      // Every number below 300 taken, so the copy of the log the spawn makes is 300 or above.
      const fillers = [];
      for (;;) { const fd = fs.openSync('/dev/null', 'r'); fillers.push(fd); if (fd >= 299) break; }
      const keep = setInterval(() => {}, 1000);
      const t0 = Date.now();
      let pid = 0;
      n.spawnSupervisorAsync('/bin/true', [log, log, log, log], (err, p) => {
        if (err) out.push('spawn failed ' + err.code);
        pid = p;
      }, (code, signal) => {
        clearInterval(keep);
        out.push('exit ' + code + ' ' + signal);
        out.push('reaped ' + !fs.existsSync('/proc/' + pid));
        for (const f of fillers.splice(0, 16)) fs.closeSync(f);
        // The fallback polls every 50 ms: the report cannot come sooner than that.
        out.push('after >= 40 ms ' + (Date.now() - t0 >= 40));
        console.log(out.join('\\n'));
      });
      // The limit lowered to 300 from outside (Node has no setrlimit) before the spawn is done:
      // once it has closed the copy, the watch finds no number for a pidfd. Not before the
      // child exists (a zombie until the loop reaps it): glibc checks the file actions against
      // the limit as they are made, on the thread pool.
      const child = () => fs.readdirSync('/proc').some((e) => {
        try { return /^\\d+$/.test(e) && fs.readFileSync('/proc/' + e + '/stat', 'utf8').split(') ')[1].split(' ')[1] === String(process.pid); } catch { return false; }
      });
      for (const deadline = Date.now() + 10000; !child();) if (Date.now() > deadline) throw new Error('the spawn never started');
      execFileSync('prlimit', ['--pid', String(process.pid), '--nofile=300:'], { stdio: ['ignore', 'ignore', 'inherit'] });
      try { fs.openSync('/dev/null', 'r'); out.push('unexpected room'); } catch (e) { out.push('filled ' + e.code); }
      try {
        n.spawnSupervisorAsync('/bin/true', [log, log, log, log], () => out.push('unexpected spawn'), () => out.push('unexpected exit'));
        out.push('unexpected queue');
      } catch (e) { out.push('no room for the copies: ' + e.code + ' ' + e.syscall); }`);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, [
      'filled EMFILE', 'no room for the copies: EMFILE fcntl', 'exit 0 null', 'reaped true', 'after >= 40 ms true', '',
    ].join('\n'));
  });

  t.test('200 concurrent spawns: every one reported exactly once', async t => {
    const dir = t.testdir();
    const log = fs.openSync(path.join(dir, 'log'), 'a');
    t.teardown(() => fs.closeSync(log));
    const exiter = script(dir, 'exiter', 'exit $(($$ % 100))');
    const before = openFds();
    const calls = new Map<number, Exit[]>();
    const keep = setInterval(() => {}, 1000);
    t.teardown(() => clearInterval(keep));
    const pids: number[] = [];
    for (let i = 0; i < 200; i++) {
      let pid = 0;
      spawnSupervisorAsync(exiter, [log, log, log, log], (err, p) => {
        if (err) throw err;
        pid = p!;
        pids.push(pid);
      }, (code, signal) => {
        const list = calls.get(pid) ?? [];
        list.push([code, signal]);
        calls.set(pid, list);
      });
    }
    await waitFor(() => pids.length === 200, 'all 200 spawned', 30000);
    t.equal(new Set(pids).size, 200, '200 distinct pids');
    await waitFor(() => calls.size === 200, 'all 200 exits', 30000);
    await delay(200);
    const wrong = pids.filter(p => calls.get(p)?.length !== 1 || calls.get(p)![0]![0] !== p % 100 || calls.get(p)![0]![1] !== null);
    t.same(wrong, [], 'each pid reported once with its own exit code');
    t.same(zombies(), []);
    await waitFor(() => openFds() === before, 'every pidfd closed');
  });

  t.test('xlurm-stepd started as the daemon does: job runs, "started" marker, signals at default', async t => {
    const dir = fs.realpathSync(t.testdir());
    const uid = process.geteuid!();
    const nul = (parts: string[]): Buffer => Buffer.concat(parts.flatMap(p => [Buffer.from(p), Buffer.alloc(1)]));
    const argv = ['sh', '-c', "grep -E '^Sig(Blk|Ign)' /proc/self/status"];
    const specPath = path.join(dir, '7.spec');
    fs.writeFileSync(specPath, nul([
      'XLURM-STEPD-5', '7', path.join(dir, '7.result'), path.join(dir, '7.cancel'),
      String(uid), String(process.getegid!()), accountByUid(uid)?.name ?? 'unknown', '0', '0', dir, '0', '1', '0', '', '0',
      String(argv.length), ...argv, '1', 'PATH=/usr/bin:/bin',
    ]), { mode: 0o600 });
    const spec = fs.openSync(specPath, 'r');
    fs.unlinkSync(specPath);
    const log = fs.openSync(path.join(dir, '7.log'), 'a', 0o600);
    const lock = fs.openSync(path.join(dir, '7.lock'), 'w+', 0o600);
    t.equal(flockExclusive(lock), true);
    const s = await start(stepdPath(), [spec, log, log, lock]);
    for (const fd of [spec, log, lock]) fs.closeSync(fd);
    t.same(await s.exit, [0, null]);
    t.match(JSON.parse(fs.readFileSync(path.join(dir, '7.result'), 'utf8')), { state: 'COMPLETED', exit_code: 0 });
    t.equal(fs.readFileSync(path.join(dir, '7.lock'), 'utf8'), 'started\n');
    t.equal(fs.readFileSync(path.join(dir, '7.log'), 'utf8'), 'SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n',
      'the job starts with no signal blocked or ignored, glibc-internal ones included');
    const probe = fs.openSync(path.join(dir, '7.lock'), 'r+');
    t.teardown(() => fs.closeSync(probe));
    t.equal(flockExclusive(probe), true, 'lock free once stepd is gone');
  });
}

t.test('spawnSupervisorAsync: spawns off the loop from copies of the descriptors', { skip: !canSpawnSupervisor() && 'no pidfd' }, async t => {
  const dir = t.testdir();
  const log = path.join(dir, 'out.log');
  // Copies stdin to the log, then becomes `sleep`, whose descriptors the test reads from
  // outside (a listing by the shell itself would race the pipes it sets up).
  const child = script(dir, 'child.sh', 'cat; exec sleep 60');
  const input = path.join(dir, 'in');
  fs.writeFileSync(input, 'from stdin\n');
  const before = openFds();
  const inFd = fs.openSync(input, 'r');
  const logFd = fs.openSync(log, 'w');
  const keep = setInterval(() => {}, 1000);
  t.teardown(() => clearInterval(keep));
  let spawnedPid = 0;
  let exitResolve!: (e: Exit) => void;
  const exited = new Promise<Exit>((res) => { exitResolve = res; });
  const spawned = new Promise<number>((resolve, reject) => {
    spawnSupervisorAsync(child, [inFd, logFd, logFd, logFd], (err, pid) => {
      if (err) reject(err); else { spawnedPid = pid!; resolve(pid!); }
    }, (code, signal) => exitResolve([code, signal]));
  });
  // The caller's descriptors can go at once: the addon holds its own copies.
  fs.closeSync(inFd);
  fs.closeSync(logFd);
  t.equal(spawnedPid, 0, 'the pid is reported later, from the loop');
  const pid = await spawned;
  t.ok(pid > 0, 'spawned');
  await waitFor(() => { try { return fs.readlinkSync(`/proc/${pid}/exe`).endsWith('/sleep'); } catch { return false; } }, 'the child to exec sleep');
  // Polled: right after the exec, sleep's dynamic loader briefly holds the libraries it opens
  // (fd 4, close-on-exec, closed again). A descriptor leaked by the spawn would stay.
  const fdsOf = () => fs.readdirSync(`/proc/${pid}/fd`).map(Number).sort((a, b) => a - b);
  await waitFor(() => fdsOf().join() === '0,1,2,3', 'the child to hold exactly fds 0-3');
  t.same(fdsOf(), [0, 1, 2, 3], 'the child has exactly fds 0-3');
  t.equal(fs.readFileSync(log, 'utf8'), 'from stdin\n', 'it read the copied stdin');
  process.kill(pid, 'SIGKILL');
  t.same(await exited, [null, 'SIGKILL'], 'the exit is reported after the spawn');
  await waitFor(() => openFds() === before, 'the copies to be closed');
  t.equal(openFds(), before, 'no descriptor left behind');
  t.same(zombies(), [], 'reaped');

  const missing = await new Promise<Error>((resolve) => {
    const fd = fs.openSync('/dev/null', 'r');
    spawnSupervisorAsync(path.join(dir, 'no-such-file'), [fd, fd, fd, fd], (err) => resolve(err!), () => t.fail('no exit for a failed spawn'));
    fs.closeSync(fd);
  });
  t.match(missing, { code: 'ENOENT', message: /^spawn .*no-such-file: No such file or directory$/ });
  await waitFor(() => openFds() === before, 'the copies to be closed after a failure');
});
