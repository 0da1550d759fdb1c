import { VERSION, type DeviceKind } from '@xlurm/protocol';
import { jobCounts } from '../accounting/metrics';
import type { Handler } from './types';

/** A pending job no pass has explained yet. */
const NO_REASON = 'None';

/**
 * `xlurm monitor --json` (docs/behaviour.md §26.5): the whole machine in
 * one answer, for monitoring accounts. Users appear with their counts only:
 * never a command, environment or path.
 */
export const monitor = (({ core }) => {
  const now = core.now();
  // The history's counts from the store's running totals, the queue's from memory (accounting/metrics.ts).
  const byState = jobCounts(core);
  const byReason: Record<string, number> = {};
  const users = new Map<number, { user: string; uid: number; running: number; pending: number }>();
  for (const j of core.activeJobs()) {
    let u = users.get(j.owner.uid);
    if (!u) { u = { user: j.owner.name, uid: j.owner.uid, running: 0, pending: 0 }; users.set(j.owner.uid, u); }
    if (j.state === 'RUNNING') u.running++;
    else if (j.state === 'PENDING') {
      u.pending++;
      const r = j.reason?.code ?? NO_REASON;
      byReason[r] = (byReason[r] ?? 0) + 1;
    }
  }
  const reservations = [...core.reservations()].map(([kind, r]) => ({
    kind: kind as DeviceKind, job: r.job, devices: r.devices, expected_start: r.expectedStart,
  }));
  return {
    generated_at: now,
    version: VERSION,
    uptime_s: Math.max(0, now - core.startedAt),
    mode: core.cfg.schedulerMode,
    devices: core.deviceViews(),
    counts: { by_state: byState, by_reason: byReason },
    reservations,
    users: [...users.values()].sort((a, b) => a.uid - b.uid),
  };
}) satisfies Handler<'monitor'>;
