import t from 'tap';
import { main } from '../../../../packages/cli/src/main';
import { capture, fakeDaemon, withHome } from '../fake-daemon';

t.test('xlurm stop', async (t) => {
  let refuse = false;
  const d = await fakeDaemon(t, (c) => (refuse
    ? c.refuse('NOT_ADMIN', 'only the administrator may stop or restart the scheduler')
    : c.reply({})));
  let r = await withHome(d.home, () => capture(() => main('xlurm', ['stop'])));
  t.same([r.value, r.stdout], [0, 'Scheduler stopped; running jobs continue.\n']);
  refuse = true;
  r = await withHome(d.home, () => capture(() => main('xlurm', ['stop'])));
  t.same([r.value, r.stderr], [1, 'xlurm: only the administrator may stop or restart the scheduler\n']);
  t.same(d.requests.map((q) => q.op), ['stop', 'stop']);
});
