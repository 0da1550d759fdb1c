import * as path from 'node:path';
import { KINDS, KIND_LABEL, formatDurationSecs, formatSize } from '@xlurm/protocol';
import { formatIds } from '../scheduler/place';
import { keysFromFlags } from '../config/daemon';
import { describeUserLimits, type UserLimitTable } from '../scheduler/user-limits';
import type { Handler } from './types';
import type { ResourcesSettings } from '../resources/settings';
import { sharingSettings, type SharingSettings } from '../sharing/settings';
import { DEFAULT_ACCOUNTING } from '../accounting/settings';
import { resourcesOf } from '../resources/room';

/** A limit that is set, as `{key: "1d"}`; nothing when it is not (as in the file). */
const shown = (key: string, secs: number | null): Record<string, string> => (secs === null ? {} : { [key]: formatDurationSecs(secs) });

/** `[limits.users.*]` that are set (docs/behaviour.md §22.4), as dotted `<user>.<key>`; nothing when none is. */
function userLimitsShown(t: UserLimitTable): { users?: Record<string, number | string> } {
  const users: Record<string, number | string> = {};
  for (const [k, v] of Object.entries(describeUserLimits(t))) {
    const key = k.slice('limits.users.'.length);
    users[key] = /^[0-9]+$/.test(v) ? Number(v) : v;
  }
  return Object.keys(users).length ? { users } : {};
}

/** `[sharing]` in force (docs/behaviour.md §25); without the table: off, no vendor. */
function sharingShown(s: SharingSettings, home: string) {
  return {
    enabled: s.enabled,
    ...Object.fromEntries([...s.vendors].map(([kind, v]) => [kind, { library: v.library, shared_region_dir: v.sharedRegionDir ?? path.join(home, 'hami'), policy: v.policy }])),
  };
}

/** `[resources]` in force (docs/behaviour.md §24): the file's, else every default. */
function resourcesShown(r: ResourcesSettings) {
  return {
    cpus: r.cpusText, memory: formatSize(r.memory), reserve_memory: formatSize(r.reserveMemory), min_available: formatSize(r.minAvailable),
    memory_high_ratio: r.memoryHighRatio, swap: r.swap, default_cpus: r.defaultCpus, default_memory: formatSize(r.defaultMemory),
    require_cgroup: r.requireCgroup, device_isolation: r.deviceIsolation, low_memory_floor: formatSize(r.lowMemoryFloor),
    low_memory_samples: r.lowMemorySamples, pids_max: r.pidsMax, private_tmp: r.privateTmp, private_tmp_size: formatSize(r.privateTmpSize),
  };
}

/** The effective settings (any user: the file holds no secrets, see config/load.ts). */
export const config: Handler<'config'> = ({ core }) => {
  const c = core.cfg;
  const acct = c.accounting ?? DEFAULT_ACCOUNTING;
  return {
    file: c.source.file,
    found: c.source.found,
    from_flags: keysFromFlags(c),
    config: {
      daemon: {
        backend: c.backend, max_running: c.maxRunning, retention: c.retention, exclude_device_ids: [...c.excludeIds],
        // Connection slots (docs/behaviour.md §28.3): shown where the file sets them, as the file does.
        ...(c.maxConnections !== undefined ? { max_connections: c.maxConnections } : {}),
        ...(c.maxConnectionsPerUser !== undefined ? { max_connections_per_user: c.maxConnectionsPerUser } : {}),
      },
      limits: {
        ...shown('default_time_limit', c.defaultTimeLimit), ...shown('max_time_limit', c.maxTimeLimit),
        kill_grace: formatDurationSecs(c.killGrace), ...shown('default_queue_timeout', c.defaultQueueTimeout),
        max_array_tasks: c.maxArrayTasks, max_request_bytes: c.maxRequestBytes ? formatSize(c.maxRequestBytes) : '0', // §28.2
        ...userLimitsShown(c.userLimits),
      },
      devices: {
        group_affinity: c.groupAffinity,
        groups: Object.fromEntries(KINDS.flatMap((k) => { const g = c.groups[k]; return g ? [[KIND_LABEL[k], g.map(formatIds).join(';')]] : []; })),
      },
      scheduler: {
        mode: c.schedulerMode, reserve_min_devices: c.reserveMinDevices,
        max_running_by_size: Object.fromEntries([...c.maxRunningBySize].sort((a, b) => a[0] - b[0]).map(([k, v]) => [String(k), v])),
        fair_share: c.fairShare, fair_share_half_life: formatDurationSecs(c.fairShareHalfLife),
      },
      // Every table, also one the file lacks: then its defaults are what is in force.
      accounting: {
        sample_interval: formatDurationSecs(acct.sampleInterval), retention: formatDurationSecs(acct.retentionSecs),
        metrics_file: acct.metricsFile,
      },
      resources: resourcesShown(resourcesOf(c)),
      sharing: sharingShown(c.sharing ?? sharingSettings({}), core.home),
    },
  };
};
