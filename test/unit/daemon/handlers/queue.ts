// handlers/queue.ts: host-wide summaries for anyone, never a command, environment or directory.
import t from 'tap';
import { queue } from '../../../../packages/daemon/src/handlers/queue';
import { alice, bobCaller, ctxOf, makeCore, spec, startedBy } from '../../../helpers/core';

t.test("summaries of everyone's jobs, without their details", async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const a = await tc.core.submit(alice, spec({ name: 'a', env: { SECRET: 's' }, command: ['secret-tool'] }));
  const b = await tc.core.submit(alice, spec({ name: 'b', count: 1 }));
  const c = await tc.core.submit(alice, spec({ name: 'c', count: 4 })); // cannot fit: pending
  await startedBy(tc, a.id);
  await startedBy(tc, b.id);
  t.equal(tc.core.complete(a.id, { state: 'COMPLETED', exit_code: 0, finished_at: tc.core.now(), error: null }), undefined);
  const all = queue(ctxOf(tc.core, bobCaller), {});
  t.same(all.map((s) => [s.id, s.name, s.state]), [[a.id, 'a', 'COMPLETED'], [b.id, 'b', 'RUNNING'], [c.id, 'c', 'PENDING']]);
  const text = JSON.stringify(all);
  t.notMatch(text, /SECRET|secret-tool|"cwd"|"env"|"command"|"script"/, 'no job details in summaries');
  t.match(all[1], { owner: alice, count: 1, kind: null, devices: [{ id: 0 }], started_at: Number });
  t.same(queue(ctxOf(tc.core, bobCaller), { limit: 2 }).map((s) => s.id), [b.id, c.id], 'the newest only');
  t.same(queue(ctxOf(tc.core, bobCaller), { all: false }).map((s) => s.id), [b.id, c.id], 'active jobs only');
  t.same(queue(ctxOf(tc.core, bobCaller), { all: false, limit: 1 }).map((s) => s.id), [c.id]);
  t.same(queue(ctxOf(tc.core, bobCaller), { all: false }), queue(ctxOf(tc.core, bobCaller), { limit: 2 }),
    'memory and the store give the same summaries');
});
