import type { OpResult } from '@xlurm/protocol';
import type { XCommand } from '../command';
import { flag, noExtra } from '../argv';
import { request } from '../client';
import { CliError } from '../errors';
import { infoTable } from '../format/info';
import { writeOut } from '../io';

/** A monitor must never mistake a silent daemon for an idle machine (docs/behaviour.md §26.5). */
export const MONITOR_DEADLINE_MS = 2000;

const MONITOR_OPTIONS = { json: { type: 'boolean', describe: 'Print the snapshot as JSON (for monitoring systems)' } } as const;

/** The snapshot, or an error once MONITOR_DEADLINE_MS passed without one (connecting included). */
export async function snapshot(): Promise<OpResult<'monitor'>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CliError(`the daemon did not answer within ${MONITOR_DEADLINE_MS / 1000} s`)), MONITOR_DEADLINE_MS);
  });
  try {
    const answer = request('monitor', {}, { timeoutMs: MONITOR_DEADLINE_MS, busyRetryForMs: MONITOR_DEADLINE_MS / 2 }) as Promise<OpResult<'monitor'>>;
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

function text(m: OpResult<'monitor'>): string {
  const counts = (r: Record<string, number>) => Object.entries(r).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(', ') || 'none';
  let out = `xlurm ${m.version}, up ${m.uptime_s} s, scheduler ${m.mode}\n`;
  out += `Jobs: ${counts(m.counts.by_state)}\n`;
  out += `Pending by reason: ${counts(m.counts.by_reason)}\n`;
  for (const r of m.reservations) out += `Reservation: job ${r.job} on ${r.kind} ${r.devices.join(',')}\n`;
  for (const u of m.users) out += `User ${u.user} (${u.uid}): ${u.running} running, ${u.pending} pending\n`;
  return out + infoTable(m.devices);
}

const monitor: XCommand = {
  command: 'monitor',
  describe: 'One snapshot of the whole machine for monitoring; fails (exit 1) when the daemon does not answer within 2 s',
  usage: '[OPTIONS]',
  options: MONITOR_OPTIONS,
  builder: (y) => y.options(MONITOR_OPTIONS),
  async handler(args) {
    noExtra(args, 0);
    const m = await snapshot();
    await writeOut(flag(args.json) ? JSON.stringify(m, null, 2) + '\n' : text(m));
  },
};

export default monitor;
