// handlers/admin.ts: who administers the daemon.
import t from 'tap';
import { requireAdmin } from '../../../../packages/daemon/src/handlers/admin';
import { aliceCaller, bobCaller, makeCore, rootCaller } from '../../../helpers/core';

t.test('root administers any daemon; a non-root daemon also its own account', async (t) => {
  const rootDaemon = await makeCore(t, { euid: 0 });
  t.doesNotThrow(() => requireAdmin(rootDaemon.core, rootCaller, 'do it'));
  t.throws(() => requireAdmin(rootDaemon.core, aliceCaller, 'do it'), { code: 'NOT_ADMIN', message: 'only the administrator may do it' });
  const aliceDaemon = await makeCore(t, { euid: aliceCaller.uid });
  t.doesNotThrow(() => requireAdmin(aliceDaemon.core, aliceCaller, 'do it'));
  t.doesNotThrow(() => requireAdmin(aliceDaemon.core, rootCaller, 'do it'));
  t.throws(() => requireAdmin(aliceDaemon.core, bobCaller, 'stop'), { code: 'NOT_ADMIN', message: 'only the administrator may stop' });
});
