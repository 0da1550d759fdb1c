// `xlurm reload` (cli/src/commands/reload.ts) against the fake daemon: an invalid file is
// printed one problem per line, as the daemon's start would.
import t from 'tap';
import { main } from '../../../../packages/cli/src/main';
import { capture, fakeDaemon, withHome } from '../fake-daemon';

t.test('reloaded', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply({ file: '/etc/xlurm/xlurm.toml', changed: ['daemon.max_running'] }));
  const r = await withHome(d.home, () => capture(() => main('xlurm', ['reload'])));
  t.same([r.value, r.stdout, r.stderr], [0, 'configuration reloaded\n', '']);
  t.same(d.requests, [{ v: 1, op: 'reload', args: {} }]);
});

t.test('an invalid file: each problem on its own xlurm: line, exit 1', async (t) => {
  const problems = '/etc/xlurm/xlurm.toml:2: daemon.bogus: unknown key\n/etc/xlurm/xlurm.toml:3: daemon.max_running: must be >= 1';
  const d = await fakeDaemon(t, (c) => c.refuse('INVALID_CONFIG', problems));
  const r = await withHome(d.home, () => capture(() => main('xlurm', ['reload'])));
  t.same([r.value, r.stdout], [1, '']);
  t.equal(r.stderr, 'xlurm: /etc/xlurm/xlurm.toml:2: daemon.bogus: unknown key\nxlurm: /etc/xlurm/xlurm.toml:3: daemon.max_running: must be >= 1\n');
});

t.test('other refusals are printed as they come', async (t) => {
  const d = await fakeDaemon(t, (c) => c.refuse('RELOAD_REFUSED', 'reload cannot change daemon.backend; restart the daemon when the queue is idle'));
  const r = await withHome(d.home, () => capture(() => main('xlurm', ['reload'])));
  t.same([r.value, r.stderr], [1, 'xlurm: reload cannot change daemon.backend; restart the daemon when the queue is idle\n']);
});

t.test('no arguments', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply({}));
  const r = await withHome(d.home, () => capture(() => main('xlurm', ['reload', 'now'])));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: unexpected argument 'now' found\n/);
  t.same(d.requests, []);
});
