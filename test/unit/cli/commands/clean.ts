// `xlurm clean` (cli/src/commands/clean.ts): the daemon package's offline clean, run in this
// process; its line on stdout, its refusal as `xlurm: …` with exit 1.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { main } from '../../../../packages/cli/src/main';
import { capture, tempDir, withHome } from '../fake-daemon';

let nativeOk = true;
try { require('@xlurm/native').native(); } catch { nativeOk = false; }

t.test('logs and daemon.log go; what clean says is printed', { skip: nativeOk ? false : 'native addon not built' }, async (t) => {
  const home = tempDir(t);
  let r = await withHome(home, () => capture(() => main('xlurm', ['clean'])));
  t.same([r.value, r.stdout, r.stderr], [0, 'Removed 0 job log(s); daemon.log was already absent.\n', '']);
  fs.writeFileSync(path.join(home, 'jobs', '1.log'), 'x');
  fs.writeFileSync(path.join(home, 'daemon.log'), 'x');
  r = await withHome(home, () => capture(() => main('xlurm', ['clean'])));
  t.same([r.value, r.stdout], [0, 'Removed 1 job log(s) and daemon.log.\n']);
});

t.test('a running daemon: refused, exit 1', { skip: nativeOk ? false : 'native addon not built' }, async (t) => {
  const { flockExclusive } = require('@xlurm/native') as typeof import('@xlurm/native');
  const home = tempDir(t);
  const fd = fs.openSync(path.join(home, 'daemon.lock'), fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
  t.teardown(() => fs.closeSync(fd));
  t.ok(flockExclusive(fd));
  const r = await withHome(home, () => capture(() => main('xlurm', ['clean'])));
  t.same([r.value, r.stdout, r.stderr], [1, '', 'xlurm: xlurm is running; stop the scheduler before cleaning logs\n']);
});

t.test('no arguments', async (t) => {
  const r = await capture(() => main('xlurm', ['clean', 'all']));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: unexpected argument 'all' found\n/);
});
