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

/** The message for text that is no duration (docs/behaviour.md §20.1). */
export function durationError(text: string): string {
  return `invalid duration '${text}': use seconds, or a number with s, m, h or d`;
}

/**
 * The longest duration a job may ask for (`-t`, `--timeout`): what the
 * supervisor's spec and the store carry, 2^32−1 s inclusive (docs/behaviour.md §28.4).
 */
export const MAX_DURATION_SECS = U32_MAX;

/** The message for a duration longer than MAX_DURATION_SECS, worded as durationError. */
export function durationRangeError(text: string): string {
  return `invalid duration '${text}': too long (at most ${MAX_DURATION_SECS} seconds)`;
}

// Slurm's clock forms for -t: MM:SS, HH:MM:SS, D-HH:MM:SS. The first field
// is unbounded (Slurm writes 90:00 for ninety minutes); the rest are clock digits.
const CLOCK = /^(?:([0-9]+)-([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})|([0-9]+):([0-9]{1,2}):([0-9]{1,2})|([0-9]+):([0-9]{1,2}))$/;

/**
 * `-t/--time-limit`: the simple grammar (durationSeconds) or one of Slurm's
 * clock forms, as seconds; null when it is neither. Zero is returned as 0:
 * the request check refuses it with the core's own words.
 */
export function timeLimitSeconds(text: string): number | null {
  const simple = durationSeconds(text);
  if (simple !== null) return simple;
  const m = CLOCK.exec(text);
  if (!m) return null;
  let d = 0; let h = 0; let min: number; let s: number;
  if (m[1] !== undefined) { d = Number(m[1]); h = Number(m[2]); min = Number(m[3]); s = Number(m[4]); if (h > 23) return null; }
  else if (m[5] !== undefined) { h = Number(m[5]); min = Number(m[6]); s = Number(m[7]); }
  else { min = Number(m[8]); s = Number(m[9]); }
  if (m[1] !== undefined || m[5] !== undefined) { if (min > 59) return null; }
  if (s > 59) return null;
  const total = ((d * 24 + h) * 60 + min) * 60 + s;
  return Number.isSafeInteger(total) ? total : null;
}

/** Seconds in the largest unit that divides them exactly (`86400` → `1d`, `90` → `90s`), as messages show durations. */
export function formatDurationSecs(secs: number): string {
  for (const u of ['d', 'h', 'm'] as const) {
    const per = DURATION_UNITS[u]!;
    if (secs > 0 && secs % per === 0) return `${secs / per}${u}`;
  }
  return `${secs}s`;
}
