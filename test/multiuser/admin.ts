// Spec 8 as root: stop, restart, clean, exclude and include are the
// administrator's; other accounts are refused and nothing changes.
import t from 'tap';
import * as path from 'node:path';
import { MULTIUSER_SKIP, accounts, as, rootDaemon } from '../helpers/multiuser';

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
