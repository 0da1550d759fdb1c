// As root: nobody cannot open its job's log (jobs/ is 0700 root), so xrun
// gets the bytes relayed by the daemon: byte-exact for large output (many
// 1 MiB frames) and across a daemon restart (reconnect from the last offset).
import t from 'tap';
import { relayCases } from '../helpers/relay';
import { MULTIUSER_SKIP, accounts, as, rootDaemon, workDir } from '../helpers/multiuser';

t.test('xrun log relay for another account', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const d = await rootDaemon(t);
  const cwd = workDir(t);
  relayCases(t, d, () => as(nobody, { cwd }));
});
