import t from 'tap';
import { main } from '../../../../packages/cli/src/main';
import { excludedText } from '../../../../packages/cli/src/commands/exclude';
import { capture, fakeDaemon, withHome } from '../fake-daemon';

t.test('reply texts', async (t) => {
  t.equal(excludedText([0, 2]), 'Excluded device IDs: 0,2\n');
  t.equal(excludedText([]), 'No device IDs are excluded.\n');
});

t.test('exclude and include send every id, comma-separated and repeated', async (t) => {
  const set = new Set<number>();
  const d = await fakeDaemon(t, (c) => {
    for (const id of c.req.args.ids) (c.req.op === 'exclude' ? set.add(id) : set.delete(id));
    c.reply({ excluded: [...set].sort((a, b) => a - b) });
  });
  let r = await withHome(d.home, () => capture(() => main('xlurm', ['exclude', '3,1', '2'])));
  t.same([r.value, r.stdout], [0, 'Excluded device IDs: 1,2,3\n']);
  t.same(d.requests[0], { v: 1, op: 'exclude', args: { ids: [3, 1, 2] } });
  r = await withHome(d.home, () => capture(() => main('xlurm', ['include', '1,2,3'])));
  t.same([r.value, r.stdout], [0, 'No device IDs are excluded.\n']);
  r = await capture(() => main('xlurm', ['include']));
  t.equal(r.value, 2);
  r = await capture(() => main('xlurm', ['exclude', '1,x']));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: invalid value 'x' for '<ID\[,ID\.\.\.\]>': must be a whole number of 0 or more\n/);
});
