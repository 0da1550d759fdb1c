// handlers/stats.ts (docs/behaviour.md §26.1): a user sees their own row, root every user and the host.
import t from 'tap';
import type { Tap } from '../../../helpers/tap';
import { stats } from '../../../../packages/daemon/src/handlers/stats';
import { alice, aliceCaller, bobCaller, ctxOf, makeCore, rootCaller, spec, startedBy } from '../../../helpers/core';

const bob = { uid: 1001, gid: 1001, name: 'bob' };

async function history(t: Tap) {
  const tc = await makeCore(t, { devices: 2, euid: 4242 });
  for (const o of [alice, bob]) {
    const j = await tc.core.submit(o, spec({ count: 1 }));
    await startedBy(tc, j.id);
    tc.core.complete(j.id, { state: 'COMPLETED', exit_code: 0, finished_at: tc.core.now(), error: null });
  }
  await tc.store.durable();
  return tc;
}

t.test('root: every user and the host', async (t) => {
  const tc = await history(t);
  const r = stats(ctxOf(tc.core, rootCaller), {});
  t.same(r.users.map((u) => u.user), ['alice', 'bob']);
  t.ok(r.host && r.host.available_device_hours === 2 * 7 * 24);
  t.equal(r.until - r.since, 7 * 86400);
  t.equal(stats(ctxOf(tc.core, rootCaller), { days: 1 }).until - stats(ctxOf(tc.core, rootCaller), { days: 1 }).since, 86400);
  const since = tc.core.now() - 100;
  t.equal(stats(ctxOf(tc.core, rootCaller), { since }).since, since);
  t.same(stats(ctxOf(tc.core, rootCaller), { user: 'bob' }).users.map((u) => u.user), ['bob']);
});

t.test('a user: their own row only, no host; another user by name is refused', async (t) => {
  const tc = await history(t);
  const r = stats(ctxOf(tc.core, aliceCaller), {});
  t.same(r.users.map((u) => u.uid), [alice.uid]);
  t.equal(r.host, null);
  t.same(stats(ctxOf(tc.core, bobCaller), {}).users.map((u) => u.uid), [bob.uid]);
  t.throws(() => stats(ctxOf(tc.core, aliceCaller), { user: 'bob' }),
    { code: 'PERMISSION_DENIED', message: "permission denied: only root may see another user's statistics" });
});

t.test('the account a non-root daemon runs as counts as root', async (t) => {
  const tc = await history(t);
  const r = stats(ctxOf(tc.core, { uid: 4242, gid: 4242, pid: 9 }), {});
  t.equal(r.users.length, 2);
  t.not(r.host, null);
});
