/**
 * The job's view of its CPUs and memory (docs/behaviour.md §24.4): the
 * thread-count variables that common runtimes and build tools read, set to
 * the CPUs it asked for unless the submitted environment sets them already
 * (the submitter's explicit value wins), and XLURM_MEM, its limit in MiB.
 */
export const THREAD_VARIABLES = [
  'XLURM_CPUS', 'SLURM_CPUS_PER_TASK', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS',
  'NUMEXPR_NUM_THREADS', 'MAX_JOBS', 'CMAKE_BUILD_PARALLEL_LEVEL', 'PYTEST_XDIST_AUTO_NUM_WORKERS',
] as const;

/** Adds the variables to `env` (the submitted environment with the daemon's own additions). */
export function applyResourceEnv(env: Map<string, string>, submitted: Readonly<Record<string, string>>, cpus: number, mem: number): void {
  if (cpus > 0) {
    for (const k of THREAD_VARIABLES) if (!Object.prototype.hasOwnProperty.call(submitted, k)) env.set(k, String(cpus));
  }
  if (mem > 0) env.set('XLURM_MEM', String(Math.floor(mem / (1024 * 1024))));
}
