// handlers/restart.ts: administrator only, refused while jobs run.
import t from 'tap';
import { restart } from '../../../../packages/daemon/src/handlers/restart';
import { alice, aliceCaller, ctxOf, makeCore, rootCaller, spec, startedBy } from '../../../helpers/core';

t.test('refused to a user; refused while jobs run; else the daemon exits after the reply', async (t) => {
  const tc = await makeCore(t);
  const user = ctxOf(tc.core, aliceCaller);
  t.throws(() => restart(user), { code: 'NOT_ADMIN', message: 'only the administrator may stop or restart the scheduler' });
  t.equal(user.shutdowns(), 0);
  const a = await tc.core.submit(alice, spec());
  const b = await tc.core.submit(alice, spec());
  await startedBy(tc, a.id);
  await startedBy(tc, b.id);
  const admin = ctxOf(tc.core, rootCaller);
  t.throws(() => restart(admin), { code: 'JOBS_RUNNING', message: `cannot restart while jobs are running: ${a.id}, ${b.id}` });
  t.equal(admin.shutdowns(), 0);
  for (const id of [a.id, b.id]) tc.core.complete(id, { state: 'COMPLETED', exit_code: 0, finished_at: tc.core.now(), error: null });
  t.same(restart(admin), {});
  t.equal(admin.shutdowns(), 1);
});
