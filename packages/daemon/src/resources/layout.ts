/**
 * Which cgroup hierarchies the host has (docs/behaviour.md §24.3), from
 * /proc/self/mountinfo: cgroup v2 alone (the unified hierarchy holds the
 * controllers), cgroup v1 alone (one mount per controller or group of
 * controllers), or the hybrid layout (v1 controllers plus a unified
 * hierarchy without controllers, used for membership, cgroup.kill, CPU time
 * and pressure). And where this daemon keeps its jobs' cgroups: under
 * systemd, inside the daemon's own (delegated) cgroup; otherwise `<mount>/xlurm/`.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The v1 controllers a job's cgroup uses. */
export const V1_CONTROLLERS = ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids', 'devices', 'freezer'] as const;
export type V1Controller = (typeof V1_CONTROLLERS)[number];

export interface CgroupLayout {
  kind: 'v2' | 'v1' | 'hybrid' | 'none';
  /** Mount point of the unified (v2) hierarchy, if mounted. */
  unified?: string;
  /** Mount point of each v1 controller (two controllers may share one, e.g. cpu,cpuacct). */
  v1: Partial<Record<V1Controller, string>>;
}

/** The layout from mountinfo's text (fields: see proc(5)). */
export function parseMountinfo(text: string, controllersOf: (mount: string) => string[] = unifiedControllers): CgroupLayout {
  let unified: string | undefined;
  const v1: Partial<Record<V1Controller, string>> = {};
  for (const line of text.split('\n')) {
    const dash = line.indexOf(' - ');
    if (dash < 0) continue;
    const left = line.slice(0, dash).split(' ');
    const right = line.slice(dash + 3).split(' ');
    const mount = unescapeMount(left[4] ?? '');
    if (right[0] === 'cgroup2') { unified ??= mount; continue; }
    if (right[0] !== 'cgroup') continue;
    for (const opt of (right[2] ?? '').split(',')) {
      if ((V1_CONTROLLERS as readonly string[]).includes(opt)) v1[opt as V1Controller] ??= mount;
    }
  }
  const hasV1 = Object.keys(v1).length > 0;
  let kind: CgroupLayout['kind'] = 'none';
  if (unified && !hasV1 && controllersOf(unified).includes('memory')) kind = 'v2';
  else if (hasV1) kind = unified ? 'hybrid' : 'v1';
  else if (unified) kind = 'v2';
  const out: CgroupLayout = { kind, v1 };
  if (unified) out.unified = unified;
  return out;
}

/** `\040` and friends in mountinfo paths. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

function unifiedControllers(mount: string): string[] {
  try { return fs.readFileSync(path.join(mount, 'cgroup.controllers'), 'latin1').trim().split(/\s+/); } catch { return []; }
}

export function detectLayout(): CgroupLayout {
  try { return parseMountinfo(fs.readFileSync('/proc/self/mountinfo', 'utf8')); } catch { return { kind: 'none', v1: {} }; }
}

/** Is systemd the init process (then the daemon runs in a unit that delegates its subtree)? */
export function underSystemd(): boolean {
  try { return fs.readFileSync('/proc/1/comm', 'latin1').trim() === 'systemd'; } catch { return false; }
}

/** This process's cgroup path per hierarchy, from /proc/self/cgroup: '' for the unified one, else the controller. */
export function ownCgroups(text?: string): Map<string, string> {
  const out = new Map<string, string>();
  let t = text;
  if (t === undefined) { try { t = fs.readFileSync('/proc/self/cgroup', 'latin1'); } catch { return out; } }
  for (const line of t.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === '') out.set('', m[2]!);
    else for (const c of m[1]!.split(',')) out.set(c, m[2]!);
  }
  return out;
}

/**
 * The directory, per hierarchy, under which this daemon makes its jobs'
 * cgroups. One daemon's jobs are kept apart from another's on the same host
 * (each state directory has its own subtree, named from a hash of its path),
 * so job ids never meet. `root` (the daemon's own XLURM_CGROUP_ROOT, for
 * tests and unusual mounts) replaces every mount point: `<root>/unified`,
 * `<root>/<controller>`, or `<root>` itself on a v2-only host.
 */
export interface CgroupBases {
  unified?: string;
  v1: Partial<Record<V1Controller, string>>;
  /** Under systemd on v2: the daemon's own cgroup, into whose `daemon` child it moves itself. */
  delegated?: string;
}

export function instanceName(home: string): string {
  return crypto.createHash('sha256').update(path.resolve(home)).digest('hex').slice(0, 12);
}

export function cgroupBases(layout: CgroupLayout, home: string, opts: { root?: string; systemd?: boolean; own?: Map<string, string> } = {}): CgroupBases {
  const inst = instanceName(home);
  const own = opts.own ?? (opts.systemd ? ownCgroups() : new Map<string, string>());
  const base = (mount: string, key: string, name: string): string => {
    if (opts.root) return layout.kind === 'v2' && name === 'unified' ? path.join(opts.root, 'xlurm', inst) : path.join(opts.root, name, 'xlurm', inst);
    if (opts.systemd && own.has(key)) return path.join(mount, own.get(key)!, 'xlurm', inst);
    return path.join(mount, 'xlurm', inst);
  };
  const out: CgroupBases = { v1: {} };
  if (layout.unified) {
    out.unified = base(layout.unified, '', 'unified');
    if (opts.systemd && !opts.root && layout.kind === 'v2' && own.has('')) out.delegated = path.join(layout.unified, own.get('')!);
  }
  for (const c of V1_CONTROLLERS) {
    const m = layout.v1[c];
    if (m) out.v1[c] = base(m, c, c);
  }
  return out;
}
