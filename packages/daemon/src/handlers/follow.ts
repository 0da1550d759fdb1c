import { logStream } from './log-stream';
import type { Handler } from './types';

/** State changes and log bytes until the job has a result and the log is drained. */
export const follow = (({ core, caller }, { id, offset, bytes }) =>
  logStream(core, caller, id, offset ?? 0, true, bytes !== false)) satisfies Handler<'follow'>;
