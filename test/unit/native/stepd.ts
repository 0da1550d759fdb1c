// xlurm-stepd, the per-job supervisor (docs/behaviour.md §6.3), spawned the way the daemon does
// it: spec on stdin, the job log on fds 1 and 2, the flocked job lock on fd 3, a new session.
// Needs `npm run build:native`. Multi-user cases run only as root (with the existing nobody account).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { accountByUid, flockExclusive, groupList, stepdPath } from '../../../native/ts/index';
import { fill, mountTmpfs } from '../../helpers/disk';
import { peerMissing, peerSkip, skip, type Tap } from '../../helpers/tap';


interface Outcome {
  state: 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT';
  exit_code: number;
  finished_at: number;
  error: string | null;
  /** What the job's cgroups measured, where it had them. */
  peak_memory?: number;
  cpu_seconds?: number;
}

interface JobOptions {
  argv: (string | Buffer)[];
  env?: (string | Buffer)[];
  cwd?: string;
  timeLimit?: number;
  /** Seconds from SIGTERM to SIGKILL (default 1, the daemon's default). */
  killGrace?: number;
  switchUser?: boolean;
  uid?: number;
  gid?: number;
  owner?: string;
  /** Supplementary groups sent in the spec (default: the owner's, as the daemon resolves them). */
  groups?: number[];
  /** The job's cgroup directories (joined by the payload before exec) and the unified one's cgroup.kill. */
  cgroups?: string[];
  cgroupKill?: string;
  /** Replace the whole spec (malformed-input cases). */
  rawSpec?: Buffer;
  /** Create the cancel marker before starting. */
  cancelBefore?: boolean;
  /** Arguments for xlurm-stepd itself (it takes none). */
  args?: string[];
  /** Do not pass a lock descriptor on fd 3. */
  noLock?: boolean;
  /** The job's directory (result, log, lock); default: a fresh one under the test dir. */
  dir?: string;
  /** Runs while stepd is alive, after the spec was written. */
  during?: (ctx: { child: ChildProcess; dir: string; lockPath: string }) => Promise<void>;
}

interface JobRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  dir: string;
  log: Buffer;
  logText: string;
  resultPath: string;
  result: Outcome | null;
  resultRaw: string | null;
  pid: number;
  elapsedMs: number;
}

const DEFAULT_ENV = ['PATH=/usr/local/bin:/usr/bin:/bin'];
const euid = process.geteuid!();
const egid = process.getegid!();
const isRoot = euid === 0;

/** Poll `pred` every 10 ms until it holds, failing after `ms`. */
async function waitFor(pred: () => boolean, what: string, ms = 10000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(10);
  }
}

function nul(parts: (string | Buffer)[]): Buffer {
  return Buffer.concat(parts.flatMap(p => [Buffer.isBuffer(p) ? p : Buffer.from(p), Buffer.alloc(1)]));
}

function buildSpec(dir: string, o: JobOptions): Buffer {
  const env = o.env ?? DEFAULT_ENV;
  const uid = o.uid ?? euid;
  const owner = o.owner ?? accountByUid(uid)?.name ?? 'unknown';
  const groups = o.groups ?? (o.switchUser && accountByUid(uid) ? groupList(owner, o.gid ?? egid) : []);
  const groupsField = [String(groups.length), ...groups.map(String)];
  return nul([
    'XLURM-STEPD-4', '7',
    path.join(dir, '7.result'), path.join(dir, '7.cancel'),
    String(uid), String(o.gid ?? egid),
    owner,
    ...groupsField,
    o.switchUser ? '1' : '0',
    o.cwd ?? dir,
    String(o.timeLimit ?? 0),
    String(o.killGrace ?? 1),
    String(o.cgroups?.length ?? 0), ...(o.cgroups ?? []), o.cgroupKill ?? '',
    String(o.argv.length), ...o.argv,
    String(env.length), ...env,
  ]);
}

let jobSeq = 0;

async function runJob(t: Tap, o: JobOptions): Promise<JobRun> {
  if (!fs.existsSync(t.testdirName)) t.testdir();
  const dir = o.dir ?? path.join(t.testdirName, `job-${++jobSeq}`);
  fs.mkdirSync(dir, { recursive: true });
  const lockPath = path.join(dir, '7.lock');
  const logPath = path.join(dir, '7.log');
  const resultPath = path.join(dir, '7.result');
  if (o.cancelBefore) fs.writeFileSync(path.join(dir, '7.cancel'), 'true\n');

  // As the daemon does (docs/behaviour.md §6.1): lock taken before the spawn, log opened for append.
  const lockFd = fs.openSync(lockPath, 'w+', 0o600);
  t.equal(flockExclusive(lockFd), true, 'lock taken before spawn');
  const logFd = fs.openSync(logPath, 'a', 0o600);
  const stdio: ('pipe' | number)[] = ['pipe', logFd, logFd];
  if (!o.noLock) stdio.push(lockFd);

  const started = Date.now();
  const child = spawn(stepdPath(), o.args ?? [], { stdio, detached: true });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  // Our copies go; the lock now lives only through stepd's fd 3.
  fs.closeSync(lockFd);
  fs.closeSync(logFd);
  child.stdin!.on('error', () => { /* stepd may exit before reading everything */ });
  child.stdin!.end(o.rawSpec ?? buildSpec(dir, o));

  if (o.during) await o.during({ child, dir, lockPath });
  const [code, signal] = await exited;
  const elapsedMs = Date.now() - started;
  const log = fs.readFileSync(logPath);
  const resultRaw = fs.existsSync(resultPath) ? fs.readFileSync(resultPath, 'utf8') : null;
  return {
    code, signal, dir, log, logText: log.toString('utf8'), resultPath, resultRaw,
    result: resultRaw === null ? null : (JSON.parse(resultRaw) as Outcome),
    pid: child.pid!, elapsedMs,
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw e;
  }
}

const built = fs.existsSync(path.resolve(__dirname, '../../../native/build/Release/xlurm-stepd'));
if (!built) {
  t.plan(0, 'xlurm-stepd not built (npm run build:native)');
} else {
  t.test('a successful job: COMPLETED 0, atomic 0600 result, exit 0', async t => {
    const before = Math.floor(Date.now() / 1000);
    const r = await runJob(t, { argv: ['true'] });
    t.equal(r.code, 0);
    t.match(r.result, { state: 'COMPLETED', exit_code: 0, error: null });
    t.ok(r.result!.finished_at >= before && r.result!.finished_at <= Date.now() / 1000 + 1, 'finished_at is unix seconds');
    t.match(r.resultRaw, /^\{"state":"COMPLETED","exit_code":0,"finished_at":\d+,"error":null\}\n$/);
    t.equal(fs.statSync(r.resultPath).mode & 0o777, 0o600, 'result is 0600');
    t.same(fs.readdirSync(r.dir).filter(f => f.includes('.tmp.')), [], 'no temp file left');
    t.equal(r.logText, '');
    t.equal(fs.readFileSync(path.join(r.dir, '7.lock'), 'utf8'), 'started\n', 'the lock file says the payload was started');
  });

  t.test('the "started" marker is written before the payload runs, and only when it runs', async t => {
    // The job's cwd is its directory, where the lock file is.
    const r = await runJob(t, { argv: ['sh', '-c', 'cat 7.lock > seen'] });
    t.match(r.result, { state: 'COMPLETED' });
    t.equal(fs.readFileSync(path.join(r.dir, 'seen'), 'utf8'), 'started\n', 'the payload already finds the marker');

    const cancelled = await runJob(t, { argv: ['true'], cancelBefore: true });
    t.match(cancelled.result, { state: 'CANCELLED' });
    t.equal(fs.readFileSync(path.join(cancelled.dir, '7.lock'), 'utf8'), '', 'nothing ran: the lock file stays empty');
    const invalid = await runJob(t, { argv: [] });
    t.equal(invalid.code, 1);
    t.equal(fs.readFileSync(path.join(invalid.dir, '7.lock'), 'utf8'), '', 'an invalid spec: empty');
  });

  t.test('exit status and signals', async t => {
    const seven = await runJob(t, { argv: ['sh', '-c', 'exit 7'] });
    t.equal(seven.code, 0);
    t.match(seven.result, { state: 'FAILED', exit_code: 7, error: null });
    const killed = await runJob(t, { argv: ['sh', '-c', 'kill -KILL $$'] });
    t.match(killed.result, { state: 'FAILED', exit_code: 128 + 9, error: null });
    const termed = await runJob(t, { argv: ['sh', '-c', 'kill -TERM $$'] });
    t.match(termed.result, { state: 'FAILED', exit_code: 128 + 15, error: null }, 'own SIGTERM is not a cancel');
  });

  t.test('a program that cannot be executed', async t => {
    const r = await runJob(t, { argv: ['nosuchcmd-xlurm-test', 'arg'] });
    t.equal(r.code, 0);
    t.same(r.result && { ...r.result, finished_at: 0 }, {
      state: 'FAILED', exit_code: 1, finished_at: 0,
      error: 'cannot execute nosuchcmd-xlurm-test: No such file or directory',
    });
    t.equal(r.logText, '', 'the error goes to the result, not the log');

    const noDir = await runJob(t, { argv: ['true'], cwd: '/nonexistent-xlurm-test' });
    t.match(noDir.result, { state: 'FAILED', exit_code: 1, error: 'cannot execute true: No such file or directory' });

    // argv[0] is user bytes: quotes, control characters and invalid UTF-8 stay valid JSON.
    const odd = await runJob(t, { argv: [Buffer.from('no"such\\cmd\n\u00e9\x01'), Buffer.from([0x62, 0xff, 0x63])] });
    t.equal(odd.result?.error, 'cannot execute no"such\\cmd\n\u00e9\x01: No such file or directory');
    const bad = await runJob(t, { argv: [Buffer.from([0x78, 0xff, 0xc3, 0x28])] });
    t.equal(bad.result?.error, 'cannot execute x\ufffd\ufffd(: No such file or directory');
  });

  t.test('environment is exactly the submitted one, byte for byte', async t => {
    const env = [
      'PATH=/usr/bin:/bin',
      'FOO=bar baz',
      Buffer.concat([Buffer.from('BYTES='), Buffer.from([0xff, 0xfe, 0x80])]),
      'EMPTY=',
      'MULTI=a\nb=c',
    ];
    const r = await runJob(t, { argv: ['env', '-0'], env });
    t.match(r.result, { state: 'COMPLETED' });
    t.same(r.log, nul(env));

    // PATH lookup uses the submitted PATH, not stepd's.
    const bin = path.join(t.testdir(), 'bin');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'xlurm-hello'), '#!/bin/sh\necho hello from path\n', { mode: 0o755 });
    const p = await runJob(t, { argv: ['xlurm-hello'], env: [`PATH=${bin}:/usr/bin:/bin`] });
    t.equal(p.logText, 'hello from path\n');
    const np = await runJob(t, { argv: ['true'], env: ['PATH=/nonexistent-xlurm'] });
    t.match(np.result, { state: 'FAILED', error: 'cannot execute true: No such file or directory' });
  });

  t.test('cwd, umask, stdin, descriptors, process group and session', async t => {
    const dir = fs.realpathSync(t.testdir());
    const cwd = await runJob(t, { argv: ['pwd'], cwd: dir });
    t.equal(cwd.logText, `${dir}\n`);

    // `ls` lists the shell's descriptors with no pipeline around it: while the
    // shell sets up `ls | tr`, it holds the pipe's ends itself, and an `ls`
    // that runs before the shell closes them sees one of them as fd 3.
    const r = await runJob(t, {
      argv: ['sh', '-c', 'umask; readlink /proc/self/fd/0; ls /proc/$$/fd; echo ids $$ $(ps -o pgid= -p $$) $(ps -o sid= -p $$)'],
    });
    const lines = r.logText.trimEnd().split('\n');
    const [umask, stdin] = lines;
    const fds = lines.slice(2, -1).join(' ');
    const ids = lines[lines.length - 1]!.replace(/^ids /, '');
    t.equal(umask, '0077', 'umask 077');
    t.equal(stdin, '/dev/null', 'stdin is /dev/null');
    t.equal(fds, '0 1 2', 'only stdin/stdout/stderr reach the job (the lock does not)');
    const [pid, pgid, sid] = ids.trim().split(/\s+/).map(Number);
    t.equal(pgid, pid, 'new process group whose id is the leader pid');
    t.equal(sid, r.pid, 'in the supervisor\'s session');
    t.not(pgid, r.pid);
  });

  t.test('the payload starts with no signal ignored or blocked', async t => {
    // The supervisor ignores SIGPIPE and blocks its cancel signals, and starts
    // the payload in its own memory (a vfork); the payload still gets the
    // defaults. grep is exec'd directly, so these lines are the payload's own.
    // (That the supervisor keeps its own mask is what the cancel tests show.)
    const r = await runJob(t, { argv: ['grep', '-E', '^Sig(Ign|Blk):', '/proc/self/status'] });
    t.equal(r.logText, 'SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n');
  });

  t.test('the lock is held while stepd runs and free after it exits', async t => {
    let heldDuring: boolean | undefined;
    const r = await runJob(t, {
      argv: ['sh', '-c', 'echo started > started; exec sleep 1000'],
      during: async ({ child, dir, lockPath }) => {
        await waitFor(() => fs.existsSync(path.join(dir, 'started')), 'job start');
        const fd = fs.openSync(lockPath, 'r+');
        try {
          heldDuring = flockExclusive(fd);
        } finally {
          fs.closeSync(fd);
        }
        child.kill('SIGUSR1');
      },
    });
    t.equal(heldDuring, false, 'another open file description cannot take the lock');
    const fd = fs.openSync(path.join(r.dir, '7.lock'), 'r+');
    t.teardown(() => fs.closeSync(fd));
    t.equal(flockExclusive(fd), true, 'free once stepd is gone');
  });

  t.test('cancel by signal: SIGUSR1, SIGTERM, SIGINT', async t => {
    for (const sig of ['SIGUSR1', 'SIGTERM', 'SIGINT'] as const) {
      const r = await runJob(t, {
        argv: ['sh', '-c', 'echo started > started; exec sleep 1000'],
        during: async ({ child, dir }) => {
          await waitFor(() => fs.existsSync(path.join(dir, 'started')), 'job start');
          child.kill(sig);
        },
      });
      t.equal(r.code, 0, `${sig}: stepd exits 0`);
      t.match(r.result, { state: 'CANCELLED', exit_code: 130, error: null }, `${sig}: cancelled`);
      t.ok(r.elapsedMs < 5000, `${sig}: promptly`);
    }
  });

  t.test('cancel by marker file', async t => {
    const r = await runJob(t, {
      argv: ['sh', '-c', 'echo started > started; exec sleep 1000'],
      during: async ({ dir }) => {
        await waitFor(() => fs.existsSync(path.join(dir, 'started')), 'job start');
        fs.writeFileSync(path.join(dir, '7.cancel'), 'true\n');
      },
    });
    t.match(r.result, { state: 'CANCELLED', exit_code: 130, error: null });
  });

  t.test('a cancel marker present before the start: nothing runs', async t => {
    const r = await runJob(t, { argv: ['sh', '-c', 'echo ran > ran; echo ran'], cancelBefore: true });
    t.equal(r.code, 0);
    t.match(r.result, { state: 'CANCELLED', exit_code: 130, error: null });
    t.notOk(fs.existsSync(path.join(r.dir, 'ran')), 'the command did not run');
    t.equal(r.logText, '');
  });

  t.test('time limit: TIMED_OUT 124 after the limit', async t => {
    const r = await runJob(t, { argv: ['sleep', '1000'], timeLimit: 1 });
    t.equal(r.code, 0);
    t.match(r.result, { state: 'TIMED_OUT', exit_code: 124, error: null });
    t.ok(r.elapsedMs >= 1000, `not before the limit (${r.elapsedMs} ms)`);
    t.ok(r.elapsedMs < 5000, `soon after it (${r.elapsedMs} ms)`);

    const quick = await runJob(t, { argv: ['true'], timeLimit: 60 });
    t.match(quick.result, { state: 'COMPLETED', exit_code: 0 }, 'a job within its limit completes');
  });

  t.test('a limit file beside the cancel marker changes the time limit of the running job (xlurm update -t)', async t => {
    const r = await runJob(t, {
      argv: ['bash', '-c', 'echo started > started; sleep 1000'], timeLimit: 3600,
      during: async ({ dir }) => {
        await waitFor(() => fs.existsSync(path.join(dir, 'started')), 'job start');
        // Not a whole number: ignored. Then written as the daemon does: a temporary file renamed over it.
        fs.writeFileSync(path.join(dir, '7.limit'), '1x\n');
        await delay(200);
        fs.writeFileSync(path.join(dir, '7.limit.tmp'), '1\n');
        fs.renameSync(path.join(dir, '7.limit.tmp'), path.join(dir, '7.limit'));
      },
    });
    t.match(r.result, { state: 'TIMED_OUT', exit_code: 124, error: null });
    t.ok(r.elapsedMs < 10000, `ended by the new limit (${r.elapsedMs} ms)`);
  });

  t.test('SIGTERM ignored by the job: SIGKILL after the 1 s grace', async t => {
    const r = await runJob(t, {
      argv: ['bash', '-c', 'trap "" TERM; echo started > started; sleep 1000; echo survived'],
      during: async ({ child, dir }) => {
        await waitFor(() => fs.existsSync(path.join(dir, 'started')), 'job start');
        child.kill('SIGTERM');
      },
    });
    t.match(r.result, { state: 'CANCELLED', exit_code: 130 });
    t.ok(r.elapsedMs >= 1000, `escalation waited for the grace period (${r.elapsedMs} ms)`);
    t.notMatch(r.logText, /survived/);
  });

  t.test('the grace comes from the spec: a job that traps TERM lives on through it, then dies by SIGKILL', async t => {
    let termAt = 0;
    const r = await runJob(t, {
      argv: ['bash', '-c', 'trap "echo term" TERM; echo started > started; while :; do sleep 0.05; done; echo survived'],
      killGrace: 2,
      during: async ({ child, dir }) => {
        await waitFor(() => fs.existsSync(path.join(dir, 'started')), 'job start');
        termAt = Date.now();
        child.kill('SIGTERM');
      },
    });
    const waited = Date.now() - termAt;
    t.match(r.result, { state: 'CANCELLED', exit_code: 130 });
    t.match(r.logText, /^term$/m, 'it was sent SIGTERM and kept running');
    t.notMatch(r.logText, /survived/, 'it never got past its loop: killed');
    t.ok(waited >= 2000, `SIGKILL only after the 2 s grace (${waited} ms)`);
  });

  t.test('background descendants are killed and reaped when the leader exits', async t => {
    // The leader starts a grandchild that ignores SIGTERM (and its sleep), waits until both
    // pids are written, and exits 0 right away.
    const script = [
      `bash -c 'trap "" TERM; echo $$ > inner.pid; sleep 1000 & echo $! > sleep.pid; wait' &`,
      'while [ ! -s sleep.pid ]; do :; done',
      'exit 0',
    ].join('\n');
    const r = await runJob(t, { argv: ['bash', '-c', script] });
    t.match(r.result, { state: 'COMPLETED', exit_code: 0 });
    const inner = Number(fs.readFileSync(path.join(r.dir, 'inner.pid'), 'utf8'));
    const sleeper = Number(fs.readFileSync(path.join(r.dir, 'sleep.pid'), 'utf8'));
    t.ok(inner > 0 && sleeper > 0);
    // stepd reaped them before exiting, so they should already be gone; poll to be fair.
    await waitFor(() => !alive(inner) && !alive(sleeper), 'grandchildren to disappear', 5000);
    t.pass('grandchildren are gone');
  });

  // docs/behaviour.md §24.3, §24.6: the payload joins the job's cgroups before exec, and
  // everything left in them dies with the job, also what left its process group.
  const unified = '/sys/fs/cgroup/unified';
  const cgroupSkip = peerSkip(!isRoot ? 'needs root' : !fs.existsSync(path.join(unified, 'cgroup.procs')) ? `no unified cgroup hierarchy at ${unified}` : false);
  t.test('as root: the payload is in its cgroup from its first instruction; a setsid descendant dies with the job', { skip: cgroupSkip }, async t => {
    const cg = path.join(unified, `xlurm-stepd-test-${process.pid}`);
    fs.mkdirSync(cg);
    t.teardown(() => { try { fs.writeFileSync(path.join(cg, 'cgroup.kill'), '1'); } catch { /* gone */ } try { fs.rmdirSync(cg); } catch { /* gone */ } });
    const script = [
      'cat /proc/self/cgroup',
      `setsid bash -c 'echo $$ > escaped.pid; exec sleep 1000' < /dev/null > /dev/null 2>&1 &`,
      'while [ ! -s escaped.pid ]; do :; done',
      'exit 0',
    ].join('\n');
    const kill = fs.existsSync(path.join(cg, 'cgroup.kill')) ? path.join(cg, 'cgroup.kill') : undefined;
    const r = await runJob(t, { argv: ['bash', '-c', script], cgroups: [cg], ...(kill ? { cgroupKill: kill } : {}) });
    t.match(r.result, { state: 'COMPLETED', exit_code: 0 });
    t.match(r.logText, new RegExp(`^0::/${path.basename(cg)}$`, 'm'), 'the payload\'s own cgroup');
    const escaped = Number(fs.readFileSync(path.join(r.dir, 'escaped.pid'), 'utf8'));
    t.ok(escaped > 0);
    t.notOk(alive(escaped), 'the setsid descendant is gone once the supervisor exits');
    t.notOk(fs.existsSync(cg), 'the emptied cgroup is removed by the supervisor');
    t.type(r.result!.cpu_seconds, 'number', 'its CPU time, measured before (unified cpu.stat)');
  });

  t.test('as root: a cgroup that cannot be joined fails the job closed, nothing runs', { skip: isRoot ? false : peerSkip('needs root') }, async t => {
    const r = await runJob(t, { argv: ['sh', '-c', 'echo ran'], cgroups: ['/nonexistent-xlurm-cgroup'] });
    t.match(r.result, { state: 'FAILED', exit_code: 1, error: "cannot enforce the job's limits: cannot join /nonexistent-xlurm-cgroup: No such file or directory" });
    t.notMatch(r.logText, /ran/);
  });

  t.test('identity checks', async t => {
    const other = isRoot ? 65534 : 0;
    const r = await runJob(t, { argv: ['true'], uid: other, gid: other, owner: 'whoever' });
    t.match(r.result, { state: 'FAILED', exit_code: 1, error: "executor cannot assume the submitting user's identity" });

  });

  t.test('as root: the job gets exactly the groups in the spec (the daemon resolved them; no lookup here)', { skip: !isRoot && peerSkip('needs root') }, async t => {
    const r = await runJob(t, {
      argv: ['sh', '-c', 'id -G; grep -E "^Groups:" /proc/self/status'],
      switchUser: true, uid: 65534, gid: 65534, owner: 'whatever-name', groups: [65534, 4, 1], cwd: '/',
    });
    t.match(r.result, { state: 'COMPLETED', exit_code: 0 });
    t.match(r.logText, /^Groups:\t1 4 65534 ?$/m, 'setgroups(2) got the spec\'s list');
  });

  t.test('as root: no NSS module maps into the supervisor (the daemon resolves the account)', { skip: !isRoot && peerSkip('needs root') }, async t => {
    const nobody = accountByUid(65534);
    if (!nobody) { skip(t, 'no account with uid 65534'); return; }
    let maps = '';
    const r = await runJob(t, {
      argv: ['sh', '-c', 'echo started; exec sleep 1000'],
      switchUser: true, uid: 65534, gid: 65534, owner: nobody.name, cwd: '/',
      during: async ({ child, dir }) => {
        await waitFor(() => fs.readFileSync(path.join(dir, '7.log'), 'utf8').includes('started'), 'job start');
        maps = fs.readFileSync(`/proc/${child.pid}/maps`, 'utf8');
        child.kill('SIGUSR1');
      },
    });
    t.match(r.result, { state: 'CANCELLED' });
    t.match(maps, /xlurm-stepd/, 'the maps were read');
    t.notMatch(maps, /libnss_/, 'no NSS module in the supervisor');
  });

  t.test('as root: runs as the owner with groups, saved ids and no_new_privs', { skip: !isRoot && peerSkip('needs root') }, async t => {
    const nobody = accountByUid(65534);
    if (!nobody) { skip(t, 'no account with uid 65534'); return; }
    const r = await runJob(t, {
      argv: ['sh', '-c', 'id -u; id -g; id -G; grep -E "^(Uid|Gid|Groups|NoNewPrivs):" /proc/self/status'],
      switchUser: true, uid: 65534, gid: 65534, owner: nobody.name, cwd: '/',
    });
    t.match(r.result, { state: 'COMPLETED', exit_code: 0 });
    const lines = r.logText.split('\n');
    t.equal(lines[0], '65534', 'id -u');
    t.equal(lines[1], '65534', 'id -g');
    t.equal(lines[2], '65534', 'id -G: only the owner\'s groups');
    t.match(r.logText, /^Uid:\t65534\t65534\t65534\t65534$/m, 'real, effective, saved and fs uid');
    t.match(r.logText, /^Gid:\t65534\t65534\t65534\t65534$/m, 'real, effective, saved and fs gid');
    t.match(r.logText, /^Groups:\t65534 ?$/m);
    t.match(r.logText, /^NoNewPrivs:\t1$/m, 'no_new_privs');

    // chdir happens after the identity change: a directory only root can enter fails.
    const privateDir = path.join(t.testdirName, 'private'); // testdir exists: runJob made it
    fs.mkdirSync(privateDir, { mode: 0o700, recursive: true });
    fs.chmodSync(privateDir, 0o700);
    const denied = await runJob(t, { argv: ['true'], switchUser: true, uid: 65534, gid: 65534, owner: nobody.name, cwd: privateDir });
    t.match(denied.result, { state: 'FAILED', exit_code: 1, error: 'cannot execute true: Permission denied' });
  });

  t.test('a full disk: the result waits for space, keeps the lock, and keeps the end time', { skip: !isRoot && peerSkip('needs root (mount -t tmpfs)') }, async t => {
    const m = mountTmpfs(t, 1024 * 1024);
    if (m.why !== undefined) { peerMissing(t, m.why); return; }
    if (!fs.existsSync(t.testdirName)) t.testdir();
    const go = path.join(t.testdirName, 'full-go');
    let filler = '';
    let freedAt = 0;
    const r = await runJob(t, {
      dir: path.join(m.dir, 'job'),
      argv: ['sh', '-c', `while [ ! -e ${go} ]; do sleep 0.02; done; exit 3`],
      during: async ({ child, lockPath }) => {
        filler = fill(m.dir!);
        fs.writeFileSync(go, '');
        // The payload exits now; the result cannot be written. stepd must wait
        // (alive, lock held, no result) rather than exit without one.
        const until = Date.now() + 1500;
        while (Date.now() < until) {
          if (child.exitCode !== null || child.signalCode !== null) { t.fail(`stepd exited (${child.exitCode}) while the disk was full`); return; }
          await delay(50);
        }
        const probe = fs.openSync(lockPath, 'r+');
        t.equal(flockExclusive(probe), false, 'the lock is still held');
        fs.closeSync(probe);
        t.notOk(fs.existsSync(path.join(m.dir!, 'job', '7.result')));
        freedAt = Math.floor(Date.now() / 1000);
        fs.unlinkSync(filler);
      },
    });
    t.equal(r.code, 0, 'stepd exits 0 once the result is written');
    t.match(r.result, { state: 'FAILED', exit_code: 3, error: null });
    t.ok(r.result!.finished_at <= freedAt, 'finished_at is when the job ended, not when there was space again');
  });

  t.test('malformed input', async t => {
    const garbage = await runJob(t, { argv: [], rawSpec: Buffer.from('not a spec') });
    t.equal(garbage.code, 1);
    t.equal(garbage.logText, 'xlurm: invalid job spec\n');
    t.equal(garbage.result, null, 'no result without a result path');

    // The result path was readable, the rest is not: a FAILED result is still written.
    const half = await runJob(t, {
      argv: [],
      rawSpec: nul(['XLURM-STEPD-4', '7', path.join(t.testdirName, `job-${jobSeq + 1}`, '7.result'), '/c', 'not-a-uid']),
    });
    t.equal(half.code, 1);
    t.equal(half.logText, 'xlurm: invalid job spec\n');
    t.match(half.result, { state: 'FAILED', exit_code: 1, error: 'invalid job spec' });

    const old = buildSpec('/tmp', { argv: ['true'] }).toString('latin1').replace('XLURM-STEPD-4', 'XLURM-STEPD-3');
    t.equal((await runJob(t, { argv: [], rawSpec: Buffer.from(old, 'latin1') })).code, 1, 'the previous format (no cgroups) is refused');
    const trailing = await runJob(t, { argv: [], rawSpec: Buffer.concat([buildSpec('/tmp', { argv: ['true'] }), Buffer.from('x')]) });
    t.equal(trailing.code, 1, 'bytes after the last string are refused');
    const noArgv = await runJob(t, { argv: [] });
    t.equal(noArgv.code, 1, 'argc must be at least 1');
    const badEnv = await runJob(t, { argv: ['true'], env: ['NOEQUALS'] });
    t.equal(badEnv.code, 1, 'env entries are KEY=VALUE');

    const noLock = await runJob(t, { argv: ['true'], noLock: true });
    t.equal(noLock.code, 1);
    t.equal(noLock.logText, 'xlurm: invalid worker lock descriptor\n');
    t.equal(noLock.result, null);

    const args = await runJob(t, { argv: ['true'], args: ['7'] });
    t.equal(args.code, 1);
    t.equal(args.logText, 'xlurm: invalid worker arguments\n');
  });
}
