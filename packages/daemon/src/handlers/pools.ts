import type { Handler } from './types';
import type { Core } from '../core';
import { pools as poolViews, type PoolReservation, type PoolsInput } from '../scheduler/pools';

/**
 * The policy pieces `xinfo --pools` shows, read from Core only where Core
 * offers them: the device groups and affinity, and the reservations of the
 * reserve mode. Without them a pool shows no groups (unknown topology) and no
 * reservation.
 */
interface PolicyFacts {
  topology?: () => { affinity: PoolsInput['affinity']; groups: ReadonlyMap<string, readonly (readonly number[])[]> };
  reservations?: () => ReadonlyMap<string, PoolReservation>;
}

export function poolsOf(core: Core): ReturnType<typeof poolViews> {
  const facts = core as unknown as PolicyFacts;
  const topo = typeof facts.topology === 'function' ? facts.topology.call(core) : undefined;
  const reservations = typeof facts.reservations === 'function' ? facts.reservations.call(core) : undefined;
  return poolViews({
    views: core.devices.views(),
    free: core.devices.freeKeys(),
    kinds: core.devices.kinds,
    groups: topo?.groups,
    affinity: topo?.affinity,
    slotFree: core.runningIds().length < core.cfg.maxRunning,
    reservations,
  });
}

export const pools = (({ core }) => poolsOf(core)) satisfies Handler<'pools'>;
