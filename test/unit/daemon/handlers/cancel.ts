// handlers/cancel.ts: owner or root; answered once the cancellation is durable.
import t from 'tap';
import { cancel } from '../../../../packages/daemon/src/handlers/cancel';
import { alice, aliceCaller, bobCaller, ctxOf, makeCore, rootCaller, spec, startedBy } from '../../../helpers/core';

t.test('the owner and root may cancel; another user may not, and the job stays', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec({ count: 1 })); // no device: stays pending
  const b = await tc.core.submit(alice, spec({ count: 1 }));
  t.throws(() => cancel(ctxOf(tc.core, bobCaller), { id: a.id }), { code: 'PERMISSION_DENIED', message: 'permission denied: job belongs to alice (UID 1000)' });
  t.equal(tc.core.current(a.id)!.state, 'PENDING');
  t.same(await cancel(ctxOf(tc.core, aliceCaller), { id: a.id }), {});
  t.equal(tc.store.get(a.id)!.state, 'CANCELLED', 'on disk when answered');
  t.same(await cancel(ctxOf(tc.core, rootCaller), { id: b.id }), {});
  t.equal(tc.store.get(b.id)!.state, 'CANCELLED');
  t.same(await cancel(ctxOf(tc.core, aliceCaller), { id: a.id }), {}, 'finished: a no-op');
  t.throws(() => cancel(ctxOf(tc.core, aliceCaller), { id: 999 }), { code: 'JOB_NOT_FOUND', message: 'job not found' });
});

t.test('a running job: the supervisor is told; a cancel marker that cannot be written is an error', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec());
  await startedBy(tc, a.id);
  t.same(await cancel(ctxOf(tc.core, aliceCaller), { id: a.id }), {});
  t.same(tc.runner.calls.filter((c) => c[0] === 'cancel'), [['cancel', a.id]]);
  tc.runner.cancelError = Object.assign(new Error('ENOSPC: no space left on device'), { code: 'EDQUOT' });
  t.throws(() => cancel(ctxOf(tc.core, aliceCaller), { id: a.id }), {
    code: 'STORAGE', message: `cannot cancel job ${a.id}: cannot write its cancel marker: disk is full; free space under XLURM_HOME and retry`,
  });
});
