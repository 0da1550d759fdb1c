/** Paths of the built artifacts the tests run. */
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const CLI_BIN = path.join(ROOT, 'packages', 'cli', 'bin');
export const DAEMON_MAIN = path.join(ROOT, 'packages', 'daemon', 'dist', 'main.js');
export const IS_ROOT = process.getuid?.() === 0;

/** A scrubbed environment for daemons and clients: nothing from the test runner leaks in. */
export function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    TZ: 'UTC',
    HOME: process.env.HOME ?? '/root',
    // An explicit, empty configuration file: a daemon started by a test never
    // reads the host's /etc/xlurm/xlurm.toml (a test about the file sets its own).
    XLURM_CONFIG: '/dev/null',
    ...extra,
  };
}
