/** xinfo table (docs/behaviour.md §4.4): fixed widths 12/11/6, longer values are not truncated. */
import type { DeviceView, PoolView } from '@xlurm/protocol';
import { KIND_LABEL, formatSize } from '@xlurm/protocol';
import { padRight, renderTable } from './table';
import { formatLocal } from './time';

export const INFO_HEADER = 'DEVICE       STATUS      JOB    NAME';

/**
 * One line per device. Under an `unknown` device that carries a
 * `monitoring_error`, an extra line indented to the STATUS column says why:
 * `             error: <failed query and driver error>` (docs/behaviour.md §9.4).
 */
export function infoTable(views: readonly DeviceView[]): string {
  let out = INFO_HEADER + '\n';
  for (const v of views) {
    const dev = `${(KIND_LABEL as Record<string, string>)[v.device.kind] ?? v.device.kind}:${v.device.id}`;
    // A reserved idle device shows the job it is kept for (docs/behaviour.md §21.3).
    const id = v.job ?? (v.status === 'reserved' ? v.reserved_for : undefined);
    // A shared device shows its slices' jobs, and under it each slice (docs/behaviour.md §25.2).
    const job = v.slices?.length ? v.slices.map((s) => s.job).join(',') : id === null || id === undefined ? '-' : String(id);
    out += `${padRight(dev, 12)} ${padRight(v.status, 11)} ${padRight(job, 6)} ${v.device.name}\n`;
    if (v.status === 'unknown' && v.monitoring_error) out += `${' '.repeat(13)}error: ${v.monitoring_error}\n`;
    if (v.slices?.length) out += `${' '.repeat(13)}slices: ${v.slices.map((s) => `job ${s.job} ${formatSize(s.mem)} ${s.compute}%`).join(', ')}\n`;
  }
  return out;
}

/** A list of ids as the admin writes groups: `0-3`, `0,2,5-7`; `-` when empty. */
export function idRanges(ids: readonly number[]): string {
  if (ids.length === 0) return '-';
  const sorted = [...ids].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : String(sorted[i]));
    i = j + 1;
  }
  return parts.join(',');
}

/**
 * `xinfo --pools` text (docs/behaviour.md §21.7): one row per vendor pool,
 * then one line per pool with its groups and their free devices.
 */
export function poolsText(pools: readonly PoolView[]): string {
  const rows = pools.map((p) => {
    let reserved = '-';
    if (p.reservation) {
      const r = p.reservation;
      const at = r.expected_start === null ? 'unknown' : (() => {
        const { text, label } = formatLocal(r.expected_start);
        return label ? `${text} ${label}` : text;
      })();
      reserved = `job ${r.job}: ${r.devices.map((id) => `${p.label}:${id}`).join(',')}, expected start ${at}`;
    }
    return [p.label, String(p.total), String(p.free), String(p.excluded), String(p.unknown),
      String(p.largest_now), String(p.largest_ever), reserved];
  });
  let out = renderTable(['POOL', 'TOTAL', 'FREE', 'EXCLUDED', 'UNKNOWN', 'LARGEST-NOW', 'LARGEST-EVER', 'RESERVATION'], rows);
  for (const p of pools) {
    const groups = p.groups.length === 0 ? 'topology unknown'
      : p.groups.map((g) => `${idRanges(g.devices)} (free: ${g.free.length ? g.free.join(',') : '-'})`).join(', ');
    out += `${p.label} groups: ${groups}\n`;
  }
  return out;
}
