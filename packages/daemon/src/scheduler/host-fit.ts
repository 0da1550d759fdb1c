/**
 * Host CPUs and memory in the admit step (docs/behaviour.md §24.2): a job
 * starts only while its CPUs and memory fit beside the running jobs' (the
 * sums stay within `[resources] cpus` and `memory`) and MemAvailable, read
 * by Core at decision time, is at least its memory plus `min_available`.
 * Pure: the numbers come in, the jobs this pass starts are counted here.
 */
import type { Reason } from '@xlurm/protocol';
import { formatSize } from '@xlurm/protocol';
import type { PendingJob } from './pending-job';

export interface HostRoom {
  /** CPUs jobs may be given in all, and those running jobs (and this pass's starts) hold. */
  cpus: number;
  usedCpus: number;
  /** Bytes jobs may be given in all, and those held. */
  memory: number;
  usedMem: number;
  /** MemAvailable at decision time, less the memory of this pass's starts; null: unknown (not checked). */
  memAvailable: number | null;
  /**
   * MemAvailable not read yet: how to read it, called on the first job of
   * the pass that asks for memory (then memAvailable holds its answer), so a
   * pass in which no job asks for memory reads no file.
   */
  readAvailable?: (() => number | null) | undefined;
  /** `min_available`: what MemAvailable must keep beside a job's memory. */
  minAvailable: number;
  /** Who holds the CPUs and memory (running jobs, then this pass's starts), for the reasons (docs/behaviour.md §28.6). */
  holders?: HostHolder[];
}

/** A job holding CPUs or memory. */
export interface HostHolder { id: number; owner: string; cpus: number; mem: number }

type Shortage = 'cpus' | 'memory' | 'available';

/** MemAvailable, read on first need (at most once per HostRoom). */
function available(h: HostRoom): number | null {
  if (h.readAvailable) {
    h.memAvailable = h.readAvailable();
    h.readAvailable = undefined;
  }
  return h.memAvailable;
}

function shortage(job: PendingJob, h: HostRoom): Shortage | null {
  const cpus = job.cpus ?? 0;
  const mem = job.mem ?? 0;
  if (cpus > 0 && h.usedCpus + cpus > h.cpus) return 'cpus';
  if (mem > 0) {
    if (h.usedMem + mem > h.memory) return 'memory';
    const a = available(h);
    if (a !== null && a < mem + h.minAvailable) return 'available';
  }
  return null;
}

/** Does the job fit the host's CPUs and memory now? */
export function fitsHost(job: PendingJob, h: HostRoom): boolean {
  return shortage(job, h) === null;
}

/** The pass started `job`: what it asked for is taken. */
export function takeHost(job: PendingJob, h: HostRoom): void {
  h.usedCpus += job.cpus ?? 0;
  const mem = job.mem ?? 0;
  if (h.holders && ((job.cpus ?? 0) > 0 || mem > 0)) h.holders.push({ id: job.id, owner: job.owner ?? '', cpus: job.cpus ?? 0, mem });
  h.usedMem += mem;
  if (mem === 0) return;
  const a = available(h);
  if (a !== null) h.memAvailable = Math.max(0, a - mem);
}

const cpusOf = (n: number) => `${n} CPU${n === 1 ? '' : 's'}`;

/** The holders to name, ` (job 3 alice 4, job 5 bob 2)`: largest first (ties: the older job), at most three; '' when unknown. */
export function holdersText(holders: readonly HostHolder[] | undefined, what: 'cpus' | 'mem'): string {
  const held = (holders ?? []).filter((x) => x[what] > 0).sort((a, b) => b[what] - a[what] || a.id - b.id).slice(0, 3);
  if (held.length === 0) return '';
  const amount = (x: HostHolder) => (what === 'cpus' ? String(x.cpus) : formatSize(x.mem));
  return ` (${held.map((x) => `job ${x.id} ${x.owner} ${amount(x)}`).join(', ')})`;
}

/**
 * `Resources`, saying what is missing and who holds it: `needs 4 CPUs: 2 of 16 free (job 3 alice 14)`,
 * `needs 16G memory: 4G of 20G free (job 3 alice 16G)`, `needs 16G memory: 9.5G available beyond the 8G floor`.
 */
export function explainHost(job: PendingJob, h: HostRoom): Reason | null {
  const why = shortage(job, h);
  if (!why) return null;
  const mem = formatSize(job.mem ?? 0);
  if (why === 'cpus') {
    return { code: 'Resources', message: `needs ${cpusOf(job.cpus ?? 0)}: ${Math.max(0, h.cpus - h.usedCpus)} of ${h.cpus} free${holdersText(h.holders, 'cpus')}` };
  }
  if (why === 'memory') {
    return { code: 'Resources', message: `needs ${mem} memory: ${formatSize(Math.max(0, h.memory - h.usedMem))} of ${formatSize(h.memory)} free${holdersText(h.holders, 'mem')}` };
  }
  const beyond = Math.max(0, (h.memAvailable ?? 0) - h.minAvailable);
  return { code: 'Resources', message: `needs ${mem} memory: ${formatSize(beyond)} available beyond the ${formatSize(h.minAvailable)} floor` };
}
