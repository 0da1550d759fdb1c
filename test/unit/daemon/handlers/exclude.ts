// handlers/exclude.ts: administrator only; the whole list is checked first.
import t from 'tap';
import { exclude } from '../../../../packages/daemon/src/handlers/exclude';
import { aliceCaller, ctxOf, makeCore, rootCaller } from '../../../helpers/core';

t.test('a user who is not the administrator is refused before anything is checked or changed', async (t) => {
  const tc = await makeCore(t, { devices: 2 });
  const refused = { code: 'NOT_ADMIN', message: 'only the administrator may exclude or include devices' };
  t.throws(() => exclude(ctxOf(tc.core, aliceCaller), { ids: [0] }), refused);
  t.throws(() => exclude(ctxOf(tc.core, aliceCaller), { ids: [77] }), refused, 'not UNKNOWN_DEVICE: no probing of the inventory');
  t.same(tc.core.excludedIds(), []);
  t.same(tc.logs, []);
});

t.test('the administrator excludes; the reply lists every excluded id in order', async (t) => {
  const tc = await makeCore(t, { devices: 3 });
  t.same(exclude(ctxOf(tc.core, rootCaller), { ids: [2] }), { excluded: [2] });
  t.same(exclude(ctxOf(tc.core, rootCaller), { ids: [0, 2] }), { excluded: [0, 2] });
  t.throws(() => exclude(ctxOf(tc.core, rootCaller), { ids: [1, 3] }), { code: 'UNKNOWN_DEVICE', message: 'unknown device ID(s): 3' });
  t.same(tc.core.excludedIds(), [0, 2], 'a list with an unknown id changes nothing');
  const own = await makeCore(t, { devices: 1, euid: aliceCaller.uid });
  t.same(exclude(ctxOf(own.core, aliceCaller), { ids: [0] }), { excluded: [0] }, "a non-root daemon's own account administers it");
});
