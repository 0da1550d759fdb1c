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
