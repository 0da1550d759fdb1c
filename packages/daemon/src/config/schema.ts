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
import { BACKEND_NAMES, DURATION_PATTERN, KINDS, KIND_LABEL, U32_MAX } from '@xlurm/protocol';

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
}, { additionalProperties: false });

/** A duration where a limit is meant: zero is refused (docs/behaviour.md §20.1). */
const Limit = (description: string) => Type.Union([
  Type.Integer({ minimum: 1, maximum: U32_MAX }),
  Type.String({ pattern: '^[0-9]*[1-9][0-9]*[smhd]?$', maxSeconds: U32_MAX }),
], { description, problem: "invalid duration '%s': use seconds, or a number with s, m, h or d" });

/** Time policy (docs/behaviour.md §21.6). */
export const LimitsSection = Type.Object({
  default_time_limit: Type.Optional(Limit('time limit of a job submitted without -t; unset: none')),
  max_time_limit: Type.Optional(Limit('larger -t refused at submission; unset: no cap')),
  kill_grace: Type.Optional(Duration('SIGTERM to SIGKILL on cancel and time-out; default 1s')),
  default_queue_timeout: Type.Optional(Limit('longest a job without --timeout may stay pending; unset: unlimited')),
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
}, { additionalProperties: false });

/** Accounting and observability (docs/behaviour.md §26.2, §26.3). */
export const AccountingSection = Type.Object({
  sample_interval: Type.Optional(Duration('seconds between samples of the devices and the host; "0" turns sampling off; default 30s')),
  retention: Type.Optional(Limit('how long samples are kept; default 90d')),
  metrics_file: Type.Optional(Type.String({ maxLength: 4096, description: 'absolute path rewritten every sample in the Prometheus text format (node_exporter textfile collector); "" for none' })),
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
  cluster: Type.Optional(ClusterSection),
}, { additionalProperties: false });

export type ConfigFile = Static<typeof ConfigSchema>;
