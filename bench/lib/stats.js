// @ts-check
'use strict';
/** Order statistics for timing samples (milliseconds unless said otherwise). */

/** @param {number[]} xs */
function sorted(xs) { return [...xs].sort((a, b) => a - b); }

/** Linear-interpolated percentile, p in [0, 1]. @param {number[]} xs @param {number} p */
function pct(xs, p) {
  const s = sorted(xs);
  if (s.length === 0) return NaN;
  const k = (s.length - 1) * p;
  const lo = Math.floor(k);
  const hi = Math.min(lo + 1, s.length - 1);
  return s[lo] + (s[hi] - s[lo]) * (k - lo);
}

/** @param {number[]} xs */
const median = (xs) => pct(xs, 0.5);

/**
 * Summary of one value measured in several repetitions: the median of the
 * repetitions and their spread (min and max).
 * @param {number[]} reps
 * @returns {{ median: number, min: number, max: number, n: number }}
 */
function over(reps) {
  const s = sorted(reps);
  return { median: median(s), min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN, n: s.length };
}

/** Milliseconds since an arbitrary origin, sub-microsecond resolution. */
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

module.exports = { pct, median, over, nowMs };
