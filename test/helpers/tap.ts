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
