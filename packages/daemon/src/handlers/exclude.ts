import { XlurmError } from '@xlurm/protocol';
import type { Core } from '../core';
import { requireAdmin } from './admin';
import type { Ctx, Handler } from './types';

/** Validate the whole list before changing anything; repeating is harmless. */
export function changeExclusions(ctx: Ctx, ids: number[], exclude: boolean): { excluded: number[] } {
  const core: Core = ctx.core;
  requireAdmin(core, ctx.caller, 'exclude or include devices');
  const unknown = ids.filter((id) => !core.devices.hasId(id));
  if (unknown.length) throw new XlurmError('UNKNOWN_DEVICE', `unknown device ID(s): ${unknown.join(', ')}`);
  for (const id of ids) {
    if (exclude) core.devices.excluded.add(id); else core.devices.excluded.delete(id);
  }
  core.log(`${exclude ? 'excluded' : 'included'} device IDs ${ids.join(',')}`);
  // Running jobs are never touched; pending ones may now fit (include).
  core.scheduleSoon();
  return { excluded: [...core.devices.excluded].sort((a, b) => a - b) };
}

export const exclude: Handler<'exclude'> = (ctx, { ids }) => changeExclusions(ctx, ids, true);
