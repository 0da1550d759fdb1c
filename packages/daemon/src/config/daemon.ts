/**
 * The daemon's effective settings: each key from its command-line option if
 * one was given, else from the configuration file, else its default. Made
 * at start and again on every reload (the options given at start still win
 * then). Only the `[daemon]` table takes effect in this version.
 */
import * as path from 'node:path';
import { parseBackend, sizeBytes } from '@xlurm/protocol';
import { DEFAULT_USER_LIMITS, userLimitsFromFile, type UserLimitTable, type UserLimitsFileTable } from '../scheduler/user-limits';
import { DEFAULT_MAX_ARRAY_TASKS, DEFAULT_MAX_REQUEST_BYTES, requestLimitsOf } from './request-limits';
import { durationSecs, type DaemonArgs, type DaemonFlags } from './args';
import { ConfigFileError, DEFAULT_CONFIG_PATH, readConfigFile } from './load';
import { kindOfLabel, parseGroups, type DeclaredGroups } from './groups';
import { accountingSettings, type AccountingSettings } from '../accounting/settings';
import { resourcesSettings, type ResourcesSettings } from '../resources/settings';
import { sharingSettings, type SharingSettings } from '../sharing/settings';

export interface DaemonSettings {
  backend: string;
  maxRunning: number;
  /** As written (`7d`), for display; retentionSecs is what counts. */
  retention: string;
  retentionSecs: number;
  excludeIds: number[];
  /** `[daemon] max_connections` and `max_connections_per_user` (docs/behaviour.md §28.3); absent: server.ts's defaults. */
  maxConnections?: number;
  maxConnectionsPerUser?: number;
  /** `[devices]` (docs/behaviour.md §21.5): the host's affinity, and the groups declared per vendor. */
  groupAffinity: 'prefer' | 'require' | 'off';
  groups: DeclaredGroups;
  /** `[scheduler]` (docs/behaviour.md §21.2–§21.4). */
  schedulerMode: 'greedy' | 'reserve';
  reserveMinDevices: number;
  /** Device count → most running jobs holding exactly that many. */
  maxRunningBySize: ReadonlyMap<number, number>;
  /** `[limits]` (docs/behaviour.md §21.6), in seconds; null: not set. */
  defaultTimeLimit: number | null;
  maxTimeLimit: number | null;
  killGrace: number;
  defaultQueueTimeout: number | null;
  /** `[limits] max_array_tasks`, `max_request_bytes` (docs/behaviour.md §28.2); 0: the protocol's own cap. */
  maxArrayTasks: number;
  maxRequestBytes: number;
  /** Fairness (docs/behaviour.md §22.2, §22.4): fair share, its half-life in seconds, the per-user limits. */
  fairShare: boolean;
  fairShareHalfLife: number;
  userLimits: UserLimitTable;
  /** `[accounting]` (docs/behaviour.md §26.2, §26.3); absent: its defaults (accounting/settings.ts). */
  accounting?: AccountingSettings;
  /** `[resources]` (docs/behaviour.md §24); absent: its defaults (resources/settings.ts). */
  resources?: ResourcesSettings;
  /** `[sharing]` (docs/behaviour.md §25); absent: sharing off. */
  sharing?: SharingSettings;
}

/** Where the settings came from: what a reload reads again and re-applies. */
export interface ConfigSource {
  /** Absolute path of the configuration file. */
  file: string;
  /** Named by --config or XLURM_CONFIG: then it must exist. */
  named: boolean;
  found: boolean;
  /** Line of each key the file sets. */
  lines: ReadonlyMap<string, number>;
  args: DaemonArgs;
}

export interface DaemonConfig extends DaemonSettings {
  source: ConfigSource;
}

export const DEFAULT_SETTINGS: Readonly<DaemonSettings> = {
  backend: 'auto', maxRunning: 32, retention: '7d', retentionSecs: 7 * 86400, excludeIds: [],
  groupAffinity: 'prefer', groups: {},
  defaultTimeLimit: null, maxTimeLimit: null, killGrace: 1, defaultQueueTimeout: null,
  maxArrayTasks: DEFAULT_MAX_ARRAY_TASKS, maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
  schedulerMode: 'greedy', reserveMinDevices: 2, maxRunningBySize: new Map(),
  fairShare: true, fairShareHalfLife: 7 * 86400, userLimits: { default: DEFAULT_USER_LIMITS, users: new Map() },
};

/** Each setting's key in the file and its option, in the file's order. */
export const DAEMON_KEYS: ReadonlyArray<{ field: keyof DaemonFlags & keyof DaemonSettings; key: string; option: string }> = [
  { field: 'backend', key: 'daemon.backend', option: '--backend' },
  { field: 'maxRunning', key: 'daemon.max_running', option: '--max-running' },
  { field: 'retention', key: 'daemon.retention', option: '--retention' },
  { field: 'excludeIds', key: 'daemon.exclude_device_ids', option: '--exclude-device-ids' },
];

/**
 * The file the daemon reads: --config, else XLURM_CONFIG from the daemon's
 * own environment (never a job's: jobs do not start daemons), else the
 * default path.
 */
export function configPath(args: DaemonArgs, env: NodeJS.ProcessEnv): { file: string; named: boolean } {
  if (args.config !== undefined) return { file: args.config, named: true };
  const fromEnv = env.XLURM_CONFIG;
  if (fromEnv) return { file: path.resolve(fromEnv), named: true };
  return { file: DEFAULT_CONFIG_PATH, named: false };
}

/** Read the file and combine it with the options; throws ConfigFileError. */
export function loadDaemonConfig(args: DaemonArgs, where: { file: string; named: boolean }): DaemonConfig {
  const loaded = readConfigFile(where.file, where.named);
  const d = loaded.settings.daemon ?? {};
  const s: DaemonSettings = { ...DEFAULT_SETTINGS, excludeIds: [], groups: {} };
  // The schema allows only known names; labels (`nv`) become kinds, as for --backend.
  if (d.backend !== undefined) s.backend = parseBackend(d.backend) ?? d.backend;
  if (d.max_running !== undefined) s.maxRunning = d.max_running;
  if (d.retention !== undefined) {
    s.retention = typeof d.retention === 'number' ? `${d.retention}s` : d.retention;
    s.retentionSecs = durationSecs(d.retention);
  }
  if (d.exclude_device_ids !== undefined) s.excludeIds = [...d.exclude_device_ids];
  if (d.max_connections !== undefined) s.maxConnections = d.max_connections;
  if (d.max_connections_per_user !== undefined) s.maxConnectionsPerUser = d.max_connections_per_user;
  const l = loaded.settings.limits ?? {};
  if (l.default_time_limit !== undefined) s.defaultTimeLimit = durationSecs(l.default_time_limit);
  if (l.max_time_limit !== undefined) s.maxTimeLimit = durationSecs(l.max_time_limit);
  if (l.kill_grace !== undefined) s.killGrace = durationSecs(l.kill_grace);
  if (l.default_queue_timeout !== undefined) s.defaultQueueTimeout = durationSecs(l.default_queue_timeout);
  Object.assign(s, requestLimitsOf(l));
  const dv = loaded.settings.devices ?? {};
  if (dv.group_affinity !== undefined) s.groupAffinity = dv.group_affinity;
  for (const [label, text] of Object.entries(dv.groups ?? {})) {
    const kind = kindOfLabel(label);
    if (text === undefined || !kind) continue; // the schema allows only labels
    const groups = parseGroups(text);
    const key = `devices.groups.${label}`;
    if (typeof groups === 'string') throw new ConfigFileError([{ file: loaded.file, line: loaded.lines.get(key), key, problem: groups }]);
    s.groups[kind] = groups;
  }
  const sc = loaded.settings.scheduler ?? {};
  if (sc.mode !== undefined) s.schedulerMode = sc.mode;
  if (sc.reserve_min_devices !== undefined) s.reserveMinDevices = sc.reserve_min_devices;
  if (sc.max_running_by_size !== undefined) {
    s.maxRunningBySize = new Map(Object.entries(sc.max_running_by_size as Record<string, number>).map(([k, v]) => [Number(k), v]));
  }
  if (sc.fair_share !== undefined) s.fairShare = sc.fair_share;
  if (sc.fair_share_half_life !== undefined) s.fairShareHalfLife = durationSecs(sc.fair_share_half_life);
  s.userLimits = userLimitsFromFile(l.users as Record<string, UserLimitsFileTable> | undefined, sizeBytes);
  const acc = accountingSettings(loaded.settings.accounting);
  if ('problem' in acc) throw new ConfigFileError([{ file: loaded.file, line: loaded.lines.get(acc.key), key: acc.key, problem: acc.problem }]);
  // Without the table: the defaults (accounting/settings.ts), and `config show` leaves it out.
  if (loaded.settings.accounting !== undefined) s.accounting = acc;
  if (loaded.settings.resources !== undefined) { // absent: every default (resources/room.ts resourcesOf)
    const res = resourcesSettings(loaded.settings.resources);
    if ('problem' in res) throw new ConfigFileError([{ file: loaded.file, line: loaded.lines.get(res.key), key: res.key, problem: res.problem }]);
    s.resources = res;
  }
  if (loaded.settings.sharing !== undefined) s.sharing = sharingSettings(loaded.settings.sharing);
  const f = args.flags;
  if (f.backend !== undefined) s.backend = f.backend;
  if (f.maxRunning !== undefined) s.maxRunning = f.maxRunning;
  if (f.retention !== undefined && f.retentionSecs !== undefined) { s.retention = f.retention; s.retentionSecs = f.retentionSecs; }
  if (f.excludeIds !== undefined) s.excludeIds = [...f.excludeIds];
  return { ...s, source: { file: loaded.file, named: where.named, found: loaded.found, lines: loaded.lines, args } };
}

/** Dotted keys that an option set (these ignore the file). */
export function keysFromFlags(cfg: DaemonConfig): string[] {
  return DAEMON_KEYS.filter((k) => cfg.source.args.flags[k.field] !== undefined).map((k) => k.key);
}
