import { PROTOCOL_VERSION, VERSION, formatSize } from '@xlurm/protocol';
import type { Handler } from './types';
import { describeUserLimits, type UserLimitTable } from '../scheduler/user-limits';
import type { Core } from '../core';

/** The policy settings, each read only where this daemon's configuration has it. */
interface PolicySettings {
  schedulerMode?: string; fairShare?: boolean; groupAffinity?: string; reserveMinDevices?: number;
  maxRunningBySize?: ReadonlyMap<number, number>;
  defaultTimeLimit?: number | null; maxTimeLimit?: number | null; killGrace?: number; defaultQueueTimeout?: number | null;
  fairShareHalfLife?: number; userLimits?: UserLimitTable;
  maxArrayTasks?: number; maxRequestBytes?: number;
}

/** `7d`, `12h`, `30m`, `45s`: the largest unit that divides the value. */
function duration(secs: number): string {
  for (const [unit, n] of [['d', 86400], ['h', 3600], ['m', 60]] as const) if (secs > 0 && secs % n === 0) return `${secs / n}${unit}`;
  return `${secs}s`;
}

/** The scheduling policy in force, for `xlurm status` (docs/behaviour.md §21.7). */
export function policyOf(core: Core): { scheduler: string; fair_share: boolean; group_affinity: string; limits: Record<string, string> } {
  const c = core.cfg as unknown as PolicySettings;
  const mode = c.schedulerMode ?? 'greedy';
  const limits: Record<string, string> = {};
  if (mode === 'reserve' && c.reserveMinDevices !== undefined) limits['scheduler.reserve_min_devices'] = String(c.reserveMinDevices);
  if (c.maxRunningBySize && c.maxRunningBySize.size > 0) {
    limits['scheduler.max_running_by_size'] = [...c.maxRunningBySize].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}=${v}`).join(',');
  }
  const times: Array<[string, number | null | undefined]> = [
    ['limits.default_time_limit', c.defaultTimeLimit], ['limits.max_time_limit', c.maxTimeLimit],
    ['limits.kill_grace', c.killGrace], ['limits.default_queue_timeout', c.defaultQueueTimeout],
  ];
  for (const [key, v] of times) if (v !== null && v !== undefined) limits[key] = duration(v);
  // Bounded requests (docs/behaviour.md §28.2); 0: the protocol's own caps.
  if (c.maxArrayTasks !== undefined) limits['limits.max_array_tasks'] = String(c.maxArrayTasks);
  if (c.maxRequestBytes !== undefined) limits['limits.max_request_bytes'] = c.maxRequestBytes ? formatSize(c.maxRequestBytes) : '0';
  // Fair share's half-life and the per-user limits in force (docs/behaviour.md §22.2, §22.4).
  if (c.fairShare && c.fairShareHalfLife !== undefined) limits['scheduler.fair_share_half_life'] = duration(c.fairShareHalfLife);
  Object.assign(limits, describeUserLimits(c.userLimits));
  return { scheduler: mode, fair_share: c.fairShare ?? false, group_affinity: c.groupAffinity ?? 'off', limits };
}

export const status = (({ core, caller, connections }) => {
  const counts = core.counts();
  // Who holds connections is other users' business: root only (docs/behaviour.md §28.3).
  const conns = caller.uid === 0 && connections ? { connections: connections() } : {};
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
    policy: policyOf(core),
    device_isolation: core.isolation?.state() ?? 'off (not set up)',
    ...conns,
  };
}) satisfies Handler<'status'>;
