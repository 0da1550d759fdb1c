// `xlurm daemon` (cli/src/commands/daemon.ts): the daemon package's main in this process,
// with the options passed on; its exit status is the command's.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { request } from '../../../../packages/cli/src/client';
import { main } from '../../../../packages/cli/src/main';
import { waitFor } from '../../../helpers/wait';
import { capture, tempDir, withHome } from '../fake-daemon';

let nativeOk = true;
try { require('@xlurm/native').native(); } catch { nativeOk = false; }

t.test('options reach the daemon: a missing --config stops it, exit 1', async (t) => {
  const home = tempDir(t);
  const missing = path.join(home, 'missing.toml');
  const r = await withHome(home, () => capture(() => main('xlurm', ['daemon', '--backend', 'none', '--config', missing])));
  t.same([r.value, r.stdout, r.stderr], [1, '', `xlurm: ${missing}: cannot read the configuration file: no such file\n`]);
});

t.test('runs in the foreground until stopped, with the options given', { skip: nativeOk ? false : 'native addon not built' }, async (t) => {
  const home = tempDir(t);
  const file = path.join(home, 'xlurm.toml');
  fs.writeFileSync(file, '[daemon]\nmax_running = 3\n');
  const run = withHome(home, () => capture(() => main('xlurm', ['daemon', '--backend', 'none', '--config', file, '--retention', '2h'])));
  const view = await waitFor(async () => {
    try { return await request('config', {}, { home }); } catch { return undefined; }
  }, { what: 'the daemon answering', timeout: 10000 });
  await request('stop', {}, { home });
  const r = await run;
  // Asserted only now: tap writes its results to stdout, which capture() holds while the daemon runs.
  t.same([view.file, view.from_flags, view.config.daemon], [file, ['daemon.backend', 'daemon.retention'],
    { backend: 'none', max_running: 3, retention: '2h', exclude_device_ids: [] }]);
  t.equal(r.value, 0);
  t.match(r.stderr, /xlurm daemon \d+ serving /);
  t.match(r.stderr, /xlurm daemon stopping; running jobs continue/);
});

t.test('a second daemon on the same home: refused, exit 1', { skip: nativeOk ? false : 'native addon not built' }, async (t) => {
  const { flockExclusive } = require('@xlurm/native') as typeof import('@xlurm/native');
  const home = tempDir(t);
  const file = path.join(home, 'xlurm.toml');
  fs.writeFileSync(file, '');
  const fd = fs.openSync(path.join(home, 'daemon.lock'), fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
  t.teardown(() => fs.closeSync(fd));
  t.ok(flockExclusive(fd));
  const r = await withHome(home, () => capture(() => main('xlurm', ['daemon', '--backend', 'none', '--config', file])));
  t.same([r.value, r.stderr], [1, 'xlurm: xlurm daemon is already running\n']);
});

t.test('argument errors: exit 2', async (t) => {
  let r = await capture(() => main('xlurm', ['daemon', 'now']));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: unexpected argument 'now' found\n/);
  r = await capture(() => main('xlurm', ['daemon', '--max-running', 'x']));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: invalid value 'x' for '--max-running <N>'/);
});
