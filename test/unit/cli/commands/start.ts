// `xlurm start` (cli/src/commands/start.ts): the configuration file is checked here, before
// any daemon is started or asked; then lifecycle's start (a daemon that answers: nothing to do).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { main } from '../../../../packages/cli/src/main';
import { capture, fakeDaemon, tempDir, withHome } from '../fake-daemon';

t.test('a bad or missing named file: its problems, exit 1, no daemon asked', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply({ version: '0.1.0' }));
  const bad = path.join(tempDir(t), 'bad.toml');
  fs.writeFileSync(bad, '[daemon]\nbogus = 1\n');
  let r = await withHome(d.home, () => capture(() => main('xlurm', ['start', '--config', bad])));
  t.equal(r.value, 1);
  t.match(r.stderr, new RegExp(`^xlurm: ${bad}:2: daemon\\.bogus: unknown key.*\n$`));
  t.equal(r.stdout, '');
  const missing = path.join(path.dirname(bad), 'missing.toml');
  r = await withHome(d.home, () => capture(() => main('xlurm', ['start', '--config', missing])));
  t.same([r.value, r.stderr], [1, `xlurm: ${missing}: cannot read the configuration file: no such file\n`]);
  t.same(d.requests, [], 'nothing was started or asked');
});

t.test('a good file, then start: a daemon that answers means nothing to do', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply({ version: '0.1.0' }));
  const good = path.join(tempDir(t), 'good.toml');
  fs.writeFileSync(good, '[daemon]\nmax_running = 2\n');
  const r = await withHome(d.home, () => capture(() => main('xlurm', ['start', '--config', good, '--backend', 'none'])));
  t.same([r.value, r.stdout, r.stderr], [0, 'xlurm is already running\n', '']);
  t.same(d.requests.map((q) => q.op), ['status']);
});

t.test('argument errors come first', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply({ version: '0.1.0' }));
  let r = await withHome(d.home, () => capture(() => main('xlurm', ['start', 'now'])));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: unexpected argument 'now' found\n/);
  r = await withHome(d.home, () => capture(() => main('xlurm', ['start', '--backend', 'cuda'])));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: invalid value 'cuda' for '--backend <BACKEND>'/);
  t.same(d.requests, []);
});
