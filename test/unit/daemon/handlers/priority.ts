// handlers/priority.ts: the administrator only (docs/behaviour.md §22.1): no user raises their own job.
import t from 'tap';
import { priority } from '../../../../packages/daemon/src/handlers/priority';
import { alice, aliceCaller, bobCaller, ctxOf, makeCore, rootCaller, spec, startedBy } from '../../../helpers/core';

t.test('an owner is refused, another user too; root sets it on a pending job', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const holder = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, holder.id);
  const j = await tc.core.submit(alice, spec({ count: 1 }));
  const refused = { code: 'NOT_ADMIN', message: "only the administrator may change a job's priority" };
  t.throws(() => priority(ctxOf(tc.core, aliceCaller), { id: j.id, priority: 10 }), refused, 'not even the owner');
  t.throws(() => priority(ctxOf(tc.core, bobCaller), { id: j.id, priority: 10 }), refused);
  t.equal(tc.core.current(j.id)!.priority ?? 0, 0);
  const r = await priority(ctxOf(tc.core, rootCaller), { id: j.id, priority: -3 });
  t.match(r, { id: j.id, priority: -3, nice: 0, state: 'PENDING' });
  t.throws(() => priority(ctxOf(tc.core, rootCaller), { id: 999, priority: 1 }), { code: 'JOB_NOT_FOUND' });
  t.throws(() => priority(ctxOf(tc.core, rootCaller), { id: holder.id, priority: 1 }), { code: 'INVALID_ARGUMENT', message: `job ${holder.id} is not pending` });
});
