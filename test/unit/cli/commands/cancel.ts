// `xlurm cancel` / `xcancel` (cli/src/commands/cancel.ts) against the fake daemon.
import t from 'tap';
import { main } from '../../../../packages/cli/src/main';
import { cancelJob } from '../../../../packages/cli/src/commands/cancel';
import { capture, fakeDaemon, withHome } from '../fake-daemon';

t.test('sends the id and says the cancellation was requested', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply({}));
  let r = await withHome(d.home, () => capture(() => main('xcancel', ['5'])));
  t.same([r.value, r.stdout, r.stderr], [0, 'Cancellation requested for job 5\n', '']);
  r = await withHome(d.home, () => capture(() => main('xlurm', ['cancel', '+7'])));
  t.same([r.value, r.stdout], [0, 'Cancellation requested for job 7\n']);
  const direct = await withHome(d.home, () => capture(() => cancelJob(9)));
  t.equal(direct.stdout, 'Cancellation requested for job 9\n', 'what xqueue --cancel prints too');
  t.same(d.requests, [
    { v: 1, op: 'cancel', args: { id: 5 } }, { v: 1, op: 'cancel', args: { id: 7 } }, { v: 1, op: 'cancel', args: { id: 9 } },
  ]);
});

t.test("the daemon's refusal is printed, exit 1", async (t) => {
  const d = await fakeDaemon(t, (c) => c.refuse('NOT_FOUND', 'job not found'));
  const r = await withHome(d.home, () => capture(() => main('xcancel', ['5'])));
  t.same([r.value, r.stdout, r.stderr], [1, '', 'xlurm: job not found\n']);
});

t.test('argument errors: nothing is sent', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply({}));
  let r = await withHome(d.home, () => capture(() => main('xcancel', [])));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: the following required arguments were not provided:\n {2}<JOB_ID>\n\nUsage: xcancel \[OPTIONS\] <JOB_ID>\n/);
  r = await withHome(d.home, () => capture(() => main('xcancel', ['1', '2'])));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: unexpected argument '2' found\n/);
  r = await withHome(d.home, () => capture(() => main('xcancel', ['x'])));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: invalid value 'x' for '<JOB_ID>': must be a whole number of 0 or more\n/);
  r = await withHome(d.home, () => capture(() => main('xcancel', ['0'])));
  t.same([r.value, r.stderr], [1, 'xlurm: job not found\n'], 'ids start at 1');
  t.same(d.requests, []);
});
