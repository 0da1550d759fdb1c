// handlers/get.ts: the full job, to its owner and root only.
import t from 'tap';
import { get } from '../../../../packages/daemon/src/handlers/get';
import { alice, aliceCaller, bobCaller, ctxOf, makeCore, rootCaller, spec } from '../../../helpers/core';

t.test('owner and root get the whole job; anyone else is refused', async (t) => {
  const { core } = await makeCore(t);
  const job = await core.submit(alice, spec({ count: 3, env: { SECRET: 'x' }, name: 'train' }));
  for (const caller of [aliceCaller, rootCaller]) {
    const got = get(ctxOf(core, caller), { id: job.id });
    t.match(got, { id: job.id, owner: alice, state: 'PENDING', devices: [], result: null, spec: { name: 'train', env: { SECRET: 'x' }, count: 3 } });
    t.notOk('stepdPid' in (got as object), 'daemon bookkeeping stays inside');
  }
  t.throws(() => get(ctxOf(core, bobCaller), { id: job.id }), { code: 'PERMISSION_DENIED', message: 'permission denied: job belongs to alice (UID 1000)' });
  t.throws(() => get(ctxOf(core, bobCaller), { id: job.id + 1 }), { code: 'JOB_NOT_FOUND', message: 'job not found' });
  t.throws(() => get(ctxOf(core, rootCaller), { id: job.id + 1 }), { code: 'JOB_NOT_FOUND', message: 'job not found' });
});
