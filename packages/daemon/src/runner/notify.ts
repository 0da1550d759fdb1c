/**
 * `--notify CMD` (docs/behaviour.md §23.7): once a job is terminal, CMD runs
 * through `bash -c` as the job's owner, in its working directory, with its
 * environment and XLURM_JOB_NAME/STATE/EXIT_CODE, for at most 60 s, its
 * output at the end of the job's log after a line `[xlurm] notify:`.
 *
 * The daemon never runs it itself: it is one more run of the supervisor
 * (xlurm-stepd) unchanged, whose payload is the command. The supervisor
 * drops to the owner's identity exactly as for the job (a root daemon), or
 * checks that it already is the owner (a private daemon), and enforces the
 * time limit. It gets its own result, cancel and lock names (`<id>.notify.*`),
 * so a cancelled job's marker never stops its notification, and the job's
 * own files are never touched; its result is removed once it has exited.
 *
 * Inside limits (docs/behaviour.md §28.5): where jobs get cgroups, it runs in
 * one of its own (`notify-<id>`, JobLimits.setupNotify) with the job's memory
 * and pids limits and every accelerator node denied, which its supervisor
 * empties when it ends or reaches its time limit (a `setsid` child included)
 * and the daemon removes once the supervisor has exited; one that cannot be
 * made means no notification (logged), never one outside limits. With
 * `private_tmp` it gets a fresh /tmp of its own, as the job did (§28.12).
 *
 * A notification is started once, by the daemon that recorded the job's end:
 * one that dies in between loses it (the job's outcome itself is safe).
 */
import * as fs from 'node:fs';
import { flockExclusive } from '@xlurm/native';
import { accountFor, groupsFor } from '../accounts';
import { ENFORCE_PREFIX, type JobCgroupSpec, type JobLimits } from '../resources/job-limits';
import type { StoredJob } from '../store/store';
import { spawnDirect } from './direct-spawn';
import { jobEnv } from './job-env';
import type { JobFiles } from './job-files';
import { encodeStepdSpec } from './stepd-spec';

/** The notification's time limit, in seconds. */
export const NOTIFY_TIME_LIMIT = 60;

/** The line written to the job's log before the notification's output. */
export const NOTIFY_LINE = '[xlurm] notify:\n';

/** The notification's own files beside the job's (`jobs/<id>.notify.*`). */
export function notifyPaths(files: JobFiles, id: number): { result: string; cancel: string; lock: string } {
  const base = files.paths(id).result.replace(/\.result$/, '');
  return { result: `${base}.notify.result`, cancel: `${base}.notify.cancel`, lock: `${base}.notify.lock` };
}

/** The notification's environment: the job's (no devices: they are someone else's now) and the outcome's variables. */
export function notifyEnv(job: StoredJob): string[] {
  const env = jobEnv({ ...job, devices: [] });
  env.push(`XLURM_JOB_NAME=${job.spec.name}`, `XLURM_JOB_STATE=${job.state}`, `XLURM_JOB_EXIT_CODE=${job.result?.exit_code ?? ''}`);
  return env;
}

export class Notifier {
  constructor(
    private readonly stepd: string,
    private readonly switchUser: boolean,
    private readonly files: JobFiles,
    private readonly log: (msg: string) => void,
    /** Its cgroup and private /tmp (absent: unit tests, which run it without). */
    private readonly limits?: JobLimits,
  ) {}

  /** Start job's notification (its spec has `notify`); a failure is logged and the job is left as it is. */
  run(job: StoredJob): void {
    const cmd = job.spec.notify;
    if (!cmd) return;
    const p = notifyPaths(this.files, job.id);
    const fds: number[] = [];
    let limits: JobCgroupSpec | undefined;
    // Its cgroup goes once nothing of it can run any more (any path: not started, or exited).
    const done = () => { if (limits?.dirs.length) this.limits?.finishNotify(job.id); };
    try {
      limits = this.limits?.setupNotify(job);
    } catch (e) {
      this.log(`job ${job.id}: notification not run: ${ENFORCE_PREFIX}${(e as Error).message}`);
      return;
    }
    try {
      let groups: number[] = [];
      if (this.switchUser) {
        // The owner as the job ran (accounts.ts's short-lived cache): a uid given to another name since is refused.
        const account = accountFor(job.owner.uid);
        if (!account || account.name !== job.owner.name) throw new Error("job owner's account changed since submission");
        groups = groupsFor(account.name, job.owner.gid);
      }
      const spec = encodeStepdSpec({
        jobId: job.id, resultPath: p.result, cancelPath: p.cancel, uid: job.owner.uid, gid: job.owner.gid,
        ownerName: job.owner.name, groups, switchUser: this.switchUser, cwd: job.spec.cwd,
        timeLimit: NOTIFY_TIME_LIMIT, killGrace: 1, argv: ['bash', '-c', cmd], env: notifyEnv(job),
        ...(limits ? { cgroupDirs: limits.dirs, cgroupKill: limits.killFile, privateTmp: limits.privateTmp } : {}),
      });
      const specFd = this.files.openSpec(job.id, spec);
      fds.push(specFd);
      const logFd = this.files.openLog(job.id);
      fds.push(logFd);
      // On a line of its own, even after a log that ends mid-line.
      const size = fs.fstatSync(logFd).size;
      let sep = '';
      if (size > 0) {
        const last = Buffer.alloc(1);
        const rfd = fs.openSync(this.files.paths(job.id).log, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
        try { fs.readSync(rfd, last, 0, 1, size - 1); } finally { fs.closeSync(rfd); }
        if (last[0] !== 0x0a) sep = '\n';
      }
      fs.writeSync(logFd, sep + NOTIFY_LINE);
      // The supervisor's fd 3: a lock it holds while it lives; nobody looks it up by name.
      const lockFd = fs.openSync(p.lock, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o600);
      fds.push(lockFd);
      fs.unlinkSync(p.lock);
      flockExclusive(lockFd);
      spawnDirect(this.stepd, [specFd, logFd, logFd, lockFd], {
        onSpawned: (err) => { if (err) { this.log(`job ${job.id}: cannot start its notification: ${err.message}`); done(); } },
        onExit: () => { try { fs.unlinkSync(p.result); } catch { /* none written */ } done(); },
      });
    } catch (e) {
      this.log(`job ${job.id}: cannot start its notification: ${(e as Error).message}`);
      done(); // nothing was started: the spawn is the last step
    } finally {
      for (const fd of fds) { try { fs.closeSync(fd); } catch { /* closed */ } }
    }
  }
}
