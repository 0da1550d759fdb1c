/**
 * Starting and restarting the background daemon (docs/behaviour.md §2.2.1,
 * §2.2.4), and running it (or `clean`) in this process. The daemon is the
 * @xlurm/daemon package's entry script; it exports
 * `daemonMain(argv): Promise<number>`.
 */
import * as fs from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { initStateDir, statePaths } from '@xlurm/protocol';
import { request } from './client';
import { daemonArgv, type DaemonOptions } from './daemon-options';
import { CliError, osErrorText } from './errors';
import { sleep } from './sleep';

const POLL_MS = 50;
const LIMIT_MS = 45_000;

/** Path of the daemon's entry script (packages/daemon/dist/main.js). */
export function daemonEntry(): string {
  try {
    return require.resolve('@xlurm/daemon');
  } catch (e) {
    throw new CliError(`cannot find the xlurm daemon (@xlurm/daemon): ${(e as Error).message.split('\n')[0]}`);
  }
}

type DaemonModule = { daemonMain(argv: string[]): Promise<number> };

/** Run the daemon package's main in this process (`xlurm daemon`, `xlurm clean`). */
export async function runDaemonMain(argv: string[]): Promise<number> {
  const mod = require(daemonEntry()) as Partial<DaemonModule>;
  if (typeof mod.daemonMain !== 'function') throw new CliError('the xlurm daemon package does not export daemonMain');
  return mod.daemonMain(argv);
}

/** Rust's ExitStatus text: `exit status: 1`, `signal: 9 (SIGKILL)`. */
export function exitStatusText(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) {
    const { constants } = require('node:os') as typeof import('node:os');
    const n = (constants.signals as Record<string, number>)[signal];
    return n === undefined ? `signal: ${signal}` : `signal: ${n} (${signal})`;
  }
  return `exit status: ${code ?? 'unknown'}`;
}

async function answering(home: string): Promise<boolean> {
  try {
    await request('status', {}, { home, timeoutMs: 5000 });
    return true;
  } catch {
    return false;
  }
}

function asCli(e: unknown): CliError {
  return e instanceof CliError ? e : new CliError((e as Error).message);
}

/**
 * A daemon started in the background runs at nice 0, whatever the shell that
 * ran `xlurm start` (or install.sh) was niced to: every job is forked from it
 * and would inherit that nice, which no submitter asked for (`--nice` is a
 * place in the queue, not the process's nice; docs/behaviour.md §22.1). Only
 * root may lower a nice value; a non-root (development) daemon keeps its
 * user's. Set on this process just before the spawn, so the daemon inherits
 * 0 from its first instruction. Under systemd the unit's own `Nice=` rules.
 */
export function resetNice(
  euid: number = process.geteuid?.() ?? -1,
  setPriority: (priority: number) => void = (p) => (require('node:os') as typeof import('node:os')).setPriority(p),
): void {
  if (euid !== 0) return;
  try {
    setPriority(0);
  } catch {
    // Without CAP_SYS_NICE (a restricted root): the daemon starts at the inherited value.
  }
}

/** `xlurm start`: returns the line to print. */
export async function startDaemon(home: string, opts: DaemonOptions): Promise<string> {
  if (await answering(home)) return 'xlurm is already running';
  if (opts.maxRunning === 0) throw new CliError('max-running must be positive');
  try { initStateDir(home); } catch (e) { throw asCli(e); }
  const logPath = statePaths(home).daemonLog;
  let logFd: number;
  try {
    logFd = fs.openSync(logPath, 'a', 0o600);
  } catch (e) {
    throw new CliError(`cannot open ${logPath}: ${osErrorText(e)}`);
  }
  const entry = daemonEntry();
  const { spawn } = require('node:child_process') as typeof import('node:child_process');
  let child: ChildProcess;
  resetNice();
  try {
    child = spawn(process.execPath, [entry, 'daemon', ...daemonArgv(opts)], {
      env: { ...process.env, XLURM_HOME: home },
      detached: true, // setsid: the daemon outlives this terminal
      stdio: ['ignore', logFd, logFd],
    });
  } finally {
    fs.closeSync(logFd);
  }
  let exited: string | undefined;
  const gone = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => { exited = exitStatusText(code, signal); resolve(); });
    child.once('error', (err) => { exited ??= `cannot start: ${osErrorText(err)}`; resolve(); });
  });
  const deadline = Date.now() + LIMIT_MS;
  while (Date.now() < deadline) {
    if (exited !== undefined) throw new CliError(`daemon exited (${exited}); see ${logPath}`);
    if (await answering(home)) {
      child.unref();
      return 'xlurm started';
    }
    if (exited !== undefined) throw new CliError(`daemon exited (${exited}); see ${logPath}`);
    await sleep(POLL_MS);
  }
  child.kill('SIGKILL');
  await gone;
  throw new CliError(`daemon startup timed out; see ${logPath}`);
}

/** True once `daemon.lock` can be locked, i.e. no daemon holds it. */
export function daemonLockFree(home: string): boolean {
  const lockPath = statePaths(home).daemonLock;
  let fd: number;
  try {
    fd = fs.openSync(lockPath, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
  } catch (e) {
    throw new CliError(`cannot open ${lockPath}: ${osErrorText(e)}`);
  }
  try {
    const { flockExclusive } = require('@xlurm/native') as typeof import('@xlurm/native');
    return flockExclusive(fd);
  } finally {
    fs.closeSync(fd); // closing drops the lock we may have taken
  }
}

/** `xlurm restart`: stop (refused while jobs run), wait for the old daemon to let go, start. */
export async function restartDaemon(home: string, opts: DaemonOptions): Promise<string> {
  await request('restart', {}, { home });
  const deadline = Date.now() + LIMIT_MS;
  for (;;) {
    if (daemonLockFree(home)) break;
    if (Date.now() >= deadline) throw new CliError('daemon shutdown timed out; scheduler was stopped but not restarted');
    await sleep(POLL_MS);
  }
  return startDaemon(home, opts);
}
