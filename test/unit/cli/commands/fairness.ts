// The fairness commands against the fake daemon (docs/behaviour.md §22, §23.3): xlurm priority,
// xlurm top, xlurm share [--json]; and --nice's parse (0 to 10000, never negative).
import t from 'tap';
import { main } from '../../../../packages/cli/src/main';
import { parsePriority } from '../../../../packages/cli/src/commands/priority';
import { shareTable } from '../../../../packages/cli/src/commands/share';
import { parseNice } from '../../../../packages/cli/src/submit';
import { capture, fakeDaemon, withHome } from '../fake-daemon';

const job = { id: 7, owner: { uid: 1000, gid: 1000, name: 'alice' }, priority: 10, nice: 0 };

t.test('xlurm priority ID N', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply(job));
  const r = await withHome(d.home, () => capture(() => main('xlurm', ['priority', '7', '10'])));
  t.same([r.value, r.stdout, r.stderr], [0, 'Job 7: priority 10\n', '']);
  t.same(d.requests, [{ v: 1, op: 'priority', args: { id: 7, priority: 10 } }]);
  t.equal(parsePriority('-1000'), -1000);
  t.throws(() => parsePriority('1001'), { name: 'UsageError', message: "invalid value '1001' for '<PRIORITY>': use -1000 to 1000" });
  t.throws(() => parsePriority('x'), { name: 'UsageError' });
  const missing = await withHome(d.home, () => capture(() => main('xlurm', ['priority', '7'])));
  t.equal(missing.value, 2);
});

t.test('xlurm top ID', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply(job));
  const r = await withHome(d.home, () => capture(() => main('xlurm', ['top', '7'])));
  t.same([r.value, r.stdout], [0, "Job 7 is now first among alice's pending jobs\n"]);
  t.same(d.requests, [{ v: 1, op: 'top', args: { id: 7 } }]);
});

t.test('xlurm share: a table by rank, or the daemon\'s JSON as it came', async (t) => {
  const rows = [{ user: 'bob', uid: 1001, usage: 12.5, decayed: 3.25, rank: 1 }, { user: 'alice', uid: 1000, usage: 3600, decayed: 1800, rank: 2 }];
  const d = await fakeDaemon(t, (c) => c.reply(rows));
  const r = await withHome(d.home, () => capture(() => main('xlurm', ['share'])));
  t.equal(r.stdout, 'RANK USER  UID  USAGE  DECAYED\n1    bob   1001 12.5   3.3\n2    alice 1000 3600.0 1800.0\n');
  const j = await withHome(d.home, () => capture(() => main('xlurm', ['share', '--json'])));
  t.same(JSON.parse(j.stdout), rows);
  t.equal(shareTable([]), 'No usage recorded yet.\n');
});

t.test('--nice: 0 to 10000; a negative value is refused, saying why', async (t) => {
  t.equal(parseNice('0'), 0);
  t.equal(parseNice('10000'), 10000);
  t.throws(() => parseNice('10001'), { name: 'UsageError', message: "invalid value '10001' for '--nice <NICE>': use 0 to 10000" });
  t.throws(() => parseNice('-5'), { name: 'UsageError', message: /cannot be negative/ });
});
