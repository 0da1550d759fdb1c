import { requireAdmin } from './admin';
import type { Handler } from './types';

/** Administrator only; Core checks the whole list before changing anything. */
export const include = (({ core, caller }, { ids }) => {
  requireAdmin(core, caller, 'exclude or include devices');
  return { excluded: core.include(ids) };
}) satisfies Handler<'include'>;
