/** `xlurm stats` as a table and as CSV (docs/behaviour.md §26.1). */
import type { OpResult } from '@xlurm/protocol';
import { renderTable } from './table';
import { formatLocal } from './time';

type Stats = OpResult<'stats'>;

/** The CSV's columns, as the contract names them; the state columns are the JSON's `jobs` keys in lower case. */
export const CSV_HEADER = 'user,uid,completed,failed,cancelled,timed_out,expired,out_of_memory,device_hours,cpu_hours,wait_mean_s,wait_p95_s,run_mean_s,success_rate';
const STATES = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'EXPIRED', 'OUT_OF_MEMORY'] as const;

/** A CSV field: quoted when it holds a comma, quote or line break (RFC 4180). */
function csvField(v: string): string { return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v; }

export function statsCsv(s: Stats): string {
  let out = CSV_HEADER + '\n';
  for (const u of s.users) {
    out += [csvField(u.user), String(u.uid), ...STATES.map((k) => String(u.jobs[k] ?? 0)),
      String(u.device_hours), String(u.cpu_hours), String(u.wait_mean_s), String(u.wait_p95_s),
      String(u.run_mean_s), String(u.success_rate)].join(',') + '\n';
  }
  return out;
}

const fixed = (x: number, digits: number) => x.toFixed(digits);

/** A duration in seconds as the queue shows waits: 45s, 12m, 3.5h. */
function secs(x: number): string {
  if (x < 120) return `${Math.round(x)}s`;
  if (x < 7200) return `${Math.round(x / 60)}m`;
  return `${(x / 3600).toFixed(1)}h`;
}

function when(t: number): string {
  const { text, label } = formatLocal(t);
  return label ? `${text} ${label}` : text;
}

export function statsText(s: Stats): string {
  let out = `Jobs that ended from ${when(s.since)} to ${when(s.until)}\n`;
  if (s.users.length === 0) out += 'No jobs ended in this period.\n';
  else {
    const rows = s.users.map((u) => {
      const total = STATES.reduce((n, k) => n + (u.jobs[k] ?? 0), 0);
      return [u.user, String(total), String(u.jobs.COMPLETED ?? 0), String(u.jobs.FAILED ?? 0), String(u.jobs.CANCELLED ?? 0),
        String(u.jobs.TIMED_OUT ?? 0), String(u.jobs.EXPIRED ?? 0), String(u.jobs.OUT_OF_MEMORY ?? 0),
        fixed(u.device_hours, 2), fixed(u.cpu_hours, 2), secs(u.wait_mean_s), secs(u.wait_p95_s), secs(u.run_mean_s),
        `${fixed(u.success_rate * 100, 1)}%`];
    });
    out += renderTable(['USER', 'JOBS', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'EXPIRED', 'OOM',
      'DEVICE-H', 'CPU-H', 'WAIT', 'WAIT-P95', 'RUN', 'SUCCESS'], rows);
  }
  if (s.host) {
    out += `Host: ${fixed(s.host.device_hours, 2)} of ${fixed(s.host.available_device_hours, 2)} device-hours allocated ` +
      `(utilisation ${fixed(s.host.utilization * 100, 1)}%)\n`;
  }
  return out;
}
