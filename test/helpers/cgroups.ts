// The cgroups a test daemon makes (packages/daemon/src/resources/layout.ts:
// `<mount>/xlurm/<instance>/job-N` and `notify-N`, the instance a hash of its XLURM_HOME),
// found and removed by the e2e tests that run jobs in them.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Daemon } from './daemon';

/** This process's mount table ('' where there is none). */
export const mountinfo = fs.existsSync('/proc/self/mountinfo') ? fs.readFileSync('/proc/self/mountinfo', 'utf8') : '';

/** Whether any cgroup hierarchy (v1 or v2) is mounted. */
export const hasCgroups = / - cgroup2? /.test(mountinfo);

/** The daemon's instance directory name under `<mount>/xlurm/`. */
export function cgroupInstance(d: Daemon): string {
  return crypto.createHash('sha256').update(path.resolve(d.home)).digest('hex').slice(0, 12);
}

/** Each mounted hierarchy: its mount point and whether it is cgroup2, with its super options (v1 controllers). */
export function cgroupMounts(): { mount: string; v2: boolean; options: string }[] {
  const out: { mount: string; v2: boolean; options: string }[] = [];
  for (const line of mountinfo.split('\n')) {
    const m = / - (cgroup2?) \S+ (\S+)$/.exec(line);
    if (m) out.push({ mount: line.split(' ')[4]!, v2: m[1] === 'cgroup2', options: m[2]! });
  }
  return out;
}

/** Remove the daemon's job cgroups once its jobs are gone (killing what a failed test left in them), then its instance directories. */
export function removeCgroups(d: Daemon): void {
  const inst = cgroupInstance(d);
  for (const { mount } of cgroupMounts()) {
    const base = path.join(mount, 'xlurm', inst);
    let names: string[] = [];
    try { names = fs.readdirSync(base).filter((n) => n.startsWith('job-') || n.startsWith('notify-')); } catch { continue; }
    for (const n of names) {
      try { fs.writeFileSync(path.join(base, n, 'cgroup.kill'), '1'); } catch { /* v1, or empty */ }
      try { fs.rmdirSync(path.join(base, n)); } catch { /* still exiting */ }
    }
    try { fs.rmdirSync(base); } catch { /* not empty */ }
  }
}

/** The control files a fake cgroup v2 kernel makes in each new directory (unit tests of resources/). */
const FAKE_V2_FILES = ['cgroup.procs', 'cgroup.kill', 'cgroup.controllers', 'cgroup.subtree_control', 'cpu.max', 'cpuset.cpus', 'cpuset.mems',
  'memory.max', 'memory.high', 'memory.swap.max', 'memory.oom.group', 'memory.peak', 'memory.events', 'pids.max', 'cpu.stat'];

/**
 * A fake cgroup v2 tree in `root` (the v2-only layout, which the test machines lack): the root's
 * controller files, and the `onMkdir` that makes a new directory's control files as the kernel
 * would, for `new Cgroups({ layout, bases, onMkdir })`.
 */
export function fakeV2Tree(root: string): { layout: { kind: 'v2'; unified: string; v1: Record<string, never> }; onMkdir: (dir: string) => void } {
  fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
  fs.writeFileSync(path.join(root, 'cgroup.subtree_control'), '');
  const onMkdir = (dir: string) => {
    for (const f of FAKE_V2_FILES) fs.writeFileSync(path.join(dir, f), '');
    fs.writeFileSync(path.join(dir, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    fs.writeFileSync(path.join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n');
  };
  return { layout: { kind: 'v2', unified: root, v1: {} }, onMkdir };
}
