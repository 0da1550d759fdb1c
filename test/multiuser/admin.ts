// docs/behaviour.md §8 as root: stop, restart, clean, exclude and include are the
// administrator's; other accounts are refused and nothing changes.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Daemon } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, as, rootDaemon, rootHome, runtime } from '../helpers/multiuser';

t.test('administrative operations are root\'s', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  const d = await rootDaemon(t);
  const cwd = path.dirname(d.home);
  const refusals: Array<[string[], string]> = [
    [['stop'], 'xlurm: only the administrator may stop or restart the scheduler\n'],
    [['restart', '--backend', 'none'], 'xlurm: only the administrator may stop or restart the scheduler\n'],
    [['exclude', '0'], 'xlurm: only the administrator may exclude or include devices\n'],
    [['include', '0'], 'xlurm: only the administrator may exclude or include devices\n'],
    [['clean'], 'xlurm: XLURM_HOME must be a directory owned by the daemon account\n'],
    [['daemon', '--backend', 'none'], 'xlurm: XLURM_HOME must be a directory owned by the daemon account\n'],
  ];
  for (const who of [nobody, daemon]) {
    const results = await Promise.all(refusals.map(([args]) => d.run('xlurm', args, as(who, { cwd }))));
    refusals.forEach(([args, stderr], i) => {
      t.equal(results[i]!.code, 1, `${who.name}: xlurm ${args.join(' ')}`);
      t.equal(results[i]!.stderr, stderr);
    });
    const start = await d.run('xlurm', ['start', '--backend', 'none'], as(who, { cwd }));
    t.equal(start.stdout, 'xlurm is already running\n', `${who.name}: start changes nothing`);
    t.equal(start.code, 0);
  }
  t.ok(await d.ping(), 'the daemon still answers');
  t.equal(d.proc!.exitCode, null);
  const st = await d.request('status', {}) as any;
  t.same(st.result.excluded, []);
  t.equal(d.proc!.pid, st.result.pid, 'the same daemon process');
});

t.test('without a daemon, another account cannot start the shared one', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const rt = await runtime();
  const existing = rootHome(t);
  fs.mkdirSync(existing, { mode: 0o755 });
  const missing = rootHome(t);
  const cases: Array<[string, string]> = [
    [existing, 'xlurm: XLURM_HOME must be a directory owned by the daemon account\n'],
    [missing, 'xlurm: cannot create state directory; start the shared daemon with sudo\n'],
  ];
  for (const [home, stderr] of cases) {
    const d = new Daemon(t, home, { runtime: rt });
    const r = await d.run('xlurm', ['start', '--backend', 'none'], as(nobody, { cwd: '/' }));
    t.equal(r.stderr, stderr);
    t.equal(r.code, 1);
    t.notOk(fs.existsSync(d.socket), 'no daemon socket');
    t.notOk(await d.ping(), 'no daemon answers');
  }
  t.notOk(fs.existsSync(missing), 'nothing was created');
});
