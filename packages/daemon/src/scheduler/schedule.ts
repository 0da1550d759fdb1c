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
import { admit, admitNone, admitted, explainAdmit, ownerAtJobLimit, ownerDeviceRoom, type AdmitState } from './admit';
import type { HostRoom } from './host-fit';
import { compareKeys, order, type UsageOf } from './order';
import type { UserHolding, UserLimitTable } from './user-limits';
import { describeBlock, deviceKey, deviceLabel, explainPlace, place, type DeviceBlock, type DeviceSituation, type Topology } from './place';
import type { PendingJob, QueueWalk } from './pending-job';
import { mayBackfill, reserveFor, type Availability, type Hold, type Reservation } from './reserve';
import { SliceBook, explainShare, type SliceCards } from './sharing';

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
  /** RUNNING tasks per throttled array (`--array …%N`, docs/behaviour.md §23.2). */
  arrayRunning?: ReadonlyMap<number, number>;
  /** `reserve`: the holder of each held device and its expected end. */
  holds?: ReadonlyMap<string, Hold>;
  /** `reserve`: the time (Unix seconds), for backfill and the expected ends of this pass's starts. */
  now?: number;
  /**
   * Card sharing on (docs/behaviour.md §25.2, sharing.ts): the cards that may
   * take slices now, with their room; absent: `--share` jobs never start.
   */
  slices?: SliceCards;
  /** Held, not yet begun, or waiting for a dependency: never started, with this reason (admit.ts). */
  waits?: ReadonlyMap<number, Reason>;
  /** Host CPUs and memory with MemAvailable now (docs/behaviour.md §24.2, host-fit.ts); absent: not checked. */
  host?: HostRoom;
  /** Fair share on: owner name → decayed usage, the order's third key (order.ts, docs/behaviour.md §22.2). */
  usage?: UsageOf;
  /** Per-user limits (user-limits.ts) and what each user's running jobs hold now. */
  userLimits?: UserLimitTable;
  byUser?: ReadonlyMap<string, UserHolding>;
  /** How many of `pending` ask for each device count, when the caller knows: the pass then stops once none left could fit. */
  pendingCounts?: ReadonlyMap<number, number>;
  /**
   * `reserve`: how many of `pending` ask for at least reserveMinDevices, when
   * the caller knows: once none is left and no device is free, the pass stops.
   */
  reservablePending?: number;
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
  if (input.host) state.host = { ...input.host };
  if (input.arrayRunning?.size) state.arrayRunning = new Map(input.arrayRunning);
  if (input.sizeLimits?.size) {
    state.sizeLimits = input.sizeLimits;
    state.runningBySize = new Map(input.runningBySize ?? []);
  }
  if (input.userLimits) {
    state.userLimits = input.userLimits;
    state.byUser = new Map([...input.byUser ?? []].map(([k, h]) => [k, { ...h }]));
  }
  // Device jobs that found no devices, first few per vendor, for `Priority` reasons.
  const waiting: Waiting = new Map();
  // Devices taken in this pass, with the job that takes them (for reasons).
  const taken = new Map<string, PendingJob>();
  const reservations: Reservation[] = [];
  // Reserved device key → its reservation.
  const reservedKeys = new Map<string, Reservation>();
  const now = input.now ?? 0;
  // Slices placed in this pass update their cards' room (sharing.ts); the reasons read the end state.
  const book = input.slices ? new SliceBook(input.slices) : undefined;
  const pass = (): Pass => ({ decisions, reservations, reasonOf: reasons(input, state, decisions, taken, reservations, reservedKeys, now, waiting, book) });
  if (admitNone(state)) return pass();
  const usable = (d: Device) => { const k = deviceKey(d); return input.free.has(k) && !taken.has(k); };
  // Free devices per vendor: a job asking for more than any pool has free
  // cannot fit, so it is skipped without allocation work (keeps a pass over a
  // long queue of large requests cheap).
  const freeOf = new Map<string, number>();
  for (const d of input.inventory) if (input.free.has(deviceKey(d))) freeOf.set(d.kind, (freeOf.get(d.kind) ?? 0) + 1);
  let mostFree = Math.max(0, ...freeOf.values());
  let cpuOnlyLeft = input.cpuOnlyPending ?? Infinity;
  let reservableLeft = input.reservablePending ?? Infinity;
  // The requested counts still ahead in the walk, when the caller knows them:
  // once the smallest of them exceeds every pool's free devices, no later job
  // can fit (priority, nice and usage come before the count, so a long tail of
  // large jobs is not after the small ones any more).
  const sizes = input.pendingCounts ? [...input.pendingCounts].filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]) : undefined;
  const sizeLeft = sizes?.map(([, n]) => n);
  const sizeAt = sizes ? new Map(sizes.map(([c], i) => [c, i])) : undefined;
  let smallest = 0;
  const smallestLeft = (): number => {
    while (smallest < sizes!.length && sizeLeft![smallest]! <= 0) smallest++;
    return smallest < sizes!.length ? sizes![smallest]![0] : Infinity;
  };
  let seq = 0;
  // Whether any job seen had a key before the count (then jobs past an early stop may be behind by it).
  let keyed = !!input.usage?.size;
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
  const walk: Iterator<PendingJob> & Partial<QueueWalk> = order(input.pending, input.usage)[Symbol.iterator]();
  for (let next = walk.next(); !next.done; next = walk.next()) {
    const job = next.value;
    if (admitNone(state)) break;
    seq++;
    const mayReserve = reserving && job.count >= minDevices && reservations.length < pools;
    // Priority, nice and fair share come before the count (order.ts): a
    // larger job that could still reserve may come after a smaller one.
    const reserveLater = reserving && reservations.length < pools && reservableLeft > 0;
    if (job.priority || job.nice || job.top) keyed = true;
    const nothingFits = sizes ? smallestLeft() > mostFree : mostFree === 0 && cpuOnlyLeft <= 0;
    if (nothingFits && !book?.size && !mayReserve && !reserveLater) { // nothing left that could fit
      if (job.count > 0 && !admit(job, state)) noteWaiting(waiting, job, seq);
      break;
    }
    if (job.count === 0) cpuOnlyLeft--;
    if (sizeAt) { const i = sizeAt.get(job.count); if (i !== undefined) sizeLeft![i]!--; }
    if (job.count >= minDevices) reservableLeft--;
    const refused = admit(job, state);
    if (refused) {
      // Jobs that cannot start in the rest of this pass either (limits only fill up in it):
      // the queue (the daemon's, which can) skips them without walking them one by one.
      // An owner at their running-jobs limit can start nothing more; one at their device
      // limit nothing larger than the room left; an array at its throttle no more tasks.
      if (refused === 'UserLimit') {
        if (ownerAtJobLimit(job, state)) walk.skipOwner?.();
        else {
          const room = ownerDeviceRoom(job, state);
          if (room !== null && job.count > room) walk.skipOwnerFrom?.(Math.max(1, room + 1));
        }
      } else if (refused === 'ArrayLimit') walk.skipArray?.(job.arrayId!);
      continue;
    }
    if (job.share) { // a slice of each device (docs/behaviour.md §25.2): never a card taken whole or reserved
      const got = book?.place(job, input.inventory, (d) => {
        const k = deviceKey(d);
        const t = taken.get(k);
        return (!t || !!t.share) && !reservedKeys.has(k);
      });
      if (!got) { noteWaiting(waiting, job, seq); continue; }
      for (const d of got) {
        const k = deviceKey(d);
        if (taken.has(k)) continue;
        taken.set(k, job);
        if (input.free.has(k)) { freeOf.set(d.kind, freeOf.get(d.kind)! - 1); mostFree = Math.max(0, ...freeOf.values()); }
      }
      decisions.push({ id: job.id, devices: got });
      admitted(job, state);
      continue;
    }
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
      if (job.count > 0) noteWaiting(waiting, job, seq);
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
  // A pass that stopped early (no device left) still names the first jobs
  // behind it that wait for devices: those a later job is behind (§22.3).
  if (keyed && !admitNone(state)) {
    for (let k = 0; k < LOOKAHEAD; k++) {
      const next = walk.next();
      if (next.done) break;
      if (next.value.count > 0 && !admit(next.value, state)) noteWaiting(waiting, next.value, ++seq);
    }
  }
  walk.return?.();
  return pass();
}

/**
 * Device jobs the pass found no devices for, the first few per vendor (''
 * for jobs of any vendor), in the pass's order: who a later job waiting for
 * the same devices is behind (docs/behaviour.md §22.3).
 */
type Waiting = Map<string, Array<{ job: PendingJob; seq: number }>>;

/** How many jobs past an early stop a pass looks at for `Priority` reasons. */
const LOOKAHEAD = 32;

/** How many waiting jobs a `Priority` reason names. */
const NAMED_AHEAD = 3;

function noteWaiting(w: Waiting, job: PendingJob, seq: number): void {
  const k = job.kind ?? '';
  let l = w.get(k);
  if (!l) w.set(k, l = []);
  // One more than is named, to know whether there are others.
  if (l.length <= NAMED_AHEAD) l.push({ job, seq });
}

/**
 * The `Priority` reason of a job that waits for devices while jobs ahead of
 * it by priority, nice or fair share wait for the same ones (ahead only by
 * size or submission order is the reference's queue: `Resources` then), or
 * null. `usage`: the pass's fair-share input.
 */
function priorityReason(job: PendingJob, w: Waiting, usage: UsageOf | undefined): Reason | null {
  if (w.size === 0) return null;
  const u = (o: string | undefined) => (usage && o !== undefined ? usage.get(o) ?? 0 : 0);
  const mine = u(job.owner);
  const ahead: Array<{ job: PendingJob; seq: number }> = [];
  const lists = job.kind ? [w.get(job.kind), w.get('')] : [...w.values()];
  for (const l of lists) {
    if (!l) continue;
    for (const e of l) {
      if (e.job.id === job.id) continue;
      // Ahead by the keys before the count: priority, nice, usage.
      if (compareKeys(e.job.priority ?? 0, e.job.nice ?? 0, u(e.job.owner), 0, 0, job.priority ?? 0, job.nice ?? 0, mine, 0, 0) < 0) ahead.push(e);
    }
  }
  if (ahead.length === 0) return null;
  ahead.sort((a, b) => a.seq - b.seq);
  const named = ahead.slice(0, NAMED_AHEAD).map((e) => (e.job.owner === undefined ? `${e.job.id}` : `${e.job.id} (${e.job.owner})`));
  const more = ahead.length > NAMED_AHEAD ? ' and others' : '';
  const message = ahead.length === 1
    ? `job ${named[0]} is ahead and waits for the same devices`
    : `jobs ${named.join(', ')}${more} are ahead and wait for the same devices`;
  return { code: 'Priority', message };
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
  waiting: Waiting, book?: SliceBook,
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
      // A card sliced in this pass is shared, not held (docs/behaviour.md §25.2).
      const was = blocked.get(k);
      blocked.set(k, !job.share ? held(job.id, job.owner) : { state: 'shared', jobs: [...was?.state === 'shared' ? was.jobs : [], job.id] });
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
  // `Priority` depends on the job's vendor and its keys before the count, not only on its request.
  const byPriority = new Map<string, Reason | null>();
  const behind = (job: PendingJob, r: Reason | null): Reason | null => {
    if (!r || r.code !== 'Resources' || waiting.size === 0) return r;
    const u = input.usage && job.owner !== undefined ? input.usage.get(job.owner) ?? 0 : 0;
    const key = `${job.kind ?? ''}|${job.priority ?? 0}|${job.nice ?? 0}|${u}`;
    let p = byPriority.get(key);
    if (p === undefined) byPriority.set(key, p = priorityReason(job, waiting, input.usage));
    return p ?? r;
  };
  return (job) => behind(job, reasonFor(job));
  function reasonFor(job: PendingJob): Reason | null {
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
      const ck = code === 'SizeLimit' ? `${code}|${job.count}` : code === 'ArrayLimit' ? `${code}|${job.arrayId}`
        : code === 'UserLimit' ? `${code}|${job.owner}|${job.uid}|${job.count}|${job.cpus ?? 0}|${job.mem ?? 0}`
        : code === 'HostResources' ? `${code}|${job.cpus ?? 0}|${job.mem ?? 0}` : code;
      let r = byCode.get(ck);
      if (!r) byCode.set(ck, r = explainAdmit(code, end, job));
      return r;
    }
    if (job.share) {
      const key = `share|${shapeKey(job)}|${job.share.mem}|${job.share.compute}`;
      let r = byShape.get(key);
      if (r === undefined) {
        const blocks = input.blocked ?? NO_BLOCKS;
        byShape.set(key, r = book
          ? explainShare(job, book, input.inventory, (d) => describeBlock(blocks.get(deviceKey(d))))
          : { code: 'DevicesUnavailable', message: 'sharing is not enabled on this host' }); // turned off by a reload
      }
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
  }
}
