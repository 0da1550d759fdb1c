/**
 * `--begin TIME` (docs/behaviour.md §23.4, times as in §20.1): `now`,
 * `now+DURATION`, `HH:MM` (today, or tomorrow if that is already past) or
 * `YYYY-MM-DDTHH:MM[:SS]`, in the host's local time zone. The CLI turns the
 * text into Unix seconds (it runs on the host, in its zone); the daemon
 * stores and compares only those.
 */
import { durationSeconds } from './duration';

const CLOCK = /^([0-9]{1,2}):([0-9]{2})$/;
const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?$/;

export function beginTimeError(text: string): string {
  return `invalid time '${text}': use now+DURATION, HH:MM or YYYY-MM-DDTHH:MM[:SS]`;
}

/**
 * The latest time the daemon can represent and show (docs/behaviour.md
 * §28.4): 9999-12-31 23:59:59 in the host's local time zone, as Unix seconds.
 */
export function latestTimeSeconds(): number {
  return Math.floor(new Date(9999, 11, 31, 23, 59, 59).getTime() / 1000);
}

/** The message for a time after latestTimeSeconds(), worded as beginTimeError. */
export function timeRangeError(text: string): string {
  return `invalid time '${text}': too far in the future`;
}

/** The Unix time (seconds) `text` names, seen at `nowMs`; null when it names none. */
export function beginTimeSeconds(text: string, nowMs = Date.now()): number | null {
  const now = Math.floor(nowMs / 1000);
  if (text === 'now') return now;
  if (text.startsWith('now+')) {
    const d = durationSeconds(text.slice(4));
    return d === null ? null : now + d;
  }
  let m = CLOCK.exec(text);
  if (m) {
    const h = Number(m[1]); const min = Number(m[2]);
    if (h > 23 || min > 59) return null;
    const at = new Date(nowMs);
    at.setHours(h, min, 0, 0);
    if (at.getTime() <= nowMs) at.setDate(at.getDate() + 1);
    return Math.floor(at.getTime() / 1000);
  }
  m = DATE.exec(text);
  if (m) {
    const [y, mo, d, h, min, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m![i] ?? 0)) as [number, number, number, number, number, number];
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || min > 59 || s > 59) return null;
    const at = new Date(y, mo - 1, d, h, min, s);
    // Date rolls 31 April over into May: such a date does not exist.
    if (at.getFullYear() !== y || at.getMonth() !== mo - 1 || at.getDate() !== d) return null;
    return Math.floor(at.getTime() / 1000);
  }
  return null;
}
