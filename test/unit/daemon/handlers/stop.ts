// handlers/stop.ts: administrator only; running jobs do not stop it.
import t from 'tap';
import { stop } from '../../../../packages/daemon/src/handlers/stop';
import { alice, aliceCaller, bobCaller, ctxOf, makeCore, rootCaller, spec, startedBy } from '../../../helpers/core';

t.test('refused to a user; the administrator stops it even with jobs running', async (t) => {
  const tc = await makeCore(t);
  const a = await tc.core.submit(alice, spec());
  await startedBy(tc, a.id);
  const user = ctxOf(tc.core, aliceCaller);
  t.throws(() => stop(user), { code: 'NOT_ADMIN', message: 'only the administrator may stop or restart the scheduler' });
  t.equal(user.shutdowns(), 0);
  const admin = ctxOf(tc.core, rootCaller);
  t.same(stop(admin), {});
  t.equal(admin.shutdowns(), 1);
  t.same(tc.core.runningIds(), [a.id], 'running jobs are left alone');
  const own = await makeCore(t, { euid: aliceCaller.uid });
  t.same(stop(ctxOf(own.core, aliceCaller)), {}, "a non-root daemon's own account may stop it");
  t.throws(() => stop(ctxOf(own.core, bobCaller)), { code: 'NOT_ADMIN' });
});
