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

/** What a file under `jobs/` is to its job (see parseJobFileName). */
export type JobFileKind = 'log' | 'lock' | 'lockNew' | 'result' | 'cancel' | 'limit' | 'spec' | 'snapshot' | 'temp';

/**
 * Per-job files under `jobs/` (docs/behaviour.md §7.1), the one place their names are made.
 * The CLI needs only `log`; in the daemon, runner/job-files.ts is the only user. The supervisor
 * gets `result` and `cancel` in its spec and derives the result's temporary name from `result`
 * the way `temp` makes it (native/src/stepd/result.c; test/unit/daemon/runner/job-files.ts
 * fails if the two differ).
 */
export function jobPaths(home: string, id: number) {
  const base = path.join(home, 'jobs', String(id));
  return {
    /** The job's output (fds 1 and 2 of the supervisor and the payload). */
    log: `${base}.log`,
    /** Held (flock) by the supervisor's fd 3 for its whole life; its content is a mark (spawn/started). */
    lock: `${base}.lock`,
    /** The lock file while it is being made, renamed to `lock` once marked and locked. */
    lockNew: `${base}.lock.new`,
    /** The supervisor's outcome (one line of JSON), written atomically by the supervisor. */
    result: `${base}.result`,
    /** The cancel marker, written atomically by the daemon. */
    cancel: `${base}.cancel`,
    /**
     * A running job's changed time limit (`xlurm update -t`), written atomically by the daemon;
     * the supervisor derives its name from `cancel` (native/src/stepd/supervisor.c).
     */
    limit: `${base}.limit`,
    /** The supervisor's spec where memfd_create(2) is refused: written, opened and unlinked at once. */
    spec: `${base}.spec`,
    /** The job snapshot of the reference implementation: never written, but removed with the job. */
    snapshot: `${base}.json`,
    /** The temporary name of an atomic write by process `pid`: `<id>.tmp.<pid>`. */
    temp: (pid: number) => `${base}.tmp.${pid}`,
  };
}

const SUFFIX_KIND: ReadonlyMap<string, JobFileKind> = new Map([
  ['log', 'log'], ['lock', 'lock'], ['lock.new', 'lockNew'], ['result', 'result'], ['cancel', 'cancel'], ['limit', 'limit'], ['spec', 'spec'], ['json', 'snapshot'],
]);

/** The job and kind of a file name under `jobs/` made by jobPaths; undefined for any other name. */
export function parseJobFileName(name: string): { id: number; kind: JobFileKind } | undefined {
  const m = /^(\d+)\.(.+)$/.exec(name);
  if (!m) return undefined;
  const kind = /^tmp\.\d+$/.test(m[2]!) ? 'temp' : SUFFIX_KIND.get(m[2]!);
  return kind ? { id: Number(m[1]), kind } : undefined;
}
