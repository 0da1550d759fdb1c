/**
 * HCU health from Hygon's `hy-smi --healthcheck` (docs/behaviour.md §9.1-§9.3;
 * docs/driver-apis.md §6.4): rocm_smi has no health call, so the daemon runs the tool itself, as
 * Hygon's own device plugin does.
 *
 * * The tool is found once, at daemon start, from the daemon's environment:
 *   `XLURM_HCU_HEALTH_TOOL` (absolute; disables the search), else
 *   `/opt/dtk/.hyhal/bin/hy-smi`, else `hy-smi` in the daemon's PATH. A job's
 *   environment is never consulted. A tool that another user could replace
 *   is refused (untrustedBecause).
 * * Each probe runs it asynchronously (a child process; the event loop never
 *   waits) with a deadline; past it the whole process group is killed and the
 *   answer is a failure. Every failure (spawn error, timeout, non-zero exit,
 *   output without HCU rows) makes every HCU `unknown`: a failed health query
 *   never passes for healthy.
 * * It runs with an environment of its own (healthEnv), never the daemon's:
 *   a fixed system PATH, the C locale, and `LD_LIBRARY_PATH` = the directory
 *   the HCU backend loaded rocm_smi from, so the tool finds the same hyhal
 *   libraries without DTK's `env.sh` in the daemon's environment, and
 *   nothing an administrator's shell happened to export (LD_PRELOAD, a
 *   PATH with user directories) reaches a program run as root every poll.
 * * Rows look like `HCU[0]          : Bus Id : 0000:09:00.0         : Healthy`
 *   and are matched to rocm_smi devices by the `HCU[n]` index, as Hygon's
 *   plugin does. `Healthy` (any case) is healthy; any other word is not.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export const HEALTH_TOOL_ENV = 'XLURM_HCU_HEALTH_TOOL';
/** Searched before the daemon's PATH (docs/behaviour.md §9.2). */
export const HEALTH_TOOL_SEARCH: readonly string[] = ['/opt/dtk/.hyhal/bin/hy-smi'];
/** hy-smi answers in ~44 ms (Hygon's own figure); a hung one must not hold a probe longer. */
export const HEALTH_TIMEOUT_MS = 3000;
/** A healthcheck prints one line per device; more than this is not a healthcheck. */
const MAX_OUTPUT_BYTES = 1 << 20;
/** The call as named in errors ("<call>: <why>", "<call> timed out after N ms"). */
export const HEALTH_CALL = 'hy-smi --healthcheck';

/** The tool's whole PATH: system directories only (a directory another user can write never comes in). */
export const HEALTH_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The tool's environment: nothing from the daemon's. `libraryDir` is the
 * directory rocm_smi was loaded from (hyhal's lib directory, where the
 * tool's own libraries are); undefined: not known, no LD_LIBRARY_PATH.
 */
export function healthEnv(libraryDir: string | undefined): Record<string, string> {
  const env: Record<string, string> = { PATH: HEALTH_PATH, LC_ALL: 'C' };
  if (libraryDir !== undefined && path.isAbsolute(libraryDir)) env.LD_LIBRARY_PATH = libraryDir;
  return env;
}

export type Health = 'ok' | 'unhealthy';
export type HealthReport = { ok: true; health: Map<number, Health> } | { ok: false; error: string };

function isExecutableFile(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why the daemon must not run `tool`, or null. The daemon runs it every two
 * seconds with its own rights (root in production), so the file it runs, and
 * the directory that holds it, must belong to root or the daemon's account
 * and be writable by nobody else (a sticky directory such as /tmp is fine for
 * the latter).
 */
export function untrustedBecause(tool: string, euid = process.geteuid?.() ?? 0): string | null {
  const real = fs.realpathSync(tool);
  const file = fs.statSync(real);
  const dir = fs.statSync(path.dirname(real));
  const owners = new Set([0, euid]);
  if (!owners.has(file.uid) || (file.mode & 0o022) !== 0) return `${real} is writable by another user`;
  if (!owners.has(dir.uid) || ((dir.mode & 0o022) !== 0 && (dir.mode & 0o1000) === 0)) return `${path.dirname(real)} is writable by another user`;
  return null;
}

/** The health tool's absolute path (docs/behaviour.md §9.2); throws with the reason when there is none. */
export function findHealthTool(env: NodeJS.ProcessEnv): string {
  const override = env[HEALTH_TOOL_ENV];
  let found: string | undefined;
  if (override !== undefined && override !== '') {
    if (!path.isAbsolute(override)) throw new Error(`${HEALTH_TOOL_ENV} must be an absolute path: ${override}`);
    if (!isExecutableFile(override)) throw new Error(`${HEALTH_TOOL_ENV} is not an executable file: ${override}`);
    found = override;
  } else {
    // Relative PATH entries would depend on the daemon's working directory: ignored.
    const dirs = (env.PATH ?? '').split(':').filter((d) => path.isAbsolute(d));
    found = [...HEALTH_TOOL_SEARCH, ...dirs.map((d) => path.join(d, 'hy-smi'))].find(isExecutableFile);
    if (!found) {
      throw new Error(`health tool hy-smi not found (tried ${HEALTH_TOOL_SEARCH.join(', ')} and the daemon's PATH); set ${HEALTH_TOOL_ENV}`);
    }
  }
  const why = untrustedBecause(found);
  if (why) throw new Error(`health tool ${found} not used: ${why}`);
  return found;
}

const ROW = /^\s*HCU\[(\d+)\]\s*:\s*Bus Id\s*:\s*(\S+)\s*:\s*(\w+)/gm;

/** Device index → health, from the tool's output (a device listed twice counts as its worst row). */
export function parseHealthcheck(text: string): Map<number, Health> {
  const out = new Map<number, Health>();
  for (const m of text.matchAll(ROW)) {
    const id = Number(m[1]);
    const h: Health = m[3]!.toLowerCase() === 'healthy' ? 'ok' : 'unhealthy';
    if (out.get(id) !== 'unhealthy') out.set(id, h);
  }
  return out;
}

/**
 * Run `tool --healthcheck` once, off the event loop, within `timeoutMs`; never
 * rejects. `signal` aborts it (the daemon is stopping): the tool is killed.
 * The tool runs with healthEnv(libraryDir) only; in the C locale its status
 * words are the English ones.
 */
export function runHealthcheck(tool: string, libraryDir: string | undefined, timeoutMs: number, signal?: AbortSignal): Promise<HealthReport> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve({ ok: false, error: `${HEALTH_CALL}: aborted` });
      return;
    }
    let settled = false;
    const finish = (r: HealthReport) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(r);
    };
    const fail = (why: string) => finish({ ok: false, error: `${HEALTH_CALL}: ${why}` });
    const onAbort = () => {
      killGroup();
      fail('aborted');
    };
    // Its own process group (detached), so a timeout kills whatever it started too.
    const child = spawn(tool, ['--healthcheck'], {
      env: healthEnv(libraryDir), stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    const killGroup = () => {
      try { if (child.pid) process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
    };
    const timer = setTimeout(() => {
      killGroup();
      finish({ ok: false, error: `${HEALTH_CALL} timed out after ${timeoutMs} ms` });
    }, timeoutMs);
    signal?.addEventListener('abort', onAbort);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let bytes = 0;
    const collect = (into: Buffer[]) => (b: Buffer) => {
      bytes += b.length;
      if (bytes > MAX_OUTPUT_BYTES) {
        killGroup();
        fail(`output over ${MAX_OUTPUT_BYTES} bytes`);
        return;
      }
      into.push(b);
    };
    child.stdout!.on('data', collect(out));
    child.stderr!.on('data', collect(err));
    child.on('error', (e) => fail(e.message));
    child.on('close', (code, killedBy) => {
      if (killedBy) return fail(`killed by ${killedBy}`);
      if (code !== 0) {
        const first = Buffer.concat(err).toString().trim().split('\n')[0];
        return fail(`exit status ${code}${first ? `: ${first}` : ''}`);
      }
      const health = parseHealthcheck(Buffer.concat(out).toString());
      if (health.size === 0) return fail('no HCU rows in the output');
      finish({ ok: true, health });
    });
  });
}
