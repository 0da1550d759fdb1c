// handlers/top.ts: the owner or root moves a pending job first among the owner's (docs/behaviour.md §23.3).
import t from 'tap';
import { top } from '../../../../packages/daemon/src/handlers/top';
import { alice, aliceCaller, bobCaller, ctxOf, makeCore, rootCaller, spec, startedBy } from '../../../helpers/core';

t.test('the owner and root may; another user gets permission denied', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const holder = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, holder.id);
  const a = await tc.core.submit(alice, spec({ count: 1 }));
  const b = await tc.core.submit(alice, spec({ count: 1 }));
  t.throws(() => top(ctxOf(tc.core, bobCaller), { id: b.id }), { code: 'PERMISSION_DENIED' });
  t.same(tc.core.pendingOrder(), [a.id, b.id]);
  await top(ctxOf(tc.core, aliceCaller), { id: b.id });
  t.same(tc.core.pendingOrder(), [b.id, a.id]);
  await top(ctxOf(tc.core, rootCaller), { id: a.id });
  t.same(tc.core.pendingOrder(), [a.id, b.id], 'the latest move goes first');
});
