/**
 * The configuration file's keys, defined once: this TypeBox schema is both
 * the JSON Schema that ajv checks a parsed file against and (through Static)
 * the type the daemon reads. Each later feature adds its table or keys here;
 * a key that is not here is an error, so a typo never passes silently.
 *
 * `problem` is our own annotation (registered with ajv as a keyword that
 * validates nothing): the message for a value that matches none of a union's
 * forms, where ajv's own words ("must match a schema in anyOf") would not help.
 */
import { Type, type Static } from '@sinclair/typebox';
import { BACKEND_NAMES, DURATION_PATTERN, KINDS, KIND_LABEL, MAX_ARRAY_TASKS, SIZE_PATTERN, U32_MAX } from '@xlurm/protocol';

/**
 * Seconds as an integer, or an integer with one unit (protocol's duration.ts),
 * at most U32_MAX seconds: what the supervisor's spec carries for a time
 * limit or a kill grace (a longer one would make every job fail to start).
 * `maxSeconds` is our keyword (config/load.ts) for the string form.
 */
const Duration = (description: string) => Type.Union([
  Type.Integer({ minimum: 0, maximum: U32_MAX }),
  Type.String({ pattern: DURATION_PATTERN, maxSeconds: U32_MAX }),
], { description, problem: "invalid duration '%s': use seconds, or a number with s, m, h or d" });

export const DaemonSection = Type.Object({
  backend: Type.Optional(Type.Union(BACKEND_NAMES.map((n) => Type.Literal(n)), {
    description: 'as --backend; cannot change on reload',
    problem: `invalid backend '%s': use one of ${BACKEND_NAMES.join(', ')}`,
  })),
  max_running: Type.Optional(Type.Integer({ minimum: 1, maximum: U32_MAX, description: 'as --max-running' })),
  retention: Type.Optional(Duration('as --retention')),
  exclude_device_ids: Type.Optional(Type.Array(Type.Integer({ minimum: 0, maximum: U32_MAX }), {
    uniqueItems: true, maxItems: 4096, description: 'as --exclude-device-ids',
  })),
  // Connection slots (docs/behaviour.md §28.3).
  max_connections: Type.Optional(Type.Integer({ minimum: 16, maximum: 1048576, description: 'most connections open at once (capped by the file limit); default 4096' })),
  max_connections_per_user: Type.Optional(Type.Integer({ minimum: 1, maximum: 1048576, description: "one user's share of them (root has none); default 256" })),
}, { additionalProperties: false });

/** A duration where a limit is meant: zero is refused (docs/behaviour.md §20.1). */
const Limit = (description: string) => Type.Union([
  Type.Integer({ minimum: 1, maximum: U32_MAX }),
  Type.String({ pattern: '^[0-9]*[1-9][0-9]*[smhd]?$', maxSeconds: U32_MAX }),
], { description, problem: "invalid duration '%s': use seconds, or a number with s, m, h or d" });

/**
 * One user's limits (docs/behaviour.md §22.4): `[limits.users.<name>]` or
 * `[limits.users.default]`; 0 = unlimited. Read by scheduler/user-limits.ts.
 */
export const UserLimitsTable = Type.Object({
  running_jobs: Type.Optional(Type.Integer({ minimum: 0, maximum: U32_MAX, description: 'most running jobs at once; 0: unlimited' })),
  devices: Type.Optional(Type.Integer({ minimum: 0, maximum: U32_MAX, description: 'most devices held by running jobs; 0: unlimited' })),
  cpus: Type.Optional(Type.Integer({ minimum: 0, maximum: U32_MAX, description: 'most host CPUs held by running jobs (-c); 0: unlimited' })),
  memory: Type.Optional(Type.Union([
    Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    Type.String({ pattern: SIZE_PATTERN }),
  ], { description: 'most memory held by running jobs (--mem), e.g. "64G"; "0": unlimited', problem: "invalid size '%s': use a number with K, M, G or T" })),
  pending_jobs: Type.Optional(Type.Integer({ minimum: 0, maximum: U32_MAX, description: 'most jobs pending at once; over it a submission is refused; 0: unlimited' })),
}, { additionalProperties: false });

/** Time policy (docs/behaviour.md §21.6) and per-user limits (§22.4). */
export const LimitsSection = Type.Object({
  default_time_limit: Type.Optional(Limit('time limit of a job submitted without -t; unset: none')),
  max_time_limit: Type.Optional(Limit('larger -t refused at submission; unset: no cap')),
  kill_grace: Type.Optional(Duration('SIGTERM to SIGKILL on cancel and time-out; default 1s')),
  default_queue_timeout: Type.Optional(Limit('longest a job without --timeout may stay pending; unset: unlimited')),
  // Bounded requests (docs/behaviour.md §28.2; config/request-limits.ts).
  max_array_tasks: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_ARRAY_TASKS, description: `most tasks of one --array or --param sweep; default 10000; 0: ${MAX_ARRAY_TASKS}` })),
  max_request_bytes: Type.Optional(Type.Union([
    Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    Type.String({ pattern: SIZE_PATTERN }),
  ], { description: 'most bytes of environment, script and arguments of one request, e.g. "3M" (default); below the 4M frame limit; 0: the frame limit alone', problem: "invalid size '%s': use a number with K, M, G or T" })),
  users: Type.Optional(Type.Object({}, {
    patternProperties: { '^[A-Za-z_][A-Za-z0-9_.-]{0,63}[$]?$': UserLimitsTable },
    additionalProperties: false,
    description: 'per-user limits by account name, and default for users without a table of their own',
  })),
}, { additionalProperties: false });

/** Device groups and affinity (docs/behaviour.md §21.5); the groups' syntax is checked in groups.ts. */
export const DevicesSection = Type.Object({
  group_affinity: Type.Optional(Type.Union([Type.Literal('prefer'), Type.Literal('require'), Type.Literal('off')], {
    description: 'keep a multi-device job within one device group: prefer (best fit), require, or off; default prefer',
    problem: "invalid group_affinity '%s': use prefer, require or off",
  })),
  groups: Type.Optional(Type.Object(Object.fromEntries(KINDS.map((k) => [KIND_LABEL[k], Type.Optional(Type.String({
    description: `groups of ${KIND_LABEL[k]} device ids: ';' between groups, ',' and ranges inside ("0-3;4-7"); replaces discovered topology`,
  }))])), { additionalProperties: false })),
}, { additionalProperties: false });

/** Scheduling policy (docs/behaviour.md §21.2–§21.4). */
export const SchedulerSection = Type.Object({
  mode: Type.Optional(Type.Union([Type.Literal('greedy'), Type.Literal('reserve')], {
    description: 'greedy (default: start whatever fits) or reserve (the first blocked large job reserves its devices; others backfill)',
    problem: "invalid mode '%s': use greedy or reserve",
  })),
  reserve_min_devices: Type.Optional(Type.Integer({ minimum: 1, maximum: U32_MAX, description: 'reserve: the least device count whose job may reserve; default 2' })),
  max_running_by_size: Type.Optional(Type.Object({}, {
    patternProperties: { '^[1-9][0-9]{0,5}$': Type.Integer({ minimum: 1, maximum: U32_MAX }) },
    additionalProperties: false,
    description: 'device count = most running jobs holding exactly that many devices, e.g. { 8 = 1 }; default none',
  })),
  fair_share: Type.Optional(Type.Boolean({ description: 'order users by their decayed usage after priority and nice; default true' })),
  fair_share_half_life: Type.Optional(Limit('half-life of the usage decay; default 7d')),
}, { additionalProperties: false });

/** Accounting and observability (docs/behaviour.md §26.2, §26.3). */
export const AccountingSection = Type.Object({
  sample_interval: Type.Optional(Duration('seconds between samples of the devices and the host; "0" turns sampling off; default 30s')),
  retention: Type.Optional(Limit('how long samples are kept; default 90d')),
  metrics_file: Type.Optional(Type.String({ maxLength: 4096, description: 'absolute path rewritten every sample in the Prometheus text format (node_exporter textfile collector); "" for none' })),
}, { additionalProperties: false });

/** A size (docs/behaviour.md §20.1): a number with K, M, G or T; a bare number is MiB. */
const Size = (description: string) => Type.Union([
  Type.Integer({ minimum: 0, maximum: 2 ** 32 }), // MiB, as a bare number in the text form
  Type.String({ pattern: SIZE_PATTERN }),
], { description, problem: "invalid size '%s': use a number with K, M, G or T" });

/**
 * Host CPUs, memory and isolation (docs/behaviour.md §24). The CPU list's
 * syntax and the sizes against the host are checked in resources/settings.ts.
 */
export const ResourcesSection = Type.Object({
  cpus: Type.Optional(Type.String({ maxLength: 4096, description: 'the CPUs jobs may be pinned to: "all" (default) or a list such as "2-63" or "0-3,8-11"' })),
  memory: Type.Optional(Size('the memory jobs may be given in all; default MemTotal - reserve_memory')),
  reserve_memory: Type.Optional(Size('memory kept for the host when memory is not set; default 4G')),
  min_available: Type.Optional(Size('a job with --mem starts only while MemAvailable is at least its memory plus this; default 8G')),
  memory_high_ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1, description: 'memory.high (reclaim pressure) as a share of the limit; default 0.85' })),
  swap: Type.Optional(Type.Boolean({ description: 'let jobs swap (memory.swap.max / memsw not set to the limit); default false' })),
  default_cpus: Type.Optional(Type.Integer({ minimum: 0, maximum: U32_MAX, description: 'CPUs of a job submitted without -c; 0 (default): none asked' })),
  default_memory: Type.Optional(Size('memory of a job submitted without --mem; "0" (default): none asked')),
  require_cgroup: Type.Optional(Type.Boolean({ description: 'true: a job whose cgroup cannot be made and configured fails to start, whatever it asks for; default false' })),
  device_isolation: Type.Optional(Type.Boolean({ description: "deny a job the device nodes of the devices it was not given; default true" })),
  low_memory_floor: Type.Optional(Size('the low-memory guard stops a job when MemAvailable stays below this; "0" turns the guard off; default 4G')),
  low_memory_samples: Type.Optional(Type.Integer({ minimum: 1, maximum: U32_MAX, description: 'consecutive 2 s samples below the floor before the guard acts; default 3' })),
  pids_max: Type.Optional(Type.Integer({ minimum: 0, maximum: U32_MAX, description: "each job's cgroup pids.max (its notification's too); default 4096; 0: unlimited" })),
  private_tmp: Type.Optional(Type.Boolean({ description: 'each job gets a fresh tmpfs /tmp and /dev/shm of its own (root daemon only); default false, as some sites pass files between jobs through /tmp' })),
  private_tmp_size: Type.Optional(Size('the size of each private /tmp and /dev/shm; default 4G')),
}, { additionalProperties: false });

/** One vendor's sharing library (docs/behaviour.md §25, §20.7). */
const SharingVendor = (what: string) => Type.Object({
  library: Type.Optional(Type.String({ maxLength: 4096, pattern: '^/', description: `absolute path of ${what}, appended to the job's LD_PRELOAD; sharing is available for the vendor only when set` })),
  shared_region_dir: Type.Optional(Type.String({ maxLength: 4096, pattern: '^/', description: "directory of the per-card shared regions, made root-owned with mode 0711; it and its parent must be root-owned and not writable by others; default <state directory>/hami" })),
  policy: Type.Optional(Type.String({ maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: 'the scheduling policy handed to the library (Ascend NPU_SCHED_POLICY); default "spatial"' })),
}, { additionalProperties: false });

/** Card sharing (docs/behaviour.md §25). */
export const SharingSection = Type.Object({
  enabled: Type.Optional(Type.Boolean({ description: 'accept --share (slices of a card); default false' })),
  ascend: Type.Optional(SharingVendor('HAMi-vnpu-core (libvnpu.so)')),
  nvidia: Type.Optional(SharingVendor('HAMi-core (libvgpu.so)')),
}, { additionalProperties: false });

/**
 * Client mode (docs/behaviour.md §27.1): read by the clients themselves (packages/cli's
 * engine/cluster.ts, a small reader of just this table); the daemon ignores it. Kept
 * here so the file is judged as a whole by one schema (`xlurm config check`).
 */
export const ClusterSection = Type.Object({
  engine: Type.Optional(Type.Union([Type.Literal(''), Type.Literal('slurm')], {
    description: '"" (this host\'s daemon, default) or "slurm" (the user commands drive Slurm)',
    problem: "invalid engine '%s': use \"\" or \"slurm\"",
  })),
  partition: Type.Optional(Type.String({ description: 'Slurm partition for every job; "" = the cluster\'s default' })),
  gres: Type.Optional(Type.Object(Object.fromEntries(KINDS.map((k) => [KIND_LABEL[k], Type.Optional(Type.String({
    pattern: '^[A-Za-z][A-Za-z0-9_]*$', description: `GRES name of ${k} devices`,
  }))])), { additionalProperties: false, description: 'GRES name per vendor label; default { nv = "gpu" }' })),
}, { additionalProperties: false });

export const ConfigSchema = Type.Object({
  daemon: Type.Optional(DaemonSection),
  devices: Type.Optional(DevicesSection),
  limits: Type.Optional(LimitsSection),
  scheduler: Type.Optional(SchedulerSection),
  accounting: Type.Optional(AccountingSection),
  resources: Type.Optional(ResourcesSection),
  sharing: Type.Optional(SharingSection),
  cluster: Type.Optional(ClusterSection),
}, { additionalProperties: false });

export type ConfigFile = Static<typeof ConfigSchema>;
