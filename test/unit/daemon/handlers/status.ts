// handlers/status.ts: the daemon's settings, exclusions and job counts, for anyone.
import t from 'tap';
import { PROTOCOL_VERSION, VERSION } from '@xlurm/protocol';
import { status } from '../../../../packages/daemon/src/handlers/status';
import { alice, bobCaller, ctxOf, makeCore, spec, startedBy } from '../../../helpers/core';

t.test('version, settings, exclusions in order and counts per state', async (t) => {
  const tc = await makeCore(t, { devices: 3, maxRunning: 5 });
  tc.core.exclude([2, 0]);
  const a = await tc.core.submit(alice, spec());
  await tc.core.submit(alice, spec({ count: 9 }));
  await startedBy(tc, a.id);
  const s = status(ctxOf(tc.core, bobCaller));
  t.match(s, {
    version: VERSION, protocol: PROTOCOL_VERSION, pid: process.pid, uid: tc.core.euid,
    backend: 'none', backends: ['nvidia'], max_running: 5, retention_secs: 7 * 86400,
    started_at: tc.core.startedAt, excluded: [0, 2], counts: { RUNNING: 1, PENDING: 1 },
  });
  t.ok(s.uptime_secs >= 0 && s.uptime_secs < 60);
});

t.test('the policy in force: greedy by default, the limits that are set', async (t) => {
  const tc = await makeCore(t);
  const p = status(ctxOf(tc.core, bobCaller)).policy!;
  t.equal(p.scheduler, 'greedy');
  t.equal(p.fair_share, true, 'fair share is on by default (docs/behaviour.md §22.2)');
  t.type(p.group_affinity, 'string');
  for (const v of Object.values(p.limits)) t.match(v, /^\d+(\.\d)?[smhdKMGT]?$|^[\d=,]+$/);
  // Bounded requests (docs/behaviour.md §28.2): the defaults are shown like the other limits.
  t.match(p.limits, { 'limits.max_array_tasks': '10000', 'limits.max_request_bytes': '3M', 'limits.users.default.pending_jobs': '10000' });
});
