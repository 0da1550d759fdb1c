import type { Test } from 'tap';

/**
 * The type of a tap test object, the root `t` or a subtest's: helpers that
 * assert take it whole, so a call type-checks against tap's own signatures.
 */
export type Tap = Test;

/**
 * What a helper that only cleans up after itself (and comments) needs of a
 * test: a stand-in outside tap meets it too (test/helpers/chaos.ts).
 */
export type Scope = Pick<Test, 'teardown' | 'comment'>;

/**
 * Record a skipped check and why, as `t.skip(why)` does at run time (tap's
 * types want a callback there, which a skip never runs).
 */
export function skip(t: Pick<Test, 'skip'>, why: string): void {
  void t.skip(why, () => undefined);
}

/**
 * With `CI=true` a test whose real peer is missing (Slurm, Chromium, promtool, root, cgroups,
 * the MCP SDK) fails instead of skipping (docs/behaviour.md §27.3): `.ci/run` installs them,
 * so a missing one there is a broken install step, not a reason to pass. On a developer's
 * machine without them these stay skips, which the closing line still counts.
 */
export const STRICT_PEERS = process.env.CI === 'true';

function strictText(why: string): string {
  return `${why} (CI=true: a missing real peer fails instead of skipping, docs/behaviour.md §27.3)`;
}

/** Skip `t` for a missing real peer; under `CI=true`, fail it instead. */
export function peerMissing(t: Pick<Test, 'skip' | 'fail'>, why: string): void {
  if (STRICT_PEERS) t.fail(strictText(why));
  else skip(t, why);
}

/**
 * For a subtest's `{ skip }` option: the reason a real peer is missing, or false. Under
 * `CI=true` a reason also records a failure on the file's root test (the subtest itself is
 * still not run: its body would only fail later for the same reason, less clearly).
 */
export function peerSkip(why: string | false | undefined): string | false {
  if (!why) return false;
  if (STRICT_PEERS) {
    // Loaded lazily: helpers that only type against tap must not start a root test.
    const tap = require('tap') as { t: Test };
    tap.t.fail(strictText(why));
  }
  return why;
}
