const pad2 = (n: number) => String(n).padStart(2, '0');

/** `HH:MM:SS`, or `D-HH:MM:SS` from one day on (docs/behaviour.md §4.4); negative input counts as 0. */
export function formatDuration(seconds: number): string {
  const s = Number.isFinite(seconds) && seconds > 0 ? Math.floor(seconds) : 0;
  const days = Math.floor(s / 86400);
  const rest = s % 86400;
  const hms = `${pad2(Math.floor(rest / 3600))}:${pad2(Math.floor((rest % 3600) / 60))}:${pad2(rest % 60)}`;
  return days > 0 ? `${days}-${hms}` : hms;
}

/** Saturating subtraction, as the reference's `u64::saturating_sub`. */
export function since(later: number, earlier: number): number {
  return later > earlier ? later - earlier : 0;
}
