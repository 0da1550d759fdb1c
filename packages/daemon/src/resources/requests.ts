/**
 * A job's CPUs and memory at submission (docs/behaviour.md §24.1): the
 * host's defaults for a job that asks for none, and the refusal of a
 * request larger than the host ever gives jobs, or than admission could ever
 * let start (§28.6: memory plus min_available beyond MemTotal). Applied once, in
 * Core.submit, so the stored spec holds the effective values.
 */
import type { Submission } from '@xlurm/protocol';
import { XlurmError, formatSize } from '@xlurm/protocol';
import type { ResourcesSettings } from './settings';

type Limits = Pick<ResourcesSettings, 'cpuList' | 'memory' | 'defaultCpus' | 'defaultMemory'> & Partial<Pick<ResourcesSettings, 'minAvailable' | 'memTotal'>>;

/** The spec with the effective `cpus` and `mem` (set only where non-zero); throws INFEASIBLE for a request the host can never give. */
export function withResources(spec: Submission, r: Limits): Submission {
  const cpus = spec.cpus ?? r.defaultCpus;
  const mem = spec.mem ?? r.defaultMemory;
  if (cpus > r.cpuList.length) {
    throw new XlurmError('INFEASIBLE', `requested ${cpus} CPUs, but the host gives jobs at most ${r.cpuList.length}`);
  }
  if (mem > r.memory) {
    throw new XlurmError('INFEASIBLE', `requested ${formatSize(mem)} memory, but the host gives jobs at most ${formatSize(r.memory)}`);
  }
  // Admission also wants MemAvailable >= mem + min_available (§24.2), which MemTotal bounds:
  // such a job would wait for ever (docs/behaviour.md §28.6).
  const ever = (r.memTotal ?? 0) - (r.minAvailable ?? 0);
  if (mem > 0 && r.memTotal && mem > ever) {
    throw new XlurmError('INFEASIBLE',
      `needs ${formatSize(mem)} memory; at most ${formatSize(Math.max(0, ever))} can ever be given here (min_available ${formatSize(r.minAvailable ?? 0)})`);
  }
  if (spec.cpus === (cpus || undefined) && spec.mem === (mem || undefined)) return spec;
  const out: Submission = { ...spec };
  delete out.cpus;
  delete out.mem;
  if (cpus) out.cpus = cpus;
  if (mem) out.mem = mem;
  return out;
}
