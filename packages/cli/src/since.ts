/**
 * `xlurm stats --since DATE` (docs/behaviour.md §20.1, §26.1): a date in
 * the host's local time zone, `YYYY-MM-DD` (its midnight) or
 * `YYYY-MM-DDTHH:MM[:SS]`; also `now-DURATION` (`now-36h`).
 */
import { durationSeconds } from '@xlurm/protocol';

const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/** Unix seconds, or null when `text` is none of the forms (or no real date). */
export function parseSince(text: string, nowMs = Date.now()): number | null {
  const rel = /^now-(.+)$/.exec(text);
  if (rel) {
    const d = durationSeconds(rel[1]!);
    return d === null ? null : Math.floor(nowMs / 1000) - d;
  }
  const m = DATE.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0', m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return null;
  const date = new Date(y, mo - 1, d, h, mi, s);
  // Date rolls 2026-02-30 over into March: such a day does not exist.
  if (date.getFullYear() !== y || date.getMonth() !== mo - 1 || date.getDate() !== d) return null;
  return Math.floor(date.getTime() / 1000);
}
