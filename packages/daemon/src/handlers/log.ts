import { logStream } from './log-stream';
import type { Handler } from './types';

/** The log from `offset` to its current end (owner or root). */
export const log = (({ core, caller }, { id, offset }) => logStream(core, caller, id, offset ?? 0, false)) satisfies Handler<'log'>;
