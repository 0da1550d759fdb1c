import * as path from 'node:path';

/** Default state directory of the shared (root) daemon. */
export const DEFAULT_HOME = '/var/lib/xlurm';

/** `$XLURM_HOME` resolved against the working directory, or the default. */
export function resolveHome(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const h = env.XLURM_HOME;
  return h ? path.resolve(cwd, h) : DEFAULT_HOME;
}

export interface StatePaths {
  home: string;
  socket: string;
  db: string;
  daemonLock: string;
  daemonLog: string;
  jobs: string;
}

/** Every path the daemon and clients derive from `$XLURM_HOME`. */
export function statePaths(home: string): StatePaths {
  return {
    home,
    socket: path.join(home, 'xlurm.sock'),
    db: path.join(home, 'xlurm.db'),
    daemonLock: path.join(home, 'daemon.lock'),
    daemonLog: path.join(home, 'daemon.log'),
    jobs: path.join(home, 'jobs'),
  };
}

/** Per-job files under `jobs/` (spec 7.1). */
export function jobPaths(home: string, id: number) {
  const base = path.join(home, 'jobs', String(id));
  return {
    log: `${base}.log`,
    lock: `${base}.lock`,
    result: `${base}.result`,
    cancel: `${base}.cancel`,
  };
}
