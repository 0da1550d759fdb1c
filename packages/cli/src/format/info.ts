/** xinfo table (docs/behaviour.md §4.4): fixed widths 12/11/6, longer values are not truncated. */
import type { DeviceView } from '@xlurm/protocol';
import { KIND_LABEL } from '@xlurm/protocol';
import { padRight } from './table';

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
    const job = v.job === null || v.job === undefined ? '-' : String(v.job);
    out += `${padRight(dev, 12)} ${padRight(v.status, 11)} ${padRight(job, 6)} ${v.device.name}\n`;
    if (v.status === 'unknown' && v.monitoring_error) out += `${' '.repeat(13)}error: ${v.monitoring_error}\n`;
  }
  return out;
}
