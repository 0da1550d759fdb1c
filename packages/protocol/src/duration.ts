/**
 * Durations, written once for the daemon's options, its configuration file
 * and the CLI: an integer number of seconds, or an integer with one unit
 * s, m, h or d (`90`, `90s`, `15m`, `2h`, `7d`; docs/admin-guide.md,
 * Configuration file). `--retention` always required a unit, so callers
 * can ask for one.
 */

/** Seconds per unit. */
export const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400 };

/** The accepted text, as a JSON Schema pattern (the configuration schema uses it too). */
export const DURATION_PATTERN = '^[0-9]+[smhd]?$';
const DURATION = new RegExp(DURATION_PATTERN);

/** Largest device id, count or limit the wire carries (an unsigned 32-bit integer). */
export const U32_MAX = 0xffffffff;

/** The duration's seconds, or null when `text` is not a duration (or lacks a required unit). */
export function durationSeconds(text: string, opts: { unitRequired?: boolean } = {}): number | null {
  if (!DURATION.test(text)) return null;
  const unit = text[text.length - 1]!;
  const perUnit = DURATION_UNITS[unit];
  if (perUnit === undefined) return opts.unitRequired ? null : Number(text);
  const n = Number(text.slice(0, -1));
  return Number.isSafeInteger(n * perUnit) ? n * perUnit : null;
}
