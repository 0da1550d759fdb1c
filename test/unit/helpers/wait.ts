// The test helpers' waits (test/helpers/wait.ts, test/helpers/daemon.ts): a failing wait must fail
// at once when its predicate throws, and say what the daemon logged, so a broken test shows its
// cause instead of waiting out a timeout.
import t from 'tap';
import { startDaemon } from '../../helpers/daemon';
import { addFailureContext, keepsHolding, waitFor } from '../../helpers/wait';

t.test('waitFor resolves to the first truthy value', async (t) => {
  let n = 0;
  t.equal(await waitFor(() => (++n >= 3 ? n : 0), { interval: 1 }), 3);
});

t.test('a predicate that throws fails the wait at once, with its error', async (t) => {
  const t0 = Date.now();
  let tries = 0;
  const boom = new Error('no such file');
  await t.rejects(waitFor(() => { tries++; throw boom; }, { timeout: 60000, what: 'the file' }),
    { message: /^failed waiting for the file: no such file/, cause: boom });
  t.equal(tries, 1, 'tried once');
  t.ok(Date.now() - t0 < 5000, 'long before the timeout');
});

t.test('a wait that times out names what it waited for, and the registered contexts', async (t) => {
  const remove = addFailureContext(() => 'the daemon said: hello');
  t.teardown(remove);
  await t.rejects(waitFor(() => false, { timeout: 50, what: 'Godot' }), { message: /^timed out waiting for Godot\nthe daemon said: hello$/ });
  remove();
  await t.rejects(waitFor(() => false, { timeout: 10, what: 'Godot' }), { message: /^timed out waiting for Godot$/ }, 'a removed context is gone');
});

t.test('keepsHolding: true while the condition holds for the whole time, false at the first miss', async (t) => {
  const t0 = Date.now();
  t.equal(await keepsHolding(() => true, 100, 10), true);
  t.ok(Date.now() - t0 >= 100, 'checked for the whole time');
  let n = 0;
  t.equal(await keepsHolding(() => ++n < 3, 60000, 1), false);
  t.equal(n, 3, 'stopped at the first miss');
});

t.test('a daemon that exits at start fails startDaemon at once, with its output', async (t) => {
  const t0 = Date.now();
  await t.rejects(startDaemon(t, { args: ['--no-such-flag'] }),
    { message: /^failed waiting for daemon start: daemon exited during start-up \(exit status 1\)\n.*xlurm: unknown daemon option: --no-such-flag\n/s });
  t.ok(Date.now() - t0 < 10000, `within seconds, not the 20 s start timeout (${Date.now() - t0} ms)`);
});

t.test("a wait that fails while a daemon runs shows the daemon's log", async (t) => {
  const d = await startDaemon(t);
  await t.rejects(waitFor(() => false, { timeout: 10, what: 'nothing' }),
    { message: new RegExp(`^timed out waiting for nothing\\n--- daemon ${d.home}: output ---\\n.*xlurm daemon`, 's') });
});
