/** `xlurm status` text. */
import type { DaemonStatus } from '@xlurm/protocol';
import { JOB_STATES } from '@xlurm/protocol';
import { formatDuration } from './duration';
import { formatLocal } from './time';

/**
 * The core's states are listed, in this order, even at 0; any other the daemon counts (EXPIRED,
 * OUT_OF_MEMORY) follows once some job has it, so the line stays the core's on a host that never used it.
 */
const STATES: readonly string[] = JOB_STATES.filter((s) => s !== 'EXPIRED' && s !== 'OUT_OF_MEMORY');

/** `7d`, `12h`, `30m`, `45s`: the largest unit that divides the value. */
export function formatRetention(secs: number): string {
  if (secs > 0 && secs % 86400 === 0) return `${secs / 86400}d`;
  if (secs > 0 && secs % 3600 === 0) return `${secs / 3600}h`;
  if (secs > 0 && secs % 60 === 0) return `${secs / 60}m`;
  return `${secs}s`;
}

function started(secs: number): string {
  const { text, label } = formatLocal(secs);
  return label ? `${text} ${label}` : text;
}

export function statusText(st: DaemonStatus): string {
  const counts = st.counts ?? {};
  const keys = [...STATES, ...Object.keys(counts).filter((k) => !STATES.includes(k))];
  const lines = [
    `Version: ${st.version}`,
    `Protocol: ${st.protocol}`,
    `PID: ${st.pid}`,
    `UID: ${st.uid}`,
    `Backend: ${st.backend}`,
    `Discovered backends: ${st.backends.length ? st.backends.join(', ') : '-'}`,
    `Started at: ${started(st.started_at)}`,
    `Uptime: ${formatDuration(st.uptime_secs)}`,
    `Max running: ${st.max_running}`,
    `Retention: ${formatRetention(st.retention_secs)}`,
    `Excluded device IDs: ${st.excluded.length ? st.excluded.join(',') : '-'}`,
    `Jobs: ${keys.map((k) => `${k} ${counts[k] ?? 0}`).join(', ')}`,
  ];
  // docs/behaviour.md §24.8: `device isolation: on`, or `device isolation: off (<why>)` as the
  // spec words it; before Jobs, so the policy block stays last.
  if (st.device_isolation !== undefined) lines.splice(lines.length - 1, 0, `device isolation: ${st.device_isolation}`);
  // docs/behaviour.md §28.3: who holds the daemon's connection slots (root's reply only), largest first.
  if (st.connections?.length) lines.splice(lines.length - 1, 0, `connections: ${st.connections.map((c) => `${c.user} ${c.count}`).join(', ')}`);
  // A daemon that reports its policy (docs/behaviour.md §21.7); an older one has none.
  const p = st.policy;
  if (p) {
    const limits = Object.entries(p.limits).map(([k, v]) => `${k} ${v}`);
    lines.push(
      `Scheduler: ${p.scheduler}`,
      `Fair share: ${p.fair_share ? 'on' : 'off'}`,
      `Group affinity: ${p.group_affinity}`,
      `Limits: ${limits.length ? limits.join(', ') : '-'}`,
    );
  }
  return lines.map((l) => l + '\n').join('');
}
