import type { Caller, Core } from '../core';
import type { Handler } from './types';

/** Owner or root for every id, before anything changes. */
function authorise(core: Core, caller: Caller, ids: readonly number[]): void {
  for (const id of ids) core.jobFor(caller, id);
}

/** `xlurm hold ID…` (docs/behaviour.md §23.3): answered once durable. */
export const hold = (({ core, caller }, { ids }) => {
  authorise(core, caller, ids);
  return core.setHeld(ids, true).then(() => ({}));
}) satisfies Handler<'hold'>;

/** `xlurm release ID…`: the jobs may start again; their queue wait starts now. */
export const release = (({ core, caller }, { ids }) => {
  authorise(core, caller, ids);
  return core.setHeld(ids, false).then(() => ({}));
}) satisfies Handler<'release'>;
