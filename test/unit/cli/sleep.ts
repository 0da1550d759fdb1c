import t from 'tap';
import { sleep } from '../../../packages/cli/src/sleep';

t.test('resolves after the delay, with or without a signal', async (t) => {
  const since = Date.now();
  await sleep(5);
  await sleep(5, new AbortController().signal);
  t.ok(Date.now() - since >= 9, 'waited both delays'); // timers may fire up to 1 ms early
});

t.test('an abort rejects with the reason given, at once', async (t) => {
  const ac = new AbortController();
  const reason = new Error('finished');
  const p = sleep(60_000, ac.signal);
  ac.abort(reason);
  await t.rejects(p, reason);
  try { await p; } catch (e) { t.equal(e, reason, 'the very reason, not an AbortError'); }
});

t.test('an already aborted signal rejects without waiting', async (t) => {
  const ac = new AbortController();
  const reason = { code: 'STOP' };
  ac.abort(reason);
  await t.rejects(sleep(60_000, ac.signal), reason);
});
