/**
 * A job's environment (docs/behaviour.md §6.3): exactly the submitted environment, then
 * USER/LOGNAME, XLURM_JOB_ID, XLURM_SUBMIT_DIR and the visibility variables.
 * Nothing from the daemon's own environment leaks in.
 */
import type { ArrayMembership, Job } from '@xlurm/protocol';
import { arrayEnv } from '@xlurm/protocol';
import { visibilityEnv } from './visibility';
import { applyResourceEnv } from '../resources/job-view';

export function jobEnv(job: Job): string[] {
  const env = new Map<string, string>(Object.entries(job.spec.env));
  env.set('USER', job.owner.name);
  env.set('LOGNAME', job.owner.name);
  env.set('XLURM_JOB_ID', String(job.id));
  env.set('XLURM_SUBMIT_DIR', job.spec.cwd);
  // An array task's variables and their SLURM_ARRAY_* twins (docs/behaviour.md §23.2): the daemon's job keeps the whole membership.
  const a = (job as { array?: ArrayMembership | null }).array;
  if (a && a.min !== undefined) for (const [k, v] of arrayEnv(a)) env.set(k, v);
  applyResourceEnv(env, job.spec.env, job.spec.cpus ?? 0, job.spec.mem ?? 0); // docs/behaviour.md §24.4
  for (const [k, v] of Object.entries(visibilityEnv(job.devices))) {
    if (v === null) env.delete(k); else env.set(k, v);
  }
  return [...env].map(([k, v]) => `${k}=${v}`);
}

/** argv of the task: the command, or `bash -c <script> <name> ARGS…` for batch scripts. */
export function jobArgv(job: Job): string[] {
  const s = job.spec;
  if (typeof s.script === 'string') return ['bash', '-c', s.script, s.name, ...s.command];
  return s.command;
}
