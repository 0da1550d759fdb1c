// xrun run by the daemon's own account reads the job's log file itself
// (follow with `bytes: false`); byte-exact for large output and across a
// daemon restart. The relayed path (another account) is test/multiuser/log-relay.ts.
import t from 'tap';
import * as path from 'node:path';
import { startDaemon } from '../helpers/daemon';
import { relayCases } from '../helpers/relay';

t.test('xrun log path of the daemon\'s own account', async (t) => {
  const d = await startDaemon(t);
  relayCases(t, d, () => ({ cwd: path.dirname(d.home) }));
});
