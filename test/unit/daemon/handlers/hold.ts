// handlers/hold.ts and update.ts (docs/behaviour.md §23.3): owner or root, every id authorised
// before anything changes; root alone raises a running job's time limit.
import t from 'tap';
import { hold, release } from '../../../../packages/daemon/src/handlers/hold';
import { update } from '../../../../packages/daemon/src/handlers/update';
import { alice, aliceCaller, bobCaller, ctxOf, makeCore, rootCaller, spec, startedBy } from '../../../helpers/core';

t.test('hold and release: the owner and root; another user is refused and nothing changes', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec({ count: 1 })); // no device: stays pending
  const b = await tc.core.submit({ uid: 1001, gid: 1001, name: 'bob' }, spec({ count: 1 }));
  t.throws(() => hold(ctxOf(tc.core, bobCaller), { ids: [b.id, a.id] }), { code: 'PERMISSION_DENIED', message: 'permission denied: job belongs to alice (UID 1000)' });
  t.notOk(tc.core.current(b.id)!.spec.hold, "bob's own job in the same list is untouched");
  t.same(await hold(ctxOf(tc.core, aliceCaller), { ids: [a.id] }), {});
  t.equal(tc.store.get(a.id)!.spec.hold, true, 'on disk when answered');
  t.same(await release(ctxOf(tc.core, rootCaller), { ids: [a.id] }), {});
  t.equal(tc.store.get(a.id)!.spec.hold, undefined);
  t.throws(() => release(ctxOf(tc.core, aliceCaller), { ids: [999] }), { code: 'JOB_NOT_FOUND', message: 'job not found' });
});

t.test('update: the owner lowers a running limit, root raises it; another user may not touch it', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec({ time_limit: 600 }));
  await startedBy(tc, a.id);
  t.throws(() => update(ctxOf(tc.core, bobCaller), { id: a.id, time_limit: 60 }), { code: 'PERMISSION_DENIED' });
  t.match(await update(ctxOf(tc.core, aliceCaller), { id: a.id, time_limit: 300 }), { spec: { time_limit: 300 } });
  t.throws(() => update(ctxOf(tc.core, aliceCaller), { id: a.id, time_limit: 900 }), { code: 'PERMISSION_DENIED' });
  t.match(await update(ctxOf(tc.core, rootCaller), { id: a.id, time_limit: 900 }), { spec: { time_limit: 900 } });
});
