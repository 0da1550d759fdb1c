import t from 'tap';
import { main } from '../../../../packages/cli/src/main';
import { capture, fakeDaemon, withHome } from '../fake-daemon';

const ST = {
  version: '0.1.0', protocol: 1, pid: 99, uid: 0, backend: 'none', backends: [], max_running: 32, retention_secs: 604800,
  started_at: 1700000000, uptime_secs: 3661, excluded: [1, 3], counts: { PENDING: 2 },
};

t.test('xlurm status: text and --json', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply(ST));
  let r = await withHome(d.home, () => capture(() => main('xlurm', ['status'])));
  t.equal(r.value, 0);
  t.match(r.stdout, /^Version: 0\.1\.0\nProtocol: 1\nPID: 99\n/);
  t.match(r.stdout, /^Uptime: 01:01:01$/m);
  t.match(r.stdout, /^Excluded device IDs: 1,3$/m);
  t.match(r.stdout, /^Jobs: PENDING 2, RUNNING 0, /m);
  r = await withHome(d.home, () => capture(() => main('xlurm', ['status', '--json'])));
  t.equal(r.stdout, JSON.stringify(ST, null, 2) + '\n');
});
