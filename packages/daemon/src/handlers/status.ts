import { PROTOCOL_VERSION, VERSION } from '@xlurm/protocol';
import type { Handler } from './types';

export const status = (({ core }) => {
  const counts = core.counts();
  return {
    version: VERSION,
    protocol: PROTOCOL_VERSION,
    pid: process.pid,
    uid: core.euid,
    backend: core.cfg.backend,
    backends: core.devices.kinds,
    max_running: core.cfg.maxRunning,
    retention_secs: core.cfg.retentionSecs,
    started_at: core.startedAt,
    uptime_secs: Math.max(0, core.now() - core.startedAt),
    excluded: core.excludedIds(),
    counts,
  };
}) satisfies Handler<'status'>;
