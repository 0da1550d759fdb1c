/**
 * The fallback start path: the daemon spawns `xlurm-stepd` itself. Used only while no launcher
 * runs (it could not be started, or went away less than a second ago; see supervisors.ts) and
 * for job ids the launcher's protocol cannot carry. It answers exactly like the launcher
 * (LaunchCallbacks): onSpawned once (a pid, or an error: nothing was started), then onExit once
 * the supervisor is reaped.
 *
 * posix_spawn from the addon (a vfork: no copy of the daemon's page tables, a few times cheaper
 * than child_process.spawn, which forks) where pidfds exist; child_process otherwise.
 */
import { spawn } from 'node:child_process';
import { canSpawnSupervisor, spawnSupervisorAsync } from '@xlurm/native';
import type { LaunchCallbacks } from './launcher';

/** How the path that started a supervisor signals and releases it. */
export interface StartedSupervisor {
  /** Deliver a signal (one sent before the pid is known is delivered once it is). */
  signal(sig: NodeJS.Signals): void;
  /** Let the daemon exit while the supervisor runs on. */
  unref(): void;
}

const nativeSpawn = canSpawnSupervisor();

/**
 * Spawn the supervisor on fds 0-3 (copied before this returns: the caller closes its own), in
 * a new session, with an empty environment and cwd "/". Throws when it cannot even be tried
 * (no descriptor to copy the fds into); undefined when spawn(2) failed at once, which
 * onSpawned reports on a later tick.
 */
export function spawnDirect(stepd: string, fds: [number, number, number, number], cb: LaunchCallbacks): StartedSupervisor | undefined {
  if (nativeSpawn) {
    let pid = 0;
    let exited = false;
    let pendingSignal: NodeJS.Signals | undefined;
    const signal = (sig: NodeJS.Signals) => { if (exited) return; if (pid) process.kill(pid, sig); else pendingSignal = sig; };
    // posix_spawn runs on the thread pool.
    spawnSupervisorAsync(stepd, fds, (err, spawned) => {
      if (err || !spawned) { cb.onSpawned(err ?? new Error('no pid'), 0); return; }
      pid = spawned;
      cb.onSpawned(null, pid);
      if (pendingSignal) signal(pendingSignal);
    }, () => { exited = true; cb.onExit(); });
    return { signal, unref: () => undefined };
  }
  const cp = spawn(stepd, [], { stdio: fds, detached: true, env: {}, cwd: '/' });
  let answered = false;
  // First, before anything can throw: a failed spawn(2) (EMFILE, ENOENT)
  // is reported by an 'error' event, which must never go unhandled. One
  // after a successful spawn (a failed kill) is not a failed start.
  cp.on('error', (e) => { if (!answered) { answered = true; cb.onSpawned(e, 0); } });
  if (cp.pid === undefined) return undefined;
  answered = true;
  cp.once('exit', () => cb.onExit());
  const started: StartedSupervisor = { signal: (sig) => { cp.kill(sig); }, unref: () => cp.unref() };
  cb.onSpawned(null, cp.pid);
  return started;
}
