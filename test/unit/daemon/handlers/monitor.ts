// handlers/monitor.ts (docs/behaviour.md §26.5): the machine in one answer, exactly the contract's
// keys, users with counts only.
import t from 'tap';
import { VERSION } from '@xlurm/protocol';
import { monitor } from '../../../../packages/daemon/src/handlers/monitor';
import { alice, bobCaller, ctxOf, makeCore, spec, startedBy } from '../../../helpers/core';

t.test('devices, counts by state and reason, users', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const a = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, a.id);
  await tc.core.submit(alice, spec({ count: 1 }));
  await tc.core.submit({ uid: 1001, gid: 1001, name: 'bob' }, spec({ count: 1 }));
  await new Promise((r) => setImmediate(r));
  const m = monitor(ctxOf(tc.core, bobCaller));
  t.same(Object.keys(m), ['generated_at', 'version', 'uptime_s', 'mode', 'devices', 'counts', 'reservations', 'users']);
  t.equal(m.version, VERSION);
  t.equal(m.mode, 'greedy');
  t.match(m.devices, [{ status: 'allocated', job: a.id }]);
  t.match(m.counts.by_state, { RUNNING: 1, PENDING: 2 });
  t.same(Object.values(m.counts.by_reason).reduce((x, y) => x + y, 0), 2, 'every pending job under one reason');
  t.same(m.reservations, []);
  t.same(m.users, [{ user: 'alice', uid: 1000, running: 1, pending: 1 }, { user: 'bob', uid: 1001, running: 0, pending: 1 }]);
  t.ok(Math.abs(m.generated_at - Math.floor(Date.now() / 1000)) <= 1);
});
