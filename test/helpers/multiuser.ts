/**
 * Multi-user runs (test/multiuser): a root daemon, and clients and jobs as
 * the real `nobody` (65534) and `daemon` (1) accounts. No account is created.
 *
 * Those accounts must be able to execute the built commands. When this
 * checkout is not readable by `nobody` (a home directory of mode 0700, say),
 * the runtime tree is installed once into a world-readable temporary PREFIX
 * with `./install.sh --no-build --prefix` and everything runs from there;
 * parallel test files share that one install (lock directory + atomic
 * rename). `XLURM_TEST_INSTALL=1` forces the install path.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI_BIN, DAEMON_MAIN, IS_ROOT, ROOT } from './env';
import { Daemon, nodeCommand, runProcess, startDaemon, type DaemonOpts, type RunOpts, type RunResult } from './daemon';
import { pidAlive, waitFor } from './wait';
import { peerSkip, type Scope as Tap } from './tap';


/** Why a multi-user test is skipped, or false when it runs. */
export const MULTIUSER_SKIP: string | false = IS_ROOT ? false
  : peerSkip('multi-user tests run only as root (they run clients and jobs as the real nobody and daemon accounts)');

export interface Account { uid: number; gid: number; name: string }

/** An existing account, from the system's own `id` (never created). */
export function account(name: string): Account {
  const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g'), name };
}

let cached: { nobody: Account; daemon: Account } | undefined;
/** `nobody` (uid 65534) and `daemon` (uid 1), checked to be what the tests assume. */
export function accounts(): { nobody: Account; daemon: Account } {
  if (cached) return cached;
  const nobody = account('nobody');
  const daemon = account('daemon');
  if (nobody.uid !== 65534) throw new Error(`expected nobody to have uid 65534, found ${nobody.uid}`);
  if (daemon.uid !== 1) throw new Error(`expected daemon to have uid 1, found ${daemon.uid}`);
  cached = { nobody, daemon };
  return cached;
}

/** Spawn options that run a process as `a` (libuv drops supplementary groups). */
export function as(a: Account, extra: RunOpts = {}): RunOpts {
  return { ...extra, uid: a.uid, gid: a.gid };
}

// ---------------------------------------------------------------------------
// The runtime: checkout or a shared temporary install.

export interface Runtime { cliBin: string; daemonMain: string; stepd: string; installed: boolean }

/** Can uid 65534 load the CLI and the daemon (with its native addon and SQLite) from `rt`? */
function usableByNobody(rt: Runtime): string | undefined {
  const code = `require(${JSON.stringify(path.join(rt.cliBin, '..', 'dist', 'main.js'))});` +
    `require(${JSON.stringify(rt.daemonMain)});` +
    `require('fs').accessSync(${JSON.stringify(rt.stepd)}, require('fs').constants.X_OK);`;
  const r = spawnSync(...nodeCommand(['-e', code], 65534), { uid: 65534, gid: 65534, cwd: '/', encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
  return r.status === 0 ? undefined : (r.stderr || r.error?.message || `exit ${r.status}`).split('\n').slice(0, 3).join(' ');
}

const CHECKOUT: Runtime = {
  cliBin: CLI_BIN, daemonMain: DAEMON_MAIN, stepd: path.join(ROOT, 'native', 'build', 'Release', 'xlurm-stepd'), installed: false,
};

function installedAt(prefix: string): Runtime {
  const lib = path.join(prefix, 'lib', 'xlurm');
  return {
    cliBin: path.join(lib, 'packages', 'cli', 'bin'),
    daemonMain: path.join(lib, 'packages', 'daemon', 'dist', 'main.js'),
    stepd: path.join(lib, 'native', 'build', 'Release', 'xlurm-stepd'),
    installed: true,
  };
}

/** Changes whenever the built outputs change, so a stale install is never used. */
function buildStamp(): string {
  const files = [DAEMON_MAIN, path.join(CLI_BIN, '..', 'dist', 'main.js'), CHECKOUT.stepd,
    path.join(ROOT, 'native', 'build', 'Release', 'xlurm_native.node')];
  const h = crypto.createHash('sha256').update(ROOT);
  for (const f of files) h.update(`${f}:${fs.statSync(f).mtimeMs}`);
  return h.digest('hex').slice(0, 16);
}

/**
 * One install per build, shared by parallel test files: the first file to
 * create the lock directory installs into a staging prefix and renames it
 * into place; the others wait for the prefix to appear. A lock left by a
 * dead installer is taken over.
 */
async function sharedInstall(): Promise<Runtime> {
  const prefix = path.join(os.tmpdir(), `xlurm-multiuser-${buildStamp()}`);
  const lock = `${prefix}.lock`;
  const ready = () => fs.existsSync(path.join(prefix, 'bin', 'xlurm'));
  const lockOwner = () => { try { return Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8')); } catch { return NaN; } };
  for (;;) {
    if (ready()) return installedAt(prefix);
    try {
      fs.mkdirSync(lock);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      // Someone else installs: wait for the prefix, or for their lock to go (or die with them).
      await waitFor(() => {
        if (ready() || !fs.existsSync(lock)) return true;
        const owner = lockOwner();
        if (Number.isInteger(owner) && !pidAlive(owner)) { fs.rmSync(lock, { recursive: true, force: true }); return true; }
        return false;
      }, { timeout: 600000, interval: 200, what: `the shared install in ${prefix}` });
      continue;
    }
    try {
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      if (ready()) continue;
      const stage = `${prefix}.stage.${process.pid}`;
      fs.rmSync(stage, { recursive: true, force: true });
      fs.mkdirSync(stage);
      fs.chmodSync(stage, 0o755);
      try {
        // Programs only: no systemd unit, and the settings file inside the prefix.
        execFileSync(path.join(ROOT, 'install.sh'), ['--no-build', '--no-systemd', '--prefix', stage], {
          cwd: ROOT, stdio: 'pipe', env: { ...process.env, XLURM_ENV_FILE: path.join(stage, 'etc', 'xlurm') },
        });
      } catch (err) {
        fs.rmSync(stage, { recursive: true, force: true });
        const x = err as { stderr?: Buffer; message: string };
        throw new Error(`install.sh --no-build --prefix failed: ${x.stderr?.toString() || x.message}`);
      }
      fs.renameSync(stage, prefix); // atomic: the prefix appears complete or not at all
      removeStaleInstalls(prefix);
    } finally {
      fs.rmSync(lock, { recursive: true, force: true });
    }
  }
}

/** Installs of earlier builds, untouched for a day, are removed (best effort). */
function removeStaleInstalls(keep: string): void {
  const dayAgo = Date.now() - 24 * 3600 * 1000;
  for (const name of fs.readdirSync(path.dirname(keep))) {
    const p = path.join(path.dirname(keep), name);
    if (!/^xlurm-multiuser-[0-9a-f]{16}$/.test(name) || p === keep) continue;
    try { if (fs.statSync(p).mtimeMs < dayAgo) fs.rmSync(p, { recursive: true, force: true }); } catch { /* gone */ }
  }
}

let runtimePromise: Promise<Runtime> | undefined;

/** Where nobody and daemon can run xlurm from: this checkout if they can read it, else an install. */
export function runtime(): Promise<Runtime> {
  runtimePromise ??= (async () => {
    const force = process.env.XLURM_TEST_INSTALL === '1';
    if (!force && !usableByNobody(CHECKOUT)) return CHECKOUT;
    const rt = await sharedInstall();
    const why = usableByNobody(rt);
    if (why) throw new Error(`the installed runtime is not usable by nobody either: ${why}`);
    return rt;
  })();
  return runtimePromise;
}

// ---------------------------------------------------------------------------
// Directories and daemons.

/** A temporary directory with `mode` (mkdtemp makes 0700), removed at teardown. */
export function sharedDir(t: Tap, mode: number, prefix = 'xlmu'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.chmodSync(dir, mode);
  return dir;
}

/** A job working directory every account can enter and write (0777). */
export function workDir(t: Tap): string {
  return sharedDir(t, 0o777, 'xlmu-work');
}

/**
 * A state directory for a root daemon: under root-owned ancestors that are not
 * writable by others (/tmp is sticky), in a parent other users can search.
 */
export function rootHome(t: Tap): string {
  return path.join(sharedDir(t, 0o755, 'xlmu-home'), 'home');
}

/** A root daemon that every account can reach; clients run from the runtime. */
export async function rootDaemon(t: Tap, opts: DaemonOpts = {}): Promise<Daemon> {
  const d = await startDaemon(t, { home: rootHome(t), runtime: await runtime(), ...opts });
  t.teardown(() => cancelActive(d)); // runs before the stop: no job outlives its test
  return d;
}

/** Cancel every pending or running job (as root) and wait until none is left. */
export async function cancelActive(d: Daemon): Promise<void> {
  if (!(await d.ping())) return;
  const active = (await d.jobs(false)).map((j) => j.id as number);
  for (const id of active) await d.request('cancel', { id });
  for (const id of active) await d.waitState(id, ['CANCELLED', 'COMPLETED', 'FAILED', 'TIMED_OUT']);
}

/** A shell loop that ends once `file` exists (jobs that run until the test lets them go). */
export const untilExists = (file: string) => `while [ ! -e ${file} ]; do sleep 0.02; done`;

/**
 * Run a CLI as `a` with exactly these supplementary groups and effective gid
 * (libuv's spawn would drop the groups): a root node process sets them, then
 * loads the command.
 */
export async function runWithGroups(d: Daemon, a: Account, gid: number, groups: number[], bin: string, args: string[], opts: RunOpts = {}): Promise<RunResult> {
  const code = 'const [, uid, gid, groups, bin, ...rest] = process.argv;' +
    'process.setgroups(groups ? groups.split(",").map(Number) : []); process.setgid(Number(gid)); process.setuid(Number(uid));' +
    'process.argv = [process.argv[0], bin, ...rest]; require(bin);';
  // Started as root but ends as `a`: no test-runner instrumentation either (see nodeCommand).
  return runProcess(...nodeCommand(['-e', code, String(a.uid), String(gid), groups.join(','), path.join(d.cliBin, bin), ...args], a.uid), {
    env: { ...d.env, ...(opts.env ?? {}) }, cwd: opts.cwd ?? d.defaultCwd(), input: opts.input, timeout: opts.timeout,
  });
}

/** One raw request frame sent from a process running as `a`; resolves to the decoded reply. */
export async function rawRequestAs(a: Account, socket: string, frame: string): Promise<any> {
  const code = 'const s = require("net").createConnection(process.argv[1]); const out = [];' +
    's.on("connect", () => s.write(process.argv[2])); s.on("data", (b) => out.push(b));' +
    's.on("error", (e) => { console.error(e.message); process.exit(3); });' +
    's.on("close", () => process.stdout.write(Buffer.concat(out).toString().split("\\n")[0]));';
  const r = await runProcess(...nodeCommand(['-e', code, socket, frame], a.uid), { uid: a.uid, gid: a.gid, cwd: '/', env: { PATH: '/usr/bin:/bin' } });
  if (r.code !== 0) throw new Error(`raw request as ${a.name} failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Compile a small C program (or shared library with `-shared`) into `dir`. */
export function compile(dir: string, name: string, source: string, flags: string[] = []): string {
  const src = path.join(dir, `${name}.c`);
  const out = path.join(dir, name);
  fs.writeFileSync(src, source);
  execFileSync('cc', ['-O2', '-Wall', ...flags, '-o', out, src], { stdio: 'pipe' });
  fs.chmodSync(out, 0o755);
  return out;
}

/** Spawn a long-running helper process; killed at teardown. */
export function background(t: Tap, cmd: string, args: string[], opts: { uid?: number; gid?: number; env?: Record<string, string> } = {}) {
  const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'], cwd: '/' });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => { out += b.toString(); });
  child.stderr!.on('data', (b: Buffer) => { out += b.toString(); });
  const exited = new Promise((r) => child.once('exit', r));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await exited; }
  });
  return { child, output: () => out, exited };
}
