/**
 * One scheduling pass, as a pipeline of pure steps: order (who is considered
 * first) → admit (may it start at all now) → place (which devices), and in
 * the `reserve` mode the reservation and backfill rule (reserve.ts). Its
 * input is the pending jobs, the number running, the limits, the devices
 * and, for `reserve`, who holds each device until when and the time; its
 * output the jobs to start, the reservations and, for every job not
 * started, a reason (docs/behaviour.md §5.2, §20.4, §21.1–§21.4).
 *
 * Reasons cost nothing until read. A pass only takes devices, adds running
 * jobs and adds reservations (which only make devices unusable to the jobs
 * that may not backfill), so a job it passed over (or never reached) cannot
 * start in the state the pass leaves either: that end state explains every
 * such job. For explanations a reserved device counts as held by the
 * reserving job; the reserving job itself is explained without its own
 * reservation. The explanation depends on what the job asks for and, while
 * reservations exist, on whether its time limit lets it backfill each: it
 * is built once per such key, on first read, not once per job per pass.
 */
import type { Device, Reason } from '@xlurm/protocol';
import { KINDS } from '@xlurm/protocol';
import { admit, admitNone, admitted, explainAdmit, type AdmitState } from './admit';
import { order } from './order';
import { deviceKey, deviceLabel, explainPlace, place, type DeviceBlock, type DeviceSituation, type Topology } from './place';
import type { PendingJob } from './pending-job';
import { mayBackfill, reserveFor, type Availability, type Hold, type Reservation } from './reserve';

export type { PendingJob } from './pending-job';
export type { Hold, Reservation } from './reserve';

/** `greedy`: start whatever fits (§21.2); `reserve`: the first blocked large job reserves (§21.3). */
export type SchedulerMode = 'greedy' | 'reserve';

export interface Decision { id: number; devices: Device[] }

export interface SchedulerInput {
  /** In the order of order.ts (the daemon's queue keeps it); an array out of order is sorted. */
  pending: Iterable<PendingJob>;
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
   * unknown…): read only to word reasons, and by `reserve` to count a
   * device just released (`settling`) as about to be free. A device missing
   * here reads as "not free".
   */
  blocked?: ReadonlyMap<string, DeviceBlock>;
  /** Device groups and the host's affinity (docs/behaviour.md §21.5); absent: first fit. */
  topology?: Topology;
  /** Default `greedy`. */
  mode?: SchedulerMode;
  /** `reserve`: the least device count whose job may reserve (default 2). */
  reserveMinDevices?: number;
  /** `max_running_by_size`: device count → most running jobs holding exactly that many. */
  sizeLimits?: ReadonlyMap<number, number>;
  /** RUNNING jobs per device count (needed for the counts of `sizeLimits`). */
  runningBySize?: ReadonlyMap<number, number>;
  /** `reserve`: the holder of each held device and its expected end. */
  holds?: ReadonlyMap<string, Hold>;
  /** `reserve`: the time (Unix seconds), for backfill and the expected ends of this pass's starts. */
  now?: number;
  /** Held, not yet begun, or waiting for a dependency: never started, with this reason (admit.ts). */
  waits?: ReadonlyMap<number, Reason>;
}

export interface Pass {
  decisions: Decision[];
  /** `reserve`: the reservations this pass made, at most one per vendor pool. */
  reservations: Reservation[];
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
  if (input.waits) state.waits = input.waits; // live: a reason read later sees the gates as they are then
  if (input.sizeLimits?.size) {
    state.sizeLimits = input.sizeLimits;
    state.runningBySize = new Map(input.runningBySize ?? []);
  }
  // Devices taken in this pass, with the job that takes them (for reasons).
  const taken = new Map<string, PendingJob>();
  const reservations: Reservation[] = [];
  // Reserved device key → its reservation.
  const reservedKeys = new Map<string, Reservation>();
  const now = input.now ?? 0;
  const pass = (): Pass => ({ decisions, reservations, reasonOf: reasons(input, state, decisions, taken, reservations, reservedKeys, now) });
  if (admitNone(state)) return pass();
  const usable = (d: Device) => { const k = deviceKey(d); return input.free.has(k) && !taken.has(k); };
  // Free devices per vendor: a job asking for more than any pool has free
  // cannot fit, so it is skipped without allocation work (keeps a pass over a
  // long queue of large requests cheap).
  const freeOf = new Map<string, number>();
  for (const d of input.inventory) if (input.free.has(deviceKey(d))) freeOf.set(d.kind, (freeOf.get(d.kind) ?? 0) + 1);
  let mostFree = Math.max(0, ...freeOf.values());
  let cpuOnlyLeft = input.cpuOnlyPending ?? Infinity;
  const reserving = input.mode === 'reserve';
  const minDevices = input.reserveMinDevices ?? 2;
  const pools = new Set(input.inventory.map((d) => d.kind)).size;
  // Request shapes that found no reservation in this pass: starts only turn
  // free devices into held ones, so such a shape finds none later either
  // (until a new reservation closes a pool, which only removes choices).
  const noReservation = new Set<number | string>();
  const availability = (d: Device): Availability => {
    const k = deviceKey(d);
    const j = taken.get(k);
    if (j) return { job: j.id, end: j.timeLimit === null ? null : now + j.timeLimit };
    if (input.free.has(k)) return 'free';
    // Released and not yet probed again: back at once, unless a job left a process on it.
    if (input.blocked?.get(k)?.state === 'settling') return 'free';
    return input.holds?.get(k) ?? null;
  };
  const closed = (kind: string) => reservations.some((r) => r.kind === kind);
  // Request shapes that found no devices while nothing was reserved: devices
  // are only taken (and reserved) as the pass goes on, so such a shape cannot
  // fit later in it either. Keeps a pass cheap when many jobs wait for room
  // within one device group (docs/behaviour.md §21.5).
  const noFit = new Set<number | string>();
  for (const job of order(input.pending)) {
    if (admitNone(state)) break;
    // Relies on count high first (order.ts): after the first job below the
    // minimum, none can reserve.
    const mayReserve = reserving && job.count >= minDevices && reservations.length < pools;
    if (mostFree === 0 && cpuOnlyLeft <= 0 && !mayReserve) break; // nothing left that could fit
    if (job.count === 0) cpuOnlyLeft--;
    if (admit(job, state)) continue;
    let devices: Device[] | null = null;
    if (job.count <= (job.kind ? freeOf.get(job.kind) ?? 0 : mostFree)) {
      const key = shapeKey(job);
      if (!noFit.has(key)) {
        devices = place(job, input.inventory, reservations.length === 0 ? usable : (d) => {
          if (!usable(d)) return false;
          const r = reservedKeys.get(deviceKey(d));
          return !r || mayBackfill(job.timeLimit, r, now);
        }, input.topology);
        if (!devices && reservations.length === 0) noFit.add(key);
      }
    }
    if (!devices) {
      if (mayReserve) {
        const key = shapeKey(job);
        if (noReservation.has(key)) continue;
        const r = reserveFor(job, job, input.inventory, availability, closed, now, input.topology);
        if (!r) { noReservation.add(key); continue; }
        reservations.push(r);
        for (const d of r.devices) reservedKeys.set(deviceKey(d), r);
        state.kept = reservations.length; // one max_running slot kept for each reserving job
        noReservation.clear();
      }
      continue;
    }
    for (const d of devices) taken.set(deviceKey(d), job);
    if (devices.length) {
      freeOf.set(devices[0]!.kind, freeOf.get(devices[0]!.kind)! - devices.length);
      mostFree = Math.max(0, ...freeOf.values());
    }
    decisions.push({ id: job.id, devices });
    admitted(job, state);
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

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** `nv:2,nv:3 reserved for job 9 (bob, 4 devices)`. */
export function describeReservation(r: Reservation): string {
  const who = r.owner === undefined ? plural(r.count, 'device') : `${r.owner}, ${plural(r.count, 'device')}`;
  return `${r.devices.map(deviceLabel).join(',')} reserved for job ${r.job} (${who})`;
}

const held = (job: number, owner: string | undefined): DeviceBlock =>
  owner === undefined ? { state: 'held', job } : { state: 'held', job, owner };

/** The reasonOf of a finished pass (see Pass). */
function reasons(
  input: SchedulerInput, end: AdmitState, decisions: readonly Decision[], taken: ReadonlyMap<string, PendingJob>,
  reservations: readonly Reservation[], reservedKeys: ReadonlyMap<string, Reservation>, now: number,
): Pass['reasonOf'] {
  let started: Set<number> | undefined;
  const byCode = new Map<string, Reason>();
  const byShape = new Map<number | string, Reason | null>();
  // The devices as the pass leaves them: what it took is held by the jobs it
  // started; a reserved device, unless `usable` says this job may backfill
  // onto it, is held by its reserving job.
  const situations = new Map<string, DeviceSituation>();
  const situation = (sig: string, usable?: (r: Reservation) => boolean): DeviceSituation => {
    let s = situations.get(sig);
    if (s) return s;
    const free = new Set(input.free);
    const blocked = new Map(input.blocked ?? NO_BLOCKS);
    for (const [k, job] of taken) {
      free.delete(k);
      blocked.set(k, held(job.id, job.owner));
    }
    if (usable) {
      for (const [k, r] of reservedKeys) {
        if (usable(r) || !free.has(k)) continue;
        free.delete(k);
        blocked.set(k, held(r.job, r.owner));
      }
    }
    situations.set(sig, s = input.topology ? { inventory: input.inventory, free, blocked, topology: input.topology } : { inventory: input.inventory, free, blocked });
    return s;
  };
  const reserver = new Map(reservations.map((r) => [r.job, r]));
  return (job) => {
    started ??= new Set(decisions.map((d) => d.id));
    if (started.has(job.id)) return null;
    if (reserver.has(job.id)) {
      // Waits for the held devices it reserved: explained without reservations.
      return explainPlace(job, situation('')) ?? { code: 'Resources', message: describeReservation(reserver.get(job.id)!) };
    }
    // A job's own wait (held, begin time, dependency) says more than the host's state.
    const own = end.waits?.get(job.id);
    if (own) return own;
    const code = admitNone(end) ?? admit(job, end);
    if (code) {
      const ck = code === 'SizeLimit' ? `${code}|${job.count}` : code;
      let r = byCode.get(ck);
      if (!r) byCode.set(ck, r = explainAdmit(code, end, job));
      return r;
    }
    if (reservations.length === 0) {
      const key = shapeKey(job);
      let r = byShape.get(key);
      if (r === undefined) byShape.set(key, r = explainPlace(job, situation('')));
      return r;
    }
    // Which reservations this job may backfill onto.
    let sig = '';
    for (const r of reservations) sig += mayBackfill(job.timeLimit, r, now) ? '1' : '0';
    const key = `${shapeKey(job)}|${sig}`;
    let r = byShape.get(key);
    if (r === undefined) {
      const s = situation(sig, (res) => sig[reservations.indexOf(res)] === '1');
      r = explainPlace(job, s);
      // Would it fit but for the reservations it may not backfill onto? Then they are the reason.
      if (r && place(job, input.inventory, (d) => { const k = deviceKey(d); return input.free.has(k) && !taken.has(k); }, input.topology)) {
        const kinds = job.kind ? [job.kind] : KINDS;
        const blocking = reservations.filter((res, i) => sig[i] === '0' && kinds.includes(res.kind));
        if (blocking.length) r = { code: 'Reservation', message: blocking.map(describeReservation).join('; ') };
      }
      byShape.set(key, r);
    }
    return r;
  };
}
