/**
 * The wire contract, defined once: each TypeBox schema is both the JSON Schema
 * the daemon compiles with ajv and (through Static) the TypeScript type both
 * sides use. Clients import only the types (`import type`), so TypeBox and ajv
 * never load in a client process.
 *
 * Key order in these objects is interface: `xqueue --json` and `xinfo --json`
 * print them as the daemon sends them (docs/behaviour.md §4.5, §4.6).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const JobId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'job id (never reused)' });
const UnixSeconds = Type.Integer({ description: 'unix time in seconds' });
/** Bounded so a huge number is an INVALID_REQUEST, not a failed read or SQL bind. */
const LogOffset = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'byte offset in the log' });

export const DeviceKind = Type.Union([
  Type.Literal('nvidia'), Type.Literal('ascend'), Type.Literal('mthreads'),
  Type.Literal('metax'), Type.Literal('ppu'), Type.Literal('hcu'),
], { description: 'vendor of a device' });
export type DeviceKind = Static<typeof DeviceKind>;

export const JobState = Type.Union([
  Type.Literal('PENDING'), Type.Literal('RUNNING'), Type.Literal('COMPLETED'),
  Type.Literal('FAILED'), Type.Literal('CANCELLED'), Type.Literal('TIMED_OUT'), Type.Literal('EXPIRED'),
  Type.Literal('OUT_OF_MEMORY'),
]);
export type JobState = Static<typeof JobState>;

export const TerminalState = Type.Union([
  Type.Literal('COMPLETED'), Type.Literal('FAILED'), Type.Literal('CANCELLED'), Type.Literal('TIMED_OUT'), Type.Literal('EXPIRED'),
  Type.Literal('OUT_OF_MEMORY'),
]);
export type TerminalState = Static<typeof TerminalState>;

export const Device = Type.Object({
  kind: DeviceKind,
  id: Type.Integer({ minimum: 0, description: 'per-vendor id: NVML index, Ascend logical id, …' }),
  name: Type.String({ description: 'model name' }),
  visible: Type.String({ description: 'stable identity: UUID, Ascend logical id, HCU unique id' }),
  npu: Nullable(Type.Integer()),
  chip: Nullable(Type.Integer()),
}, { additionalProperties: false });
export type Device = Static<typeof Device>;

export const Owner = Type.Object({
  uid: Type.Integer({ minimum: 0 }),
  gid: Type.Integer({ minimum: 0 }),
  name: Type.String(),
}, { additionalProperties: false });
export type Owner = Static<typeof Owner>;

/** What a client submits. It has no owner field: identity comes from SO_PEERCRED only. */
/** A slice of each device (--share, docs/behaviour.md §25.1). */
export const Share = Type.Object({
  mem: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'device memory per device, in bytes' }),
  compute: Type.Integer({ minimum: 1, maximum: 100, description: 'percent of each device\'s compute' }),
}, { additionalProperties: false });
export type Share = Static<typeof Share>;

export const Submission = Type.Object({
  command: Type.Array(Type.String(), { maxItems: 65536, description: 'argv; empty for batch scripts' }),
  cwd: Type.String({ minLength: 1, description: 'absolute working directory' }),
  env: Type.Record(Type.String(), Type.String(), { description: 'the complete environment, passed byte for byte' }),
  name: Type.String({ maxLength: 4096 }),
  count: Type.Integer({ minimum: 0, maximum: 1024, description: 'number of devices; 0 = CPU only' }),
  device_ids: Type.Optional(Type.Array(Type.Integer({ minimum: 0, maximum: 0xffffffff }), { maxItems: 1024 })),
  exclude_ids: Type.Optional(Type.Array(Type.Integer({ minimum: 0, maximum: 0xffffffff }), {
    maxItems: 4096, description: 'per-job exclusion (-x): device ids this job must not get; not with device_ids; omitted when absent',
  })),
  kind: Type.Optional(Nullable(DeviceKind)),
  time_limit: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }))),
  script: Type.Optional(Nullable(Type.String())),
  queue_timeout: Type.Optional(Nullable(Type.Integer({
    minimum: 1, maximum: Number.MAX_SAFE_INTEGER,
    description: '--timeout: seconds the job may stay PENDING, counted from submission; then EXPIRED. Null or omitted: the host\'s default_queue_timeout (in the stored job: the effective value, null = unlimited)',
  }))),
  immediate: Type.Optional(Type.Boolean({ description: 'xrun --immediate: EXPIRED unless it starts in its first scheduling pass' })),
  group_affinity: Type.Optional(Nullable(Type.Union([Type.Literal('require'), Type.Literal('off')], {
    description: "--group-affinity (require) / --ignore-group-affinity (off): overrides the host's group_affinity; null or omitted: the host's",
  }))),
  cpus: Type.Optional(Type.Integer({ minimum: 0, maximum: 0xffffffff, description: "-c/--cpus: host CPUs for the job; 0 or omitted: none asked (in the stored job: the effective value, after the host's default_cpus)" })),
  mem: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "--mem: host memory in bytes; 0 or omitted: none asked (in the stored job: the effective value, after the host's default_memory)" })),
  // Arrays, sweeps and notifications (docs/behaviour.md §23.2, §23.7).
  array: Type.Optional(Type.String({ maxLength: 65536, description: 'xbatch --array SPEC as written (0-99, 1,3,5, 0-99:10, each with an optional %N; %N alone beside params); never in a stored task' })),
  params: Type.Optional(Type.Array(Type.Object({
    name: Type.String({ maxLength: 256 }), values: Type.Array(Type.String(), { maxItems: 100000 }),
  }, { additionalProperties: false }), { maxItems: 64, description: '--param NAME=V1,V2 (repeatable): an array over the cartesian product, the last varying fastest; never in a stored task' })),
  param_rows: Type.Optional(Type.Object({
    names: Type.Array(Type.String({ maxLength: 256 }), { minItems: 1, maxItems: 64 }),
    rows: Type.Array(Type.Array(Type.String(), { maxItems: 64 }), { maxItems: 100000 }),
  }, { additionalProperties: false, description: '--param-file: the CSV header and one task per row; never in a stored task' })),
  notify: Type.Optional(Type.String({ minLength: 1, maxLength: 65536, description: '--notify CMD: run through bash -c as the owner once the job is terminal (docs/behaviour.md §23.7)' })),
  // Workflows (docs/behaviour.md §23.1, §23.3-§23.5).
  dependency: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 65536, description: '-d/--dependency: the list as submitted (afterok:ID[:ID…], afterany, afternotok, after, singleton; joined by ,); null or omitted: none' }))),
  begin_at: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: '--begin: unix seconds before which it does not start; null or omitted: at once' }))),
  hold: Type.Optional(Type.Boolean({ description: 'xbatch --hold: held until released (in the stored job: held now, as xlurm hold and release leave it)' })),
  retry: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, description: '--retry: how many times a FAILED run goes back to the queue; omitted: 0' })),
  // Fairness (docs/behaviour.md §22.1).
  nice: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, description: '--nice: 0..10000, higher waits behind the same user\'s and others\' jobs of equal priority; omitted: 0' })),
  // Card sharing (docs/behaviour.md §25.1).
  share: Type.Optional(Type.Union([Share, Type.Null()], { description: '--share MEM[,COMPUTE%]: a slice of each of its devices; null or omitted: whole devices' })),
}, { additionalProperties: false });
export type Submission = Static<typeof Submission>;

export const Outcome = Type.Object({
  state: TerminalState,
  exit_code: Type.Integer(),
  finished_at: UnixSeconds,
  error: Nullable(Type.String()),
  peak_memory: Type.Optional(Type.Integer({ minimum: 0, description: 'bytes: the most memory its cgroup held (docs/behaviour.md §24.5); only where the job had a cgroup' })),
  cpu_seconds: Type.Optional(Type.Number({ minimum: 0, description: 'CPU time its cgroup used; only where the job had a cgroup' })),
}, { additionalProperties: false });
export type Outcome = Static<typeof Outcome>;

/**
 * Why a PENDING job has not started (docs/behaviour.md §20.4). The
 * codes are interface: scripts match them; append only.
 */
export const ReasonCode = Type.Union([
  Type.Literal('Resources'), Type.Literal('Reservation'), Type.Literal('Priority'), Type.Literal('MaxRunning'),
  Type.Literal('SizeLimit'), Type.Literal('UserLimit'), Type.Literal('Dependency'), Type.Literal('BeginTime'),
  Type.Literal('Held'), Type.Literal('DevicesUnavailable'), Type.Literal('Topology'),
], { description: 'what stops a pending job from starting' });
export type ReasonCode = Static<typeof ReasonCode>;

export const Reason = Type.Object({
  code: ReasonCode,
  message: Type.String({ description: 'what blocks it: job ids, owners, device labels; never a command, environment or path' }),
}, { additionalProperties: false });
export type Reason = Static<typeof Reason>;

/** An array task's place in its array (docs/behaviour.md §23.2); null for other jobs. Always sent by this daemon. */
export const ArrayRef = Type.Object({
  id: JobId,
  index: Type.Integer({ minimum: 0, description: 'the task index (XLURM_ARRAY_TASK_ID)' }),
  count: Type.Integer({ minimum: 1, description: 'tasks in the array' }),
}, { additionalProperties: false, description: "the array id is its first task's job id" });
export type ArrayRef = Static<typeof ArrayRef>;

/** The full job: owner and root only. */
export const Job = Type.Object({
  id: JobId,
  owner: Owner,
  spec: Submission,
  state: JobState,
  devices: Type.Array(Device),
  submitted_at: UnixSeconds,
  started_at: Nullable(UnixSeconds),
  result: Nullable(Outcome),
  reason: Type.Union([Reason, Type.Null()], { description: 'why it waits, from the latest scheduling pass; null when not PENDING (and until a pass has considered it)' }),
  queue_timeout: Type.Optional(Nullable(Type.Integer({ description: 'seconds it may stay PENDING (docs/behaviour.md §21.6); null: unlimited. Always sent by this daemon' }))),
  cpus: Type.Optional(Type.Integer({ description: 'host CPUs it asked for (docs/behaviour.md §24.1); 0: none. Always sent by this daemon' })),
  mem: Type.Optional(Type.Integer({ description: 'host memory it asked for, in bytes; 0: none. Always sent by this daemon' })),
  array: Type.Optional(Nullable(ArrayRef)),
  attempt: Type.Optional(Type.Integer({ minimum: 1, description: 'which run this is, from 1 (--retry, docs/behaviour.md §23.5). Always sent by this daemon' })),
  dependency: Type.Optional(Nullable(Type.String({ description: 'the -d list as submitted; null: none. Always sent by this daemon' }))),
  begin_at: Type.Optional(Nullable(UnixSeconds)),
  // Fairness (docs/behaviour.md §22.1).
  priority: Type.Optional(Type.Integer({ description: 'xlurm priority (root): -1000..1000, high first; 0 by default. Always sent by this daemon' })),
  nice: Type.Optional(Type.Integer({ description: '--nice: 0..10000, low first; 0 by default. Always sent by this daemon' })),
  share: Type.Optional(Type.Union([Share, Type.Null()], { description: 'the slice of each device it asked for (--share, docs/behaviour.md §25.1); null: whole devices. Always sent by this daemon' })),
}, { additionalProperties: false });
export type Job = Static<typeof Job>;

/** The public queue row: never a command, environment, script or working directory. */
export const JobSummary = Type.Object({
  id: JobId,
  owner: Owner,
  name: Type.String(),
  state: JobState,
  count: Type.Integer(),
  device_ids: Type.Optional(Type.Array(Type.Integer())),
  kind: Nullable(DeviceKind),
  devices: Type.Array(Device),
  submitted_at: UnixSeconds,
  started_at: Nullable(UnixSeconds),
  finished_at: Nullable(UnixSeconds),
  reason: Type.Union([Reason, Type.Null()], { description: 'as in Job' }),
  cpus: Type.Optional(Type.Integer({ description: 'as in Job. Always sent by this daemon' })),
  mem: Type.Optional(Type.Integer({ description: 'as in Job. Always sent by this daemon' })),
  array: Type.Optional(Nullable(ArrayRef)),
  priority: Type.Optional(Type.Integer({ description: 'as in Job. Always sent by this daemon' })),
  nice: Type.Optional(Type.Integer({ description: 'as in Job. Always sent by this daemon' })),
  share: Type.Optional(Type.Union([Share, Type.Null()], { description: 'as in Job. Always sent by this daemon' })),
}, { additionalProperties: false });
export type JobSummary = Static<typeof JobSummary>;

/** One user's fair-share standing (docs/behaviour.md §22.2): numbers only. */
export const ShareRow = Type.Object({
  user: Type.String(),
  uid: Type.Integer({ minimum: 0 }),
  usage: Type.Number({ description: 'device-seconds used, all time (CPU-only jobs: CPU-seconds over the host\'s CPU count)' }),
  decayed: Type.Number({ description: 'the same, decayed with fair_share_half_life: what the order compares' }),
  rank: Type.Integer({ minimum: 1, description: '1: the lowest decayed usage, considered first among equal priority and nice' }),
}, { additionalProperties: false });
export type ShareRow = Static<typeof ShareRow>;

export const DeviceStatus = Type.Union([
  Type.Literal('idle'), Type.Literal('busy'), Type.Literal('unknown'), Type.Literal('unhealthy'),
  Type.Literal('allocated'), Type.Literal('disabled'),
  Type.Literal('reserved'),
  Type.Literal('shared'),
], { description: 'reserved: idle, and kept for the pending job reserved_for (scheduler mode reserve); shared: running slices of jobs that asked for --share (slices)' });
export type DeviceStatus = Static<typeof DeviceStatus>;

export const DeviceView = Type.Object({
  device: Device,
  job: Nullable(JobId),
  status: DeviceStatus,
  monitoring_error: Type.Optional(Type.String({ description: 'failed query and driver error, for unknown devices' })),
  reserved_for: Type.Optional(Type.Integer({ minimum: 1, description: 'the pending job this device is reserved for (scheduler mode reserve); absent when none. A reserved device that a running job still holds stays allocated, with that job' })),
  nodes: Type.Array(Type.String(), { description: "the device's own node files from discovery (e.g. /dev/nvidia3), denied to jobs not given the device (docs/behaviour.md §24.8); empty when the library names none" }),
  slices: Type.Optional(Type.Array(Type.Object({
    job: JobId,
    mem: Type.Integer({ description: 'device memory of the slice, bytes' }),
    compute: Type.Integer({ description: 'percent of compute' }),
  }, { additionalProperties: false }), { description: 'status shared: the running slices on it (docs/behaviour.md §25.2); absent otherwise' })),
}, { additionalProperties: false });
export type DeviceView = Static<typeof DeviceView>;

/** One vendor pool as `xinfo --pools` shows it (docs/behaviour.md §21.7). */
export const PoolView = Type.Object({
  kind: DeviceKind,
  label: Type.String({ description: 'the short label of device names: nv, asc, …' }),
  total: Type.Integer(),
  free: Type.Integer({ description: 'devices a job could get now' }),
  excluded: Type.Integer(),
  unknown: Type.Integer(),
  groups: Type.Array(Type.Object({
    devices: Type.Array(Type.Integer()),
    free: Type.Array(Type.Integer()),
  }, { additionalProperties: false }), { description: 'the device groups with their free devices; empty when the topology is unknown' }),
  largest_now: Type.Integer({ description: 'the most devices one request could get now, under the host group affinity' }),
  largest_ever: Type.Integer({ description: 'the most devices one request could ever get' }),
  reservation: Nullable(Type.Object({
    job: JobId,
    devices: Type.Array(Type.Integer()),
    expected_start: Nullable(UnixSeconds),
  }, { additionalProperties: false })),
}, { additionalProperties: false });
export type PoolView = Static<typeof PoolView>;

// --- Accounting and observability (docs/behaviour.md §26) ---

export const StatsArgs = Type.Object({
  days: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'jobs that ended in the last N days (default 7)' })),
  since: Type.Optional(UnixSeconds),
  user: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'only this user (others than yourself: root only)' })),
}, { additionalProperties: false });
export type StatsArgs = Static<typeof StatsArgs>;

export const UserStats = Type.Object({
  user: Type.String(),
  uid: Type.Integer(),
  jobs: Type.Record(Type.String(), Type.Integer(), { description: 'jobs by final state, every final state present' }),
  device_hours: Type.Number(),
  cpu_hours: Type.Number({ description: 'run interval × CPUs, for jobs that requested CPUs' }),
  wait_mean_s: Type.Number(),
  wait_p95_s: Type.Number(),
  run_mean_s: Type.Number(),
  success_rate: Type.Number({ description: 'COMPLETED / jobs that started; 0 when none started' }),
}, { additionalProperties: false });
export type UserStats = Static<typeof UserStats>;

export const StatsView = Type.Object({
  since: UnixSeconds,
  until: UnixSeconds,
  users: Type.Array(UserStats),
  host: Nullable(Type.Object({
    device_hours: Type.Number(),
    available_device_hours: Type.Number(),
    utilization: Type.Number(),
  }, { additionalProperties: false })),
}, { additionalProperties: false });
export type StatsView = Static<typeof StatsView>;

export const MonitorView = Type.Object({
  generated_at: UnixSeconds,
  version: Type.String(),
  uptime_s: Type.Integer(),
  mode: Type.String({ description: 'the scheduler mode' }),
  devices: Type.Array(DeviceView),
  counts: Type.Object({
    by_state: Type.Record(Type.String(), Type.Integer()),
    by_reason: Type.Record(Type.String(), Type.Integer()),
  }, { additionalProperties: false }),
  reservations: Type.Array(Type.Object({
    kind: DeviceKind,
    job: JobId,
    devices: Type.Array(Type.Integer()),
    expected_start: Nullable(UnixSeconds),
  }, { additionalProperties: false })),
  users: Type.Array(Type.Object({
    user: Type.String(), uid: Type.Integer(), running: Type.Integer(), pending: Type.Integer(),
  }, { additionalProperties: false })),
}, { additionalProperties: false });
export type MonitorView = Static<typeof MonitorView>;

// --- xlurm report's data (docs/behaviour.md §26.4) ---

/** One job that overlaps the report's window, as the report draws it (no command, environment or path). */
export const ReportJob = Type.Object({
  id: JobId,
  user: Type.String(),
  uid: Type.Integer({ minimum: 0 }),
  name: Type.String(),
  count: Type.Integer({ description: 'devices asked for' }),
  state: JobState,
  devices: Type.Array(Type.Integer({ minimum: 0 }), { description: 'indexes into the reply\'s devices' }),
  submitted_at: UnixSeconds,
  started_at: Nullable(UnixSeconds),
  finished_at: Nullable(UnixSeconds),
  device_weight: Type.Optional(Type.Number({ minimum: 0, description: 'devices it is counted as in device time: its device count, or for a slice job its share of each card\'s memory (docs/behaviour.md §25.4); absent from older daemons: the count of devices' })),
}, { additionalProperties: false });
export type ReportJob = Static<typeof ReportJob>;

export const ReportData = Type.Object({
  since: UnixSeconds,
  until: UnixSeconds,
  host: Type.Boolean({ description: 'true: every user\'s jobs (root); false: only the caller\'s' }),
  devices: Type.Array(Device, { description: 'the inventory, then devices that only past jobs held' }),
  jobs: Type.Array(ReportJob, { description: 'jobs submitted before until and not finished before since, in id order' }),
  samples: Type.Array(Type.Object({
    day: UnixSeconds,
    device: Type.Integer({ minimum: 0, description: 'index into devices' }),
    samples: Type.Integer(),
    utilization: Nullable(Type.Number({ description: 'mean sampled utilisation, 0-1; null where the library reports none' })),
    memory_used: Nullable(Type.Number({ description: 'mean sampled memory used, bytes' })),
  }, { additionalProperties: false }), { description: 'the device samples per UTC day and device (host view only; empty without samples)' }),
}, { additionalProperties: false });
export type ReportData = Static<typeof ReportData>;

const Empty = Type.Object({}, { additionalProperties: false });
/** `xlurm hold` / `release`: every id is checked before any changes (docs/behaviour.md §23.3). */
const JobIds = Type.Object({ ids: Type.Array(JobId, { minItems: 1, maxItems: 4096 }) }, { additionalProperties: false });
/** `xlurm update`: only the keys given change. */
export const JobUpdate = Type.Object({
  id: JobId,
  time_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  queue_timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  name: Type.Optional(Type.String({ maxLength: 4096 })),
  begin_at: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'null: at once' }))),
  nice: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000, description: 'a new nice (docs/behaviour.md §22.1): only root may lower it' })),
}, { additionalProperties: false });
export type JobUpdate = Static<typeof JobUpdate>;
const ById = Type.Object({ id: JobId }, { additionalProperties: false });
const DeviceIds = Type.Object({
  ids: Type.Array(Type.Integer({ minimum: 0, maximum: 0xffffffff }), { minItems: 1, maxItems: 4096 }),
}, { additionalProperties: false });

export const DaemonStatus = Type.Object({
  version: Type.String(),
  protocol: Type.Integer(),
  pid: Type.Integer(),
  uid: Type.Integer(),
  backend: Type.String(),
  backends: Type.Array(Type.String(), { description: 'vendors discovered' }),
  max_running: Type.Integer(),
  retention_secs: Type.Integer(),
  started_at: UnixSeconds,
  uptime_secs: Type.Integer(),
  excluded: Type.Array(Type.Integer()),
  counts: Type.Record(Type.String(), Type.Integer(), { description: 'jobs per state' }),
  policy: Type.Optional(Type.Object({
    scheduler: Type.String({ description: 'the scheduler mode: greedy or reserve' }),
    fair_share: Type.Boolean(),
    group_affinity: Type.String({ description: 'prefer, require or off' }),
    limits: Type.Record(Type.String(), Type.String(), { description: 'the limits in force by dotted key, as the file writes them (10m, 1d, 8=1); unset keys absent' }),
  }, { additionalProperties: false, description: 'the scheduling policy in force (docs/behaviour.md §21.7)' })),
  device_isolation: Type.Optional(Type.String({ description: "'on', 'off (<why>)' where jobs cannot be kept from other devices' nodes (docs/behaviour.md §24.8), or 'failing (<why>; <N> job(s) refused since <time>)' while device jobs are refused because their isolation cannot be applied (§28.7). Always sent by this daemon" })),
  connections: Type.Optional(Type.Array(Type.Object({
    user: Type.String(), count: Type.Integer({ minimum: 1 }),
  }, { additionalProperties: false }), { description: 'connection slots held per user, largest first (docs/behaviour.md §28.3); only in the reply to root' })),
}, { additionalProperties: false });
export type DaemonStatus = Static<typeof DaemonStatus>;

/** The `[daemon]` table as the daemon applies it (docs/admin-guide.md, Configuration file). */
export const DaemonSettingsView = Type.Object({
  backend: Type.String(),
  max_running: Type.Integer(),
  retention: Type.String({ description: 'as written in the file or option, e.g. 7d' }),
  exclude_device_ids: Type.Array(Type.Integer(), { description: 'from the file or option; `xlurm exclude` changes are in status.excluded' }),
  max_connections: Type.Optional(Type.Integer({ description: 'connection slots (docs/behaviour.md §28.3); absent when the file does not set it (4096)' })),
  max_connections_per_user: Type.Optional(Type.Integer({ description: "one user's share of them; absent when the file does not set it (256)" })),
}, { additionalProperties: false });

/** `[limits]` (docs/behaviour.md §21.6): durations in their largest exact unit; a key not set is absent, as in the file. */
export const LimitsSettingsView = Type.Object({
  default_time_limit: Type.Optional(Type.String()),
  max_time_limit: Type.Optional(Type.String()),
  kill_grace: Type.String(),
  default_queue_timeout: Type.Optional(Type.String()),
  max_array_tasks: Type.Optional(Type.Integer({ description: 'most tasks of one array (docs/behaviour.md §28.2); 0: the protocol\'s 100000' })),
  max_request_bytes: Type.Optional(Type.String({ description: 'most bytes of environment, script and arguments of one request, e.g. 3M (§28.2); "0": the frame limit alone' })),
  users: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Integer(), Type.String()]), {
    description: 'per-user limits (docs/behaviour.md §22.4) that are set, by dotted <user>.<key> (user `default` included), e.g. {"alice.devices": 8, "default.memory": "64G"}',
  })),
}, { additionalProperties: false });

/** `[devices]` (docs/behaviour.md §21.5): groups as the file writes them; discovered ones are in `pools`. */
export const DevicesSettingsView = Type.Object({
  group_affinity: Type.Union([Type.Literal('prefer'), Type.Literal('require'), Type.Literal('off')]),
  groups: Type.Record(Type.String(), Type.String(), { description: 'declared groups per vendor label, e.g. {"nv": "0-3;4-7"}' }),
}, { additionalProperties: false });

export const SchedulerSettingsView = Type.Object({
  mode: Type.Union([Type.Literal('greedy'), Type.Literal('reserve')]),
  reserve_min_devices: Type.Integer(),
  max_running_by_size: Type.Record(Type.String(), Type.Integer(), { description: 'device count → most running jobs holding exactly that many, e.g. {"8": 1}' }),
  fair_share: Type.Optional(Type.Boolean({ description: 'order users by decayed usage (docs/behaviour.md §22.2)' })),
  fair_share_half_life: Type.Optional(Type.String({ description: 'as written, e.g. 7d' })),
}, { additionalProperties: false });

/** `[resources]` (docs/behaviour.md §24): sizes as messages show them (`4G`); shown when the file has the table. */
export const ResourcesSettingsView = Type.Object({
  cpus: Type.String({ description: '"all" or the CPU list as written' }),
  memory: Type.String({ description: 'the memory jobs may be given in all' }),
  reserve_memory: Type.String(), min_available: Type.String(), memory_high_ratio: Type.Number(), swap: Type.Boolean(),
  default_cpus: Type.Integer(), default_memory: Type.String(), require_cgroup: Type.Boolean(), device_isolation: Type.Boolean(),
  low_memory_floor: Type.String(), low_memory_samples: Type.Integer(), pids_max: Type.Integer(),
  private_tmp: Type.Optional(Type.Boolean({ description: 'a fresh tmpfs /tmp and /dev/shm per job (docs/behaviour.md §28.12)' })),
  private_tmp_size: Type.Optional(Type.String()),
}, { additionalProperties: false });

/** `[accounting]` (docs/behaviour.md §26.2, §26.3): shown when the file has the table. */
export const AccountingSettingsView = Type.Object({
  sample_interval: Type.String({ description: 'e.g. 30s; 0s: sampling off' }),
  retention: Type.String({ description: 'how long samples are kept, e.g. 90d' }),
  metrics_file: Type.String({ description: 'absolute path; "" for none' }),
}, { additionalProperties: false });

/** `[sharing]` (docs/behaviour.md §25): shown when the file has the table; a vendor only when its table names a library. */
const SharingVendorView = Type.Object({
  library: Type.String(), shared_region_dir: Type.String({ description: 'the effective directory (default <state directory>/hami)' }), policy: Type.String(),
}, { additionalProperties: false });
export const SharingSettingsView = Type.Object({
  enabled: Type.Boolean(),
  ascend: Type.Optional(SharingVendorView),
  nvidia: Type.Optional(SharingVendorView),
}, { additionalProperties: false });

/** `xlurm config show`: the running daemon's effective configuration. */
export const ConfigView = Type.Object({
  file: Type.String({ description: 'absolute path of the configuration file the daemon reads' }),
  found: Type.Boolean({ description: 'false: the default file does not exist and every key has its default' }),
  from_flags: Type.Array(Type.String(), { description: 'dotted keys set by command-line options, which win over the file' }),
  config: Type.Object({
    daemon: DaemonSettingsView, limits: Type.Optional(LimitsSettingsView), devices: Type.Optional(DevicesSettingsView),
    scheduler: Type.Optional(SchedulerSettingsView),
    accounting: Type.Optional(AccountingSettingsView),
    resources: Type.Optional(ResourcesSettingsView),
    sharing: Type.Optional(SharingSettingsView),
  }, { additionalProperties: false }),
}, { additionalProperties: false });
export type ConfigView = Static<typeof ConfigView>;

/**
 * Every operation: `req` validates `args`, `res` documents `result`.
 * `log` and `follow` are streams: their replies are a sequence of frames
 * (see StreamEvent) instead of one result.
 */
export const Ops = {
  submit: { req: Submission, res: Job, doc: 'queue a job; replies with the new PENDING job' },
  queue: {
    req: Type.Object({
      all: Type.Optional(Type.Boolean({ description: 'false: only PENDING and RUNNING jobs; true or absent: any state' })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'only the newest N matching jobs' })),
      array: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'only the tasks of this array, any state (all and limit then do not apply)' })),
      index: Type.Optional(Type.Integer({ minimum: 0, maximum: 0xffffffff, description: 'with array: only the task of this index (A_I)' })),
      order: Type.Optional(Type.Literal('schedule', { description: 'the PENDING rows last, in the order the scheduler considers them (xqueue -l, docs/behaviour.md §22.1); absent: id order' })),
    }, { additionalProperties: false }),
    res: Type.Array(JobSummary), doc: 'host-wide summaries in id order',
  },
  get: { req: ById, res: Job, doc: 'the full job (owner or root)' },
  cancel: {
    req: Type.Object({
      id: JobId,
      array: Type.Optional(Type.Boolean({ description: "false: this job only, even when id is an array's id (xcancel A_I); absent or true: an array's id cancels every task of the array (xcancel A)" })),
    }, { additionalProperties: false }),
    res: Empty, doc: 'cancel a pending or running job (owner or root); no-op when finished',
  },
  log: {
    req: Type.Object({ id: JobId, offset: Type.Optional(LogOffset) }, { additionalProperties: false }),
    res: Empty, doc: 'stream the job log from offset to its current end (owner or root)',
  },
  follow: {
    req: Type.Object({
      id: JobId, offset: Type.Optional(LogOffset),
      bytes: Type.Optional(Type.Boolean({ description: 'false: state changes only, no log bytes (a client that reads the log file itself); default true' })),
    }, { additionalProperties: false }),
    res: Empty, doc: 'stream state changes and log bytes until the job has a result (owner or root)',
  },
  info: { req: Empty, res: Type.Array(DeviceView), doc: 'device views in inventory order' },
  pools: { req: Empty, res: Type.Array(PoolView), doc: 'per vendor pool: counts, groups, the largest requests that fit now and ever, the reservation' },
  report: {
    req: Type.Object({
      days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3660, description: 'the window: the last N days (default 7)' })),
    }, { additionalProperties: false }),
    res: ReportData, doc: "xlurm report's data: jobs with their devices and times, device samples per day (your own jobs; root: every user's)",
  },
  status: { req: Empty, res: DaemonStatus, doc: 'daemon version, backend, uptime, exclusions, job counts' },
  stop: { req: Empty, res: Empty, doc: 'daemon exits after replying; running jobs continue (administrator)' },
  restart: { req: Empty, res: Empty, doc: 'like stop, refused while jobs run (administrator)' },
  exclude: { req: DeviceIds, res: Type.Object({ excluded: Type.Array(Type.Integer()) }), doc: 'exclude device ids from allocation (administrator)' },
  include: { req: DeviceIds, res: Type.Object({ excluded: Type.Array(Type.Integer()) }), doc: 're-include excluded device ids (administrator)' },
  config: { req: Empty, res: ConfigView, doc: 'the effective configuration of the running daemon (any user)' },
  reload: {
    req: Empty,
    res: Type.Object({
      file: Type.String(),
      changed: Type.Array(Type.String(), { description: 'dotted keys whose effective value changed' }),
    }, { additionalProperties: false }),
    doc: 're-read the configuration file and apply it to later decisions (administrator)',
  },
  // Workflows (docs/behaviour.md §23.3).
  hold: { req: JobIds, res: Empty, doc: 'hold pending jobs (owner or root): they do not start until released' },
  release: { req: JobIds, res: Empty, doc: 'release held jobs (owner or root)' },
  update: { req: JobUpdate, res: Job, doc: "change a pending job's time limit, queue-wait timeout, name, begin time or nice (owner or root)" },
  // Accounting and observability (docs/behaviour.md §26.1, §26.3, §26.5).
  stats: { req: StatsArgs, res: StatsView, doc: 'usage statistics from the store: your own rows (root: every user and the host)' },
  metrics: { req: Empty, res: Type.Object({ text: Type.String({ description: 'the Prometheus text exposition' }) }, { additionalProperties: false }), doc: 'the metrics text that metrics_file holds (any user)' },
  monitor: { req: Empty, res: MonitorView, doc: 'one machine-wide snapshot for monitoring accounts (any user; no commands)' },
  // Fairness (docs/behaviour.md §22.1-§22.3, §23.3).
  priority: {
    req: Type.Object({ id: JobId, priority: Type.Integer({ minimum: -1000, maximum: 1000 }) }, { additionalProperties: false }),
    res: Job, doc: "set a pending job's admin priority, -1000..1000, high first (root)",
  },
  top: { req: ById, res: Job, doc: "move a pending job ahead of its owner's other pending jobs, never ahead of other users' (owner or root)" },
  share: { req: Empty, res: Type.Array(ShareRow), doc: "fair share: every user's raw and decayed usage and rank, by rank (any user)" },
} as const;

export type OpName = keyof typeof Ops;
export type OpArgs<K extends OpName> = Static<(typeof Ops)[K]['req']>;
export type OpResult<K extends OpName> = Static<(typeof Ops)[K]['res']>;
