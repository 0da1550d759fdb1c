import { requireAdmin } from './admin';
import type { Handler } from './types';

/** Administrator only; Core checks the whole list before changing anything. */
export const exclude = (({ core, caller }, { ids }) => {
  requireAdmin(core, caller, 'exclude or include devices');
  return { excluded: core.exclude(ids) };
}) satisfies Handler<'exclude'>;
