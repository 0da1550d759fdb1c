// handlers/include.ts: administrator only; the whole list is checked first.
import t from 'tap';
import { exclude } from '../../../../packages/daemon/src/handlers/exclude';
import { include } from '../../../../packages/daemon/src/handlers/include';
import { alice, aliceCaller, ctxOf, makeCore, rootCaller, spec, startedBy } from '../../../helpers/core';

t.test('only the administrator includes; an included device is used by a waiting job', async (t) => {
  const tc = await makeCore(t, { devices: 2 });
  exclude(ctxOf(tc.core, rootCaller), { ids: [0, 1] });
  const job = await tc.core.submit(alice, spec({ count: 2 }));
  t.throws(() => include(ctxOf(tc.core, aliceCaller), { ids: [0, 1] }), { code: 'NOT_ADMIN', message: 'only the administrator may exclude or include devices' });
  t.same(tc.core.excludedIds(), [0, 1]);
  t.throws(() => include(ctxOf(tc.core, rootCaller), { ids: [0, 5, 6] }), { code: 'UNKNOWN_DEVICE', message: 'unknown device ID(s): 5, 6' });
  t.same(include(ctxOf(tc.core, rootCaller), { ids: [1] }), { excluded: [0] });
  t.same(include(ctxOf(tc.core, rootCaller), { ids: [0, 1] }), { excluded: [] }, 'repeating is harmless');
  await startedBy(tc, job.id);
  t.same(tc.logs, ['excluded device IDs 0,1', 'included device IDs 1', 'included device IDs 0,1']);
});
