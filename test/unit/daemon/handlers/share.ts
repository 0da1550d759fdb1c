// handlers/share.ts: any user sees every user's usage and rank (numbers and names only, docs/behaviour.md §22.2).
import t from 'tap';
import { share } from '../../../../packages/daemon/src/handlers/share';
import { alice, bobCaller, ctxOf, makeCore, spec, startedBy } from '../../../helpers/core';

t.test('rows by rank, each {user, uid, usage, decayed, rank}', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  t.same(share(ctxOf(tc.core, bobCaller)), [], 'nothing used yet');
  const j = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, j.id);
  tc.core.complete(j.id, { state: 'COMPLETED', exit_code: 0, finished_at: tc.core.current(j.id)!.started_at! + 60, error: null });
  const rows = share(ctxOf(tc.core, bobCaller)) as Array<Record<string, unknown>>;
  t.same(rows.map((r) => Object.keys(r)), [['user', 'uid', 'usage', 'decayed', 'rank']]);
  t.match(rows[0], { user: 'alice', uid: 1000, rank: 1 });
  t.ok((rows[0]!.usage as number) >= 60);
});
