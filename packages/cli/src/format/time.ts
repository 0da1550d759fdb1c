/**
 * Clock texts. xrun status lines are UTC; xqueue shows the host's local time
 * zone (TZ honoured) and names its offset, e.g. `UTC+8`, `UTC-5`, `UTC+5:30`.
 */
const pad2 = (n: number) => String(n).padStart(2, '0');

/** Largest |ms| a Date can hold (ECMA-262 time range). */
const MAX_MS = 8.64e15;

/** `YYYY-MM-DD HH:MM:SS` of a Date in UTC. */
export function formatUtc(date: Date): string {
  return `${date.getUTCFullYear()}-${pad2(date.getUTCMonth() + 1)}-${pad2(date.getUTCDate())} `
    + `${pad2(date.getUTCHours())}:${pad2(date.getUTCMinutes())}:${pad2(date.getUTCSeconds())}`;
}

/** Offset of the local zone from UTC at `date`, in minutes (east positive). */
export function localOffsetMinutes(date: Date): number {
  const off = -date.getTimezoneOffset();
  return off === 0 ? 0 : off; // never -0
}

/** `+8`, `-5`, `+5:30`, `+0`. */
export function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  const h = Math.floor(abs / 60);
  const m = abs % 60;
  return m === 0 ? `${sign}${h}` : `${sign}${h}:${pad2(m)}`;
}

/** `UTC+8` for the local zone at `date`. */
export function offsetLabel(date: Date): string {
  return `UTC${formatOffset(localOffsetMinutes(date))}`;
}

/**
 * Calendar text of unix `seconds` shifted by `offsetMinutes` (conversion done
 * as UTC on the shifted time, docs/behaviour.md §4.4): `YYYY-MM-DD HH:MM:SS`, or
 * `MM-DD HH:MM:SS` without the year; `<seconds> Unix` if out of range.
 */
export function formatShifted(seconds: number, offsetMinutes: number, withYear = true): string {
  const ms = (seconds + offsetMinutes * 60) * 1000;
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_MS) return `${seconds} Unix`;
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  if (y < 0 || y > 9999) return `${seconds} Unix`;
  const text = formatUtc(d);
  return withYear ? text : text.slice(5);
}

/** Local time of unix `seconds` with the zone's offset at that instant, plus its label. */
export function formatLocal(seconds: number): { text: string; label: string } {
  const ms = seconds * 1000;
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_MS) return { text: `${seconds} Unix`, label: '' };
  const off = localOffsetMinutes(new Date(ms));
  return { text: formatShifted(seconds, off), label: `UTC${formatOffset(off)}` };
}
