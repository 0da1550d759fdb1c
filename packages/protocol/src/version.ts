/** Product version, shown by `--version` and `xlurm status`. */
export const VERSION = '0.1.0';

/**
 * Wire protocol version. Every request carries it as `v`; the daemon refuses
 * any other value with VERSION_MISMATCH, naming both versions. Bump it on any
 * incompatible change to a schema in `schemas.ts`.
 */
export const PROTOCOL_VERSION = 1;
