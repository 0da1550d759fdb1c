/**
 * One scheduling pass, as a pipeline of pure steps: order (who is considered
 * first) → admit (may it start at all now) → place (which devices). Its
 * input is the pending jobs, the number running, the limit and the devices;
 * its output the jobs to start and, for every job not started, a reason
 * (docs/behaviour.md §5.2, §20.4). Greedy, no reservation: a job that
 * does not fit is passed over and later, smaller jobs may overtake it.
 *
 * Reasons cost nothing until read. A pass only takes devices and adds
 * running jobs, so a job it passed over (or never reached) cannot start in
 * the state the pass leaves either: that end state explains every such job,
 * and the explanation depends only on what the job asks for, so it is built
 * once per distinct request, on first read, not once per job per pass.
 */
import type { Device, Reason } from '@xlurm/protocol';
import { KINDS } from '@xlurm/protocol';
import { admit, admitNone, explainAdmit, type AdmitCode, type AdmitState } from './admit';
import { order } from './order';
import { deviceKey, explainPlace, place, type DeviceBlock, type DeviceSituation, type Topology } from './place';
import type { PendingJob } from './pending-job';

export type { PendingJob } from './pending-job';

export interface Decision { id: number; devices: Device[] }

export interface SchedulerInput {
  pending: Iterable<PendingJob>;     // submission (id) order
  /**
   * How many of `pending` ask for no device, when the caller knows: the pass
   * then stops once no device is free and none of those is left.
   */
  cpuOnlyPending?: number;
  running: number;                   // RUNNING jobs, CPU-only included
  maxRunning: number;
  inventory: readonly Device[];
  /** Keys of devices that are idle, enabled and unallocated right now. */
  free: ReadonlySet<string>;
  /**
   * Why each device that is not free is not (holder job and owner, busy,
   * unknown…): read only to word reasons, never for decisions. A device
   * missing here reads as "not free".
   */
  blocked?: ReadonlyMap<string, DeviceBlock>;
  /** Device groups and the host's affinity (docs/behaviour.md §21.5); absent: first fit. */
  topology?: Topology;
}

export interface Pass {
  decisions: Decision[];
  /**
   * Why a job of this pass's input was not started: the first step that stops
   * it in the state the pass left. Null for a job the pass started. Computed
   * on first ask and shared by jobs with the same request; the input's `free`
   * and `blocked` must not change afterwards (the caller builds them per pass).
   */
  reasonOf(job: PendingJob): Reason | null;
}

const NO_BLOCKS: ReadonlyMap<string, DeviceBlock> = new Map();

export function schedule(input: SchedulerInput): Pass {
  const decisions: Decision[] = [];
  const state: AdmitState = { running: input.running, maxRunning: input.maxRunning };
  // Devices taken in this pass, with the job that takes them (for reasons).
  const taken = new Map<string, PendingJob>();
  const pass = (): Pass => ({ decisions, reasonOf: reasons(input, state, decisions, taken) });
  if (admitNone(state)) return pass();
  const usable = (d: Device) => { const k = deviceKey(d); return input.free.has(k) && !taken.has(k); };
  // Free devices per vendor: a job asking for more than any pool has free
  // cannot fit, so it is skipped without allocation work (keeps a pass over a
  // long queue of large requests cheap).
  const freeOf = new Map<string, number>();
  for (const d of input.inventory) if (input.free.has(deviceKey(d))) freeOf.set(d.kind, (freeOf.get(d.kind) ?? 0) + 1);
  let mostFree = Math.max(0, ...freeOf.values());
  let cpuOnlyLeft = input.cpuOnlyPending ?? Infinity;
  for (const job of order(input.pending)) {
    if (admitNone(state)) break;
    if (mostFree === 0 && cpuOnlyLeft <= 0) break; // nothing left that could fit
    if (job.count === 0) cpuOnlyLeft--;
    if (admit(job, state)) continue;
    if (job.count > (job.kind ? freeOf.get(job.kind) ?? 0 : mostFree)) continue;
    const devices = place(job, input.inventory, usable, input.topology);
    if (!devices) continue;
    for (const d of devices) taken.set(deviceKey(d), job);
    if (devices.length) {
      freeOf.set(devices[0]!.kind, freeOf.get(devices[0]!.kind)! - devices.length);
      mostFree = Math.max(0, ...freeOf.values());
    }
    decisions.push({ id: job.id, devices });
    state.running++;
  }
  return pass();
}

/** A request's identity for the reason cache: a number for the common shapes, else a string. */
function shapeKey(job: PendingJob): number | string {
  const kind = job.kind ? KINDS.indexOf(job.kind) + 1 : 0;
  const affinity = job.groupAffinity === 'require' ? 1 : job.groupAffinity === 'off' ? 2 : 0;
  if (!job.deviceIds && !job.excludeIds?.length) return (job.count * 4 + affinity) * 16 + kind;
  return `${kind}|${job.count}|${job.deviceIds?.join(',') ?? ''}|${job.excludeIds?.join(',') ?? ''}|${affinity}`;
}

/** The reasonOf of a finished pass (see Pass). */
function reasons(input: SchedulerInput, end: AdmitState, decisions: readonly Decision[], taken: ReadonlyMap<string, PendingJob>): Pass['reasonOf'] {
  let started: Set<number> | undefined;
  let situation: DeviceSituation | undefined;
  const byCode = new Map<AdmitCode, Reason>();
  const byShape = new Map<number | string, Reason | null>();
  // The devices as the pass leaves them: what it took is held by the jobs it started.
  const endSituation = (): DeviceSituation => {
    const free = new Set(input.free);
    const blocked = new Map(input.blocked ?? NO_BLOCKS);
    for (const [k, job] of taken) {
      free.delete(k);
      blocked.set(k, job.owner === undefined ? { state: 'held', job: job.id } : { state: 'held', job: job.id, owner: job.owner });
    }
    return { inventory: input.inventory, free, blocked, topology: input.topology };
  };
  return (job) => {
    started ??= new Set(decisions.map((d) => d.id));
    if (started.has(job.id)) return null;
    const code = admitNone(end) ?? admit(job, end);
    if (code) {
      let r = byCode.get(code);
      if (!r) byCode.set(code, r = explainAdmit(code, end));
      return r;
    }
    const key = shapeKey(job);
    let r = byShape.get(key);
    if (r === undefined) {
      situation ??= endSituation();
      byShape.set(key, r = explainPlace(job, situation));
    }
    return r;
  };
}
