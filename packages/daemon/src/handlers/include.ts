import { changeExclusions } from './exclude';
import type { Handler } from './types';

export const include: Handler<'include'> = (ctx, { ids }) => changeExclusions(ctx, ids, false);
