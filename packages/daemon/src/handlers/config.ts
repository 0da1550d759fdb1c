import { keysFromFlags } from '../config/daemon';
import type { Handler } from './types';

/** The effective settings (any user: the file holds no secrets, see config/load.ts). */
export const config: Handler<'config'> = ({ core }) => {
  const c = core.cfg;
  return {
    file: c.source.file,
    found: c.source.found,
    from_flags: keysFromFlags(c),
    config: {
      daemon: { backend: c.backend, max_running: c.maxRunning, retention: c.retention, exclude_device_ids: [...c.excludeIds] },
    },
  };
};
