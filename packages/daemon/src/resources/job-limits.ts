/**
 * What the runner asks of a job's cgroup (docs/behaviour.md §24.3–§24.6):
 * `setup` before the supervisor starts (the limits from the job's request
 * and `[resources]`, its CPUs picked distinct from the other jobs' where the
 * counts allow), `finish` once its result is read (what the cgroup measured
 * goes into the result, an OOM kill makes it OUT_OF_MEMORY, and whatever is
 * left is killed before the devices are released), `adopt` after a restart.
 *
 * A job without `--mem` is bounded by `[resources] memory` in its own cgroup,
 * and all jobs together by the same in the daemon's subtree (§28.6); every
 * job's cgroup has `pids_max`.
 *
 * Fail closed: a job that asks for CPUs or memory, any job while
 * `require_cgroup` is set, and a job with devices while device isolation is
 * on (§28.7: it is then counted in isolation's `failing` state) never runs
 * without its cgroup; any other job whose cgroup cannot be made runs as
 * before (the daemon logs why, once).
 *
 * The job's `--notify` command gets a cgroup of its own (`notify-<id>`,
 * §28.5): the job's memory and pids limits, every accelerator node denied;
 * it never runs without it where jobs get cgroups.
 */
import type { Device, Outcome } from '@xlurm/protocol';
import type { StoredJob } from '../store/store';
import { Cgroups, EnforceError, oomError, pickCpus, type CgroupLimits, type JobCgroup } from './cgroup';
import type { DeviceIsolation } from './isolation';
import { cgroupBases, detectLayout, underSystemd, type CgroupLayout } from './layout';
import { cpusNear, sysfsRoot } from './numa';
import type { ResourcesSettings } from './settings';

export { EnforceError } from './cgroup';

/** The prefix of a start that failed closed (docs/behaviour.md §24.3). */
export const ENFORCE_PREFIX = "cannot enforce the job's limits: ";

/** What the supervisor's spec carries: the cgroup (no directories: none), and the private /tmp's size (0: none; §28.12). */
export interface JobCgroupSpec { dirs: string[]; killFile: string | null; privateTmp: number }

export class JobLimits {
  private warned = false;
  /** The total limit last found refused (logged once per value). */
  private totalWarned: number | undefined;
  /**
   * A device's NUMA node from discovery (null: unknown); main.ts sets it from the device
   * manager. With `sysfs`, the CPUs of the job's devices' nodes are preferred for its CPU set.
   */
  numaNodeOf: (d: Device) => number | null = () => null;
  sysfs = sysfsRoot(process.env);
  /** Device isolation (main.ts sets it from protection.ts): whether it is on, and where a device job refused for it is counted (§28.7). */
  isolation: Pick<DeviceIsolation, 'offReason' | 'refused' | 'applied'> | undefined;

  constructor(
    readonly cgroups: Cgroups,
    private readonly settings: () => ResourcesSettings,
    private readonly log: (msg: string) => void,
  ) {}

  /**
   * The daemon's cgroups on this host: detected from mountinfo (root only:
   * another user cannot make cgroups here). `root` is the daemon's own
   * XLURM_CGROUP_ROOT (tests, unusual mounts), never a job's.
   */
  static forHost(home: string, isRoot: boolean, settings: () => ResourcesSettings, log: (msg: string) => void, root?: string): JobLimits {
    const layout: CgroupLayout = isRoot ? detectLayout() : { kind: 'none', v1: {} };
    const bases = cgroupBases(layout, home, { ...(root ? { root } : {}), systemd: !root && underSystemd() });
    return new JobLimits(new Cgroups({ layout, bases, log }), settings, log);
  }

  /** Must this job run in its cgroup or not at all? */
  private mustEnforce(job: StoredJob): boolean {
    return (job.spec.cpus ?? 0) > 0 || (job.spec.mem ?? 0) > 0 || this.settings().requireCgroup;
  }

  /** The memory, pids and swap limits of a job and of its notification: a job without `--mem` gets `[resources] memory` (§28.6). */
  private baseLimits(job: StoredJob): Omit<CgroupLimits, 'cpus' | 'cpuset'> {
    const r = this.settings();
    return { mem: job.spec.mem || r.memory, memoryHighRatio: r.memoryHighRatio, swap: r.swap, pidsMax: r.pidsMax };
  }

  private privateTmp(): number {
    const r = this.settings();
    return r.privateTmp ? r.privateTmpSize : 0;
  }

  /**
   * Make the job's cgroup. Throws EnforceError (the job fails with
   * ENFORCE_PREFIX + its message) when it cannot and must; no directories
   * when it runs without one.
   */
  setup(job: StoredJob): JobCgroupSpec {
    const r = this.settings();
    const cpus = job.spec.cpus ?? 0;
    const none: JobCgroupSpec = { dirs: [], killFile: null, privateTmp: this.privateTmp() };
    if (!this.cgroups.available) {
      if (this.mustEnforce(job)) throw new EnforceError(this.cgroups.layout.kind === 'none' && process.geteuid?.() !== 0 ? 'cgroups need a daemon running as root' : 'no cgroup hierarchy is mounted on this host');
      return none;
    }
    // Isolation found at start or reload must hold for every device job (§28.7).
    const isolated = job.devices.length > 0 && !!this.isolation && this.isolation.offReason() === null;
    let cg: JobCgroup;
    this.limitTotal(r.memory);
    try {
      const cpuset = cpus > 0 ? pickCpus(cpus, r.cpuList, this.cgroups.takenCpus(), this.nearCpus(job.devices)) : null;
      cg = this.cgroups.create(job.id, { cpus, cpuset, ...this.baseLimits(job) }, job.devices);
    } catch (e) {
      if (!(e instanceof EnforceError)) throw e;
      if (isolated) this.isolation!.refused(e.message);
      if (this.mustEnforce(job) || isolated) throw e;
      if (!this.warned) this.log(`jobs run without cgroups: ${e.message}`);
      this.warned = true;
      return none;
    }
    if (isolated) this.isolation!.applied();
    return { dirs: cg.dirs, killFile: cg.killFile, privateTmp: none.privateTmp };
  }

  /**
   * The cgroup of job's `--notify` command (§28.5): the job's memory and pids limits, no CPU
   * quota, no device of its own (so every accelerator node is denied). Throws EnforceError when
   * it cannot be made (the notification does not run); no directories where jobs get no cgroups.
   */
  setupNotify(job: StoredJob): JobCgroupSpec {
    const privateTmp = this.privateTmp();
    if (!this.cgroups.available) return { dirs: [], killFile: null, privateTmp };
    this.limitTotal(this.settings().memory);
    const cg = this.cgroups.create(job.id, { cpus: 0, cpuset: null, ...this.baseLimits(job) }, [], 'notify');
    return { dirs: cg.dirs, killFile: cg.killFile, privateTmp };
  }

  /**
   * The daemon's subtree held to `[resources] memory` (§28.6). A limit the kernel refuses (v1
   * answers EBUSY below what the running jobs use now, after a reload lowered it) is logged and
   * tried again at the next start: each job's own limit still holds, so no job fails for it.
   */
  private limitTotal(bytes: number): void {
    try {
      this.cgroups.limitTotal(bytes);
      this.totalWarned = undefined;
    } catch (e) {
      if (this.totalWarned !== bytes) this.log(`cannot limit the jobs' memory in all to ${bytes} bytes: ${(e as Error).message}`);
      this.totalWarned = bytes;
    }
  }

  /** The notification's supervisor has exited: whatever is left in its cgroup is killed, and the cgroup goes. */
  finishNotify(id: number): void { this.cgroups.remove(id, 'notify'); }

  /** The CPUs of the NUMA nodes of `devices` where known (docs/behaviour.md §24.3); empty: no preference. */
  private nearCpus(devices: readonly Device[]): Set<number> {
    if (devices.length === 0) return new Set();
    return cpusNear(devices.map((d) => this.numaNodeOf(d)), this.sysfs);
  }

  /** The job did not start after all (it waits for a later start): its cgroup goes. */
  discard(id: number): void { this.cgroups.remove(id); }

  /**
   * The job's result, with what its cgroup measured (docs/behaviour.md
   * §24.5); its cgroup is emptied and removed before the caller releases
   * the devices.
   */
  finish(id: number, o: Outcome): Outcome {
    const cg = this.cgroups.get(id);
    if (!cg) return o;
    // The supervisor measured and removed it (the result says so): only what is left goes.
    if (o.peak_memory !== undefined || o.cpu_seconds !== undefined) { this.cgroups.remove(id); return o; }
    const usage = this.cgroups.usage(id);
    this.cgroups.remove(id);
    if (!usage) return o;
    const out: Outcome = { ...o };
    if (usage.peakMemory !== null) out.peak_memory = usage.peakMemory;
    if (usage.cpuSeconds !== null) out.cpu_seconds = usage.cpuSeconds;
    // The kernel's OOM kill of a job with a memory limit; a cancel or a time-out that came first says more.
    if (usage.oomKilled && cg.mem > 0 && (o.state === 'FAILED' || o.state === 'COMPLETED')) {
      out.state = 'OUT_OF_MEMORY';
      out.exit_code = 137;
      out.error = oomError(cg.mem, usage.peakMemory);
    }
    return out;
  }

  /** After a restart: the running jobs' cgroups are this daemon's again; those of jobs that are not running go. */
  adopt(ids: readonly number[]): void { this.cgroups.adopt(ids); }

  sweep(running: ReadonlySet<number>): void { this.cgroups.sweep(running); }

  close(): void { this.cgroups.close(); }
}
