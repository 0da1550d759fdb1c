// Extensions 28.1 and 28.11: the attacks on files root touches on a user's behalf.
// (a) a symlink swapped in while a tree is removed: by a concurrent swapper against removeTree,
//     and as `nobody` against a real daemon removing a slice job's share directory;
// (b) metrics_file through a planted link at the old predictable temporary name, and in a
//     directory others may write (refused at start and at reload, with 28.1's message);
// (c) `xlurm report --html FILE` where FILE is a link;
// (d) the retry line and the limit file never written through a link.
// In every case the victim, a root-owned file or directory outside, must survive unchanged.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { DAEMON_MAIN, IS_ROOT, baseEnv } from '../helpers/env';
import { runProcess, startDaemon, tempHome } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, untilExists, as, workDir } from '../helpers/multiuser';
import { sharingRootDaemon } from '../helpers/sharing-daemon';
import { waitFor } from '../helpers/wait';
import type { Tap } from '../helpers/tap';
import { SafeDir } from '../../packages/daemon/src/safe-fs';
import { writeAtomically } from '../../packages/daemon/src/accounting/metrics-file';
import { prepareRetry, writeLimit } from '../../packages/daemon/src/workflow';

/** A root-owned directory outside every tree, with content that must survive. */
function victimDir(t: Tap): string {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-victim-'));
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }));
  fs.chmodSync(base, 0o755);
  const v = path.join(base, 'victim');
  fs.mkdirSync(path.join(v, 'sub'), { recursive: true, mode: 0o755 });
  fs.writeFileSync(path.join(v, 'keep'), 'precious', { mode: 0o644 });
  fs.writeFileSync(path.join(v, 'sub', 'also'), 'precious', { mode: 0o644 });
  return v;
}

function victimIntact(t: Tap, v: string, what: string): void {
  t.same([fs.readFileSync(path.join(v, 'keep'), 'utf8'), fs.readFileSync(path.join(v, 'sub', 'also'), 'utf8')], ['precious', 'precious'], what);
}

/**
 * A process (as `uid`, when given) that swaps `<dir>/s<k>` for a link to `target` and back, one
 * after the other, until killed: the attack on a removal that walks by path. Ready once it has
 * swapped at least once.
 */
function swapper(t: Tap, dir: string, target: string, uid?: number): { proc: ChildProcess; ready: Promise<void> } {
  const code = `
    const fs = require('fs'), p = require('path');
    const [dir, target] = process.argv.slice(1);
    // Each state held a little while (up to 0.2 ms): a walker that saw s<k> as a directory and
    // goes on by its path then finds the link there for its next few steps.
    const hold = () => { const until = process.hrtime.bigint() + BigInt(Math.floor(Math.random() * 2e5)); while (process.hrtime.bigint() < until); };
    let told = false;
    for (let k = 0; ; k = (k + 1) % ${SWAPPED}) {
      const s = p.join(dir, 's' + k), aside = p.join(dir, 'aside' + k);
      try { fs.renameSync(s, aside); fs.symlinkSync(target, s); if (!told) { told = true; process.stdout.write('swapping\\n'); } } catch {}
      hold();
      try { fs.unlinkSync(s); } catch {}
      try { fs.renameSync(aside, s); } catch {}
    }`;
  const proc = spawn(process.execPath, ['-e', code, dir, target], { stdio: ['ignore', 'pipe', 'inherit'], ...(uid === undefined ? {} : { uid, gid: uid }) });
  t.teardown(() => { proc.kill('SIGKILL'); });
  const ready = new Promise<void>((resolve, reject) => {
    proc.stdout!.once('data', () => resolve());
    proc.once('exit', (c) => reject(new Error(`the swapper exited (${c}) before it swapped`)));
  });
  return { proc, ready };
}

/** How many subdirectories (s0, s1, …) the swapper swaps in turn. */
const SWAPPED = 10;

/** A tree of decoys (`width` directories of files) around the subdirectories s<k> that the swapper swaps. */
function populate(dir: string, width: number): void {
  for (let k = 0; k < SWAPPED; k++) {
    fs.mkdirSync(path.join(dir, `s${k}`, 'inner'), { recursive: true });
    fs.writeFileSync(path.join(dir, `s${k}`, 'inner', 'f'), 'x');
  }
  for (let i = 0; i < width; i++) {
    fs.mkdirSync(path.join(dir, `d${i}`, 'e'), { recursive: true });
    for (let k = 0; k < 4; k++) fs.writeFileSync(path.join(dir, `d${i}`, 'e', `f${k}`), 'decoy');
  }
}

t.test('(a) removeTree against a concurrent swapper: the victim survives every round', async (t) => {
  const victim = victimDir(t);
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-race-'));
  t.teardown(() => fs.rmSync(base, { recursive: true, force: true }));
  const tree = path.join(base, 'tree');
  const mid = path.join(tree, 'mid');
  fs.mkdirSync(mid, { recursive: true });
  populate(mid, 20);
  const { ready } = swapper(t, mid, victim);
  await ready;
  const d = SafeDir.open(base);
  t.teardown(() => d.close());
  let removed = 0;
  let failed = 0;
  for (let round = 0; round < 40; round++) {
    fs.mkdirSync(mid, { recursive: true });
    try { populate(mid, 20); } catch { /* the swapper has s aside: the rest is decoys enough */ }
    try { d.removeTree('tree'); removed++; } catch { failed++; }
    victimIntact(t, victim, `round ${round}`);
  }
  t.ok(removed + failed === 40, `${removed} removals completed, ${failed} failed with an error (either is allowed)`);
});

t.test("(a) as nobody, against a real daemon: a share directory's subdirectory swapped for a link to root's directory while the daemon removes it", { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const victim = victimDir(t);
  const d = await sharingRootDaemon(t, 'xlmu-race');
  const work = workDir(t);
  const go = path.join(work, 'go');
  const ready = path.join(work, 'ready');
  // The job fills its own share directory with decoys around `s`, then waits for the test.
  const script = 'dir=$(dirname "$CUDA_DEVICE_MEMORY_SHARED_CACHE"); cd "$dir" && ' +
    `for k in $(seq 0 ${SWAPPED - 1}); do mkdir -p s$k/inner && echo x > s$k/inner/f; done; ` +
    'for i in $(seq 0 300); do mkdir -p d$i/e && echo decoy > d$i/e/f; done; ' +
    `touch ${ready}; ${untilExists(go)}`;
  const id = await d.batch(script, ['--share', '4G,40%'], { ...as(nobody, { cwd: work }), env: { LD_PRELOAD: '' } });
  await d.waitState(id, 'RUNNING');
  await waitFor(async () => fs.existsSync(ready), { what: 'the job made its decoys' });
  const share = path.join(d.home, 'share', String(id));
  t.equal(fs.statSync(share).uid, nobody.uid, "the share directory is the job's user's");
  const { proc, ready: swapping } = swapper(t, share, victim, nobody.uid);
  await swapping;
  fs.writeFileSync(go, '');
  await d.waitState(id, 'COMPLETED');
  // The daemon removes it after the job's end: gone, or the removal failed with an error (logged).
  await waitFor(async () => !fs.existsSync(share) || /cannot remove its share files/.test(d.logTail()), { what: 'the share directory removed (or the removal refused)' });
  proc.kill('SIGKILL');
  victimIntact(t, victim, "root's directory outside survives the removal of nobody's share directory");
  t.equal(fs.statSync(victim).uid, 0);
});

t.test('(b) metrics_file: a link at the old predictable temporary name is neither written nor chmod\'ed', async (t) => {
  const base = t.testdir({ out: {}, v: 'secret' });
  const dir = path.join(base, 'out');
  fs.chmodSync(dir, 0o755);
  const victim = path.join(base, 'v');
  fs.chmodSync(victim, 0o600);
  const file = path.join(dir, 'xlurm.prom');
  // The old writer's names: `.<base>.<pid>.<n>.tmp`, opened with truncation, then fchmod 0644.
  for (let n = 1; n <= 20; n++) fs.symlinkSync(victim, path.join(dir, `.xlurm.prom.${process.pid}.${n}.tmp`));
  for (let n = 0; n < 5; n++) await writeAtomically(file, `# sample ${n}\n`);
  t.equal(fs.readFileSync(file, 'utf8'), '# sample 4\n');
  t.equal(fs.readFileSync(victim, 'utf8'), 'secret', 'the victim is not written');
  t.equal(fs.statSync(victim).mode & 0o777, 0o600, 'nor chmod\'ed');
  t.same(fs.readdirSync(dir).filter((f) => !/^\.xlurm\.prom\.\d+\.\d+\.tmp$/.test(f)), ['xlurm.prom'], 'no temporary file left');
});

t.test('(b) metrics_file in a directory others may write: the daemon does not start; a reload is refused', { skip: IS_ROOT ? false : 'the rule for root needs root' }, async (t) => {
  const base = t.testdir({ v: 'secret' });
  const victim = path.join(base, 'v');
  fs.chmodSync(victim, 0o600);
  const open = path.join(base, 'open');
  fs.mkdirSync(open, { mode: 0o777 });
  fs.chmodSync(open, 0o1777);
  fs.symlinkSync(victim, path.join(open, 'xlurm.prom'));
  const config = path.join(base, 'xlurm.toml');
  fs.writeFileSync(config, `[accounting]\nsample_interval = "1s"\nmetrics_file = "${path.join(open, 'xlurm.prom')}"\n`);
  const message = `accounting.metrics_file: ${open} must be owned by root and not writable by others`;
  const r = await runProcess(process.execPath, [DAEMON_MAIN, 'daemon', '--backend', 'none'], { env: baseEnv({ XLURM_HOME: tempHome(t), XLURM_CONFIG: config }) });
  t.equal(r.code, 1, 'the daemon does not start');
  t.equal(r.stderr, `xlurm: ${config}:3: ${message}\n`);
  t.equal(fs.readFileSync(victim, 'utf8'), 'secret');
  t.equal(fs.statSync(victim).mode & 0o777, 0o600);
  t.same(fs.readdirSync(open), ['xlurm.prom'], 'nothing made in the directory');

  // A daemon started with a good directory refuses a reload that names the open one, and serves on.
  const good = path.join(base, 'good');
  fs.mkdirSync(good, { mode: 0o755 });
  const goodConfig = path.join(base, 'good.toml');
  fs.writeFileSync(goodConfig, `[accounting]\nsample_interval = "1h"\nmetrics_file = "${path.join(good, 'xlurm.prom')}"\n`);
  const d = await startDaemon(t, { env: { XLURM_CONFIG: goodConfig } });
  fs.writeFileSync(goodConfig, `[accounting]\nsample_interval = "1h"\nmetrics_file = "${path.join(open, 'xlurm.prom')}"\n`);
  const rl = await d.run('xlurm', ['reload']);
  t.not(rl.code, 0, 'reload refused');
  t.match(rl.stderr, message);
  const check = await d.run('xlurm', ['config', 'check', goodConfig]);
  t.equal(check.code, 1, '`xlurm config check` reports it too');
  t.match(check.stderr, `xlurm: ${goodConfig}:3: ${message}\n`);
  t.ok(await d.ping(), 'the daemon keeps serving');
  t.equal(fs.readFileSync(victim, 'utf8'), 'secret');
});

t.test('(c) report --html FILE where FILE is a link: refused, the target untouched', async (t) => {
  const d = await startDaemon(t);
  const dir = t.testdir({ v: 'secret' });
  const victim = path.join(dir, 'v');
  fs.chmodSync(victim, 0o600);
  const link = path.join(dir, 'report.html');
  fs.symlinkSync(victim, link);
  const r = await d.run('xlurm', ['report', '--html', link]);
  t.not(r.code, 0);
  t.equal(r.stderr, `xlurm: cannot write ${link}: it is a symbolic link (not followed)\n`);
  t.equal(fs.readFileSync(victim, 'utf8'), 'secret');
  t.equal(fs.statSync(victim).mode & 0o777, 0o600);
  t.ok(fs.lstatSync(link).isSymbolicLink(), 'the link is left as it was');
  // A FIFO is refused without blocking; a plain file is written.
  const fifo = path.join(dir, 'fifo.html');
  await runProcess('mkfifo', [fifo]);
  const rf = await d.run('xlurm', ['report', '--html', fifo]);
  t.equal(rf.stderr, `xlurm: cannot write ${fifo}: not a regular file\n`);
  const ok = await d.run('xlurm', ['report', '--html', path.join(dir, 'ok.html')]);
  t.equal(ok.code, 0, ok.stderr);
  t.match(fs.readFileSync(path.join(dir, 'ok.html'), 'utf8'), /<html/i);
});

t.test('(d) the retry line and the limit file are never written through a link', async (t) => {
  const home = t.testdir({ jobs: {}, v: 'secret' });
  const victim = path.join(home, 'v');
  fs.chmodSync(victim, 0o600);
  fs.symlinkSync(victim, path.join(home, 'jobs', '7.log'));
  fs.symlinkSync(victim, path.join(home, 'jobs', '7.limit'));
  fs.symlinkSync(victim, path.join(home, 'jobs', '7.result'));
  const err = prepareRetry(home, 7, '[xlurm] retry 1 of 3 after exit 1\n');
  t.match(err, { code: 'ELOOP' }, 'the log under a link is refused');
  t.equal(fs.readFileSync(victim, 'utf8'), 'secret', 'nothing appended to the target');
  t.notOk(fs.existsSync(path.join(home, 'jobs', '7.result')), 'the link at the result is removed (the link, not its target)');
  t.notOk(fs.existsSync(path.join(home, 'jobs', '7.limit')), 'and at the limit');
  fs.symlinkSync(victim, path.join(home, 'jobs', '7.limit'));
  writeLimit(home, 7, 600);
  t.ok(fs.lstatSync(path.join(home, 'jobs', '7.limit')).isFile(), 'the limit replaces a link, never writes through it');
  t.equal(fs.readFileSync(path.join(home, 'jobs', '7.limit'), 'utf8'), '600\n');
  t.equal(fs.readFileSync(victim, 'utf8'), 'secret');
  t.equal(fs.statSync(victim).mode & 0o777, 0o600);
  t.same(fs.readdirSync(path.join(home, 'jobs')).sort(), ['7.limit', '7.log'], 'no temporary file left');
});
