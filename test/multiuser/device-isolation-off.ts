// docs/behaviour.md §24.8: a daemon that makes no job cgroups (here one running as nobody) cannot
// keep jobs from other devices' nodes, and xlurm status says why.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startDaemon } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, runtime, sharedDir } from '../helpers/multiuser';

t.test('a daemon run as nobody: device isolation: off (no job cgroups: …)', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const parent = sharedDir(t, 0o755, 'xlmu-iso');
  fs.chownSync(parent, nobody.uid, nobody.gid);
  const d = await startDaemon(t, { home: path.join(parent, 'home'), uid: nobody.uid, gid: nobody.gid, runtime: await runtime() });
  const st = await d.request('status', {}) as { result: { device_isolation: string } };
  t.equal(st.result.device_isolation, 'off (no job cgroups: cgroups need a daemon running as root)');
});
