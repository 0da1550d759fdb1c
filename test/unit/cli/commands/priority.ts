// `xlurm priority ID N` (cli/src/commands/priority.ts) against the fake daemon (docs/behaviour.md §22.1).
import t from 'tap';
import { main } from '../../../../packages/cli/src/main';
import { capture, fakeDaemon, withHome } from '../fake-daemon';
import { parsePriority } from '../../../../packages/cli/src/commands/priority';

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
