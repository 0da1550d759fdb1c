// `xlurm share [--json]` (cli/src/commands/share.ts) against the fake daemon (docs/behaviour.md §22.2).
import t from 'tap';
import { main } from '../../../../packages/cli/src/main';
import { capture, fakeDaemon, withHome } from '../fake-daemon';
import { shareTable } from '../../../../packages/cli/src/commands/share';

t.test('xlurm share: a table by rank, or the daemon\'s JSON as it came', async (t) => {
  const rows = [{ user: 'bob', uid: 1001, usage: 12.5, decayed: 3.25, rank: 1 }, { user: 'alice', uid: 1000, usage: 3600, decayed: 1800, rank: 2 }];
  const d = await fakeDaemon(t, (c) => c.reply(rows));
  const r = await withHome(d.home, () => capture(() => main('xlurm', ['share'])));
  t.equal(r.stdout, 'RANK USER  UID  USAGE  DECAYED\n1    bob   1001 12.5   3.3\n2    alice 1000 3600.0 1800.0\n');
  const j = await withHome(d.home, () => capture(() => main('xlurm', ['share', '--json'])));
  t.same(JSON.parse(j.stdout), rows);
  t.equal(shareTable([]), 'No usage recorded yet.\n');
});
