// `xlurm top ID` (cli/src/commands/top.ts) against the fake daemon (docs/behaviour.md §23.3).
import t from 'tap';
import { main } from '../../../../packages/cli/src/main';
import { capture, fakeDaemon, withHome } from '../fake-daemon';

const job = { id: 7, owner: { uid: 1000, gid: 1000, name: 'alice' }, priority: 10, nice: 0 };

t.test('xlurm top ID', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply(job));
  const r = await withHome(d.home, () => capture(() => main('xlurm', ['top', '7'])));
  t.same([r.value, r.stdout], [0, "Job 7 is now first among alice's pending jobs\n"]);
  t.same(d.requests, [{ v: 1, op: 'top', args: { id: 7 } }]);
});
