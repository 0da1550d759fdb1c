/**
 * The job spec handed to xlurm-stepd on its stdin (never argv, which any user
 * can read in ps): NUL-terminated fields, see native/src/stepd.
 */
export interface StepdSpec {
  jobId: number;
  resultPath: string;
  cancelPath: string;
  uid: number;
  gid: number;
  ownerName: string;
  /** Supplementary groups (gid included), resolved at launch: the supervisor does no NSS lookup. */
  groups: number[];
  switchUser: boolean;
  cwd: string;
  timeLimit: number;
  /** Seconds from SIGTERM to SIGKILL on cancel and time-out (`[limits] kill_grace`). */
  killGrace: number;
  /**
   * The job's cgroup directory in each hierarchy (docs/behaviour.md §24.3): the payload's child
   * joins each before it execs; empty: the job has no cgroup.
   */
  cgroupDirs?: readonly string[];
  /** The unified directory's cgroup.kill, which the supervisor writes when the job ends; null: none. */
  cgroupKill?: string | null;
  /**
   * Bytes of each of the job's own tmpfs /tmp and /dev/shm, mounted in a mount namespace of its
   * own by the payload's child before it drops root (docs/behaviour.md §28.12); 0 or absent: none.
   */
  privateTmp?: number;
  argv: string[];
  env: string[];
}

export function encodeStepdSpec(s: StepdSpec): Buffer {
  const fields = [
    'XLURM-STEPD-5', String(s.jobId), s.resultPath, s.cancelPath, String(s.uid), String(s.gid), s.ownerName,
    String(s.groups.length), ...s.groups.map(String), s.switchUser ? '1' : '0', s.cwd, String(s.timeLimit), String(s.killGrace),
    String(s.cgroupDirs?.length ?? 0), ...(s.cgroupDirs ?? []), s.cgroupKill ?? '', String(Math.max(0, Math.floor(s.privateTmp ?? 0))), String(s.argv.length), ...s.argv,
    String(s.env.length), ...s.env,
  ];
  for (const f of fields) {
    if (f.includes('\0')) throw new Error('job spec field contains a NUL byte');
  }
  return Buffer.from(fields.join('\0') + '\0', 'utf8');
}
