/**
 * Device isolation (docs/behaviour.md §24.8): a job's cgroup denies it the
 * node files of the host's accelerators it was not given; every other device
 * stays allowed (the control nodes every job needs, /dev/null, ttys, …).
 *
 * - cgroup v1 (and the hybrid layout, where the v1 `devices` controller is
 *   mounted): one `c MAJ:MIN rwm` line per denied node, written to the job's
 *   `devices.deny`.
 * - cgroup v2 without a v1 devices controller: a BPF_PROG_TYPE_CGROUP_DEVICE
 *   program attached to the job's cgroup v2 directory (the addon,
 *   native/src/addon/device-filter.cc). On the hybrid layout such a program
 *   attached to the unified hierarchy is enforced as well (the kernel runs
 *   cgroup v2 device programs before the v1 controller); the v1 controller is
 *   used there because the job has a v1 devices cgroup anyway.
 *
 * Nodes are matched by device number (major:minor), found with stat(2) on the
 * paths discovery named, so a node reached through another path (a symlink,
 * a copy made with mknod) is denied too. Where isolation cannot be applied the
 * job still runs with its visibility variables only, unless `require_cgroup`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Device } from '@xlurm/protocol';
import { KIND_LABEL } from '@xlurm/protocol';
import { deviceFilterAttach, deviceFilterSupported, type DeviceNumber } from '@xlurm/native';
import { deviceKey } from '../scheduler/place';
import { formatUtc } from '../workflow';

export type { DeviceNumber };

/** The device number of a character or block device node; undefined for a missing path or another kind of file. */
export function deviceNumberOf(p: string): DeviceNumber | undefined {
  let st: fs.BigIntStats;
  try {
    st = fs.statSync(p, { bigint: true });
  } catch {
    return undefined;
  }
  if (!st.isCharacterDevice() && !st.isBlockDevice()) return undefined;
  // glibc's gnu_dev_major/gnu_dev_minor encoding of dev_t.
  const dev = st.rdev;
  const major = Number(((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn));
  const minor = Number((dev & 0xffn) | ((dev >> 12n) & ~0xffn));
  return { type: st.isBlockDevice() ? 'b' : 'c', major, minor };
}

const numberKey = (n: DeviceNumber) => `${n.type} ${n.major}:${n.minor}`;

/** What the isolation needs of the device layer. */
export interface NodeSource {
  readonly inventory: readonly Device[];
  nodesOf(d: Device): readonly string[];
}

/**
 * The device numbers to deny a job holding `mine`: the nodes of every other
 * device of the inventory, less any node one of the job's own devices also
 * names (a shared node must stay usable by its owner). Nodes missing on the
 * host need no rule.
 */
export function denyList(source: NodeSource, mine: readonly Device[]): DeviceNumber[] {
  const own = new Set(mine.map(deviceKey));
  const keep = new Set<string>();
  for (const d of mine) {
    for (const p of source.nodesOf(d)) {
      const n = deviceNumberOf(p);
      if (n) keep.add(numberKey(n));
    }
  }
  const out = new Map<string, DeviceNumber>();
  for (const d of source.inventory) {
    if (own.has(deviceKey(d))) continue;
    for (const p of source.nodesOf(d)) {
      const n = deviceNumberOf(p);
      if (n && !keep.has(numberKey(n))) out.set(numberKey(n), n);
    }
  }
  return [...out.values()];
}

/** A job's cgroup directories that device isolation can use (from the cgroup layer). */
export interface IsolationDirs {
  /** The job's directory in the v1 `devices` hierarchy. */
  v1Devices?: string;
  /** The job's cgroup v2 directory (the unified hierarchy on the hybrid layout). */
  v2?: string;
}

/** Deny `deny` to the cgroup; returns how (for the log). Throws Error with the reason when it cannot. */
export function applyDeny(dirs: IsolationDirs, deny: readonly DeviceNumber[]): 'devices.deny' | 'bpf' | 'none' {
  if (deny.length === 0) return 'none';
  if (dirs.v1Devices) {
    const file = path.join(dirs.v1Devices, 'devices.deny');
    // The kernel parses one rule per write.
    for (const n of deny) fs.writeFileSync(file, `${numberKey(n)} rwm`);
    return 'devices.deny';
  }
  if (dirs.v2) {
    deviceFilterAttach(dirs.v2, deny);
    return 'bpf';
  }
  throw new Error('the job has no devices cgroup');
}

/** How the host's cgroups can carry device isolation, as found at start-up. */
export interface IsolationSupport {
  /** The mount point of the v1 `devices` controller, if mounted. */
  v1Devices?: string;
  /** The cgroup2 mount point (the unified hierarchy on the hybrid layout), if mounted. */
  v2?: string;
}

/** The v1 devices and cgroup2 mount points from a mounts table (/proc/self/mounts). */
export function findMounts(mounts = '/proc/self/mounts'): IsolationSupport {
  const out: IsolationSupport = {};
  let text = '';
  try { text = fs.readFileSync(mounts, 'utf8'); } catch { return out; }
  for (const line of text.split('\n')) {
    const [, where, type, opts] = line.split(' ');
    if (!where || !type) continue;
    const dir = where.replace(/\\040/g, ' ');
    if (type === 'cgroup2' && out.v2 === undefined) out.v2 = dir;
    if (type === 'cgroup' && (opts ?? '').split(',').includes('devices') && out.v1Devices === undefined) out.v1Devices = dir;
  }
  return out;
}

export interface IsolationOptions {
  /** `[resources] device_isolation`. */
  enabled: boolean;
  source: NodeSource;
  /** Why the daemon makes no job cgroups at all; null when it does. */
  noCgroups?: () => string | null;
  support?: IsolationSupport;
  /** The cgroup v2 device program check (tests replace it). */
  bpfSupported?: () => string;
}

/**
 * The daemon's device isolation: whether it is in force (`xinfo`, `xlurm
 * status`: `device isolation: off (<why>)`) and the deny list per job.
 */
export class DeviceIsolation {
  private bpfWhy: string | undefined;
  /**
   * Isolation is on, but device jobs' cgroups would not take it (docs/behaviour.md §28.7): the
   * latest reason, how many jobs were refused, since when (unix seconds). Cleared by the next
   * device job whose isolation is applied.
   */
  private failing: { why: string; refused: number; since: number } | undefined;

  constructor(private readonly opts: IsolationOptions) {}

  /** A device job did not start because its isolation could not be applied (fail closed, §28.7). */
  refused(why: string, nowSecs = Math.floor(Date.now() / 1000)): void {
    if (this.failing) { this.failing.why = why; this.failing.refused++; } else this.failing = { why, refused: 1, since: nowSecs };
  }

  /** A device job's isolation was applied: the failing state is over. */
  applied(): void { this.failing = undefined; }

  /** Why isolation is off for every job; null when it is in force. */
  offReason(): string | null {
    const o = this.opts;
    if (!o.enabled) return 'disabled by [resources] device_isolation';
    const noCg = o.noCgroups?.() ?? null;
    if (noCg) return `no job cgroups: ${noCg}`;
    const s = o.support ?? {};
    if (!s.v1Devices) {
      if (!s.v2) return 'no devices cgroup controller and no cgroup v2 hierarchy';
      this.bpfWhy ??= (o.bpfSupported ?? deviceFilterSupported)();
      if (this.bpfWhy) return `no devices cgroup controller, and cgroup v2 device programs cannot be loaded: ${this.bpfWhy}`;
    }
    const devices = o.source.inventory;
    if (devices.length === 0) return 'no accelerators discovered';
    // Off only where no device at all names a node (else the devices that do are isolated).
    if (devices.every((d) => o.source.nodesOf(d).length === 0)) {
      return `the device library names no device nodes (${[...new Set(devices.map((d) => KIND_LABEL[d.kind]))].join(', ')})`;
    }
    return null;
  }

  /** `on`, `off (<why>)`, or `failing (<why>; <N> job(s) refused since <time>)` (docs/behaviour.md §24.8, §28.7). */
  state(): string {
    const why = this.offReason();
    if (why !== null) return `off (${why})`;
    const f = this.failing;
    return f ? `failing (${f.why}; ${f.refused} job(s) refused since ${formatUtc(f.since)})` : 'on';
  }

  /**
   * Deny a starting job the other devices' nodes. Returns what was done, or
   * throws Error(why) when the job's cgroup would not take the rules (the
   * caller decides: run with visibility variables only, or fail closed).
   */
  apply(dirs: IsolationDirs, mine: readonly Device[]): string {
    if (this.offReason() !== null) return 'off';
    return applyDeny(dirs, denyList(this.opts.source, mine));
  }
}
