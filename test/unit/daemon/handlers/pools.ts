// handlers/pools.ts: `xinfo --pools` for anyone, from Core's device facts.
import t from 'tap';
import { pools } from '../../../../packages/daemon/src/handlers/pools';
import { alice, bobCaller, ctxOf, makeCore, spec, startedBy } from '../../../helpers/core';

t.test('the inventory per vendor for anyone; nothing starts while every slot is taken', async (t) => {
  const tc = await makeCore(t, { devices: 3, maxRunning: 1 });
  const job = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, job.id);
  tc.core.exclude([2]);
  const [p] = pools(ctxOf(tc.core, bobCaller));
  t.match(p, { kind: 'nvidia', label: 'nv', total: 3, free: 1, excluded: 1, unknown: 0, largest_now: 0, largest_ever: 2, reservation: null });
  t.ok(Array.isArray(p!.groups));
  t.equal(tc.core.complete(job.id, { state: 'COMPLETED', exit_code: 0, finished_at: tc.core.now(), error: null }), undefined);
  t.match(pools(ctxOf(tc.core, bobCaller))[0], { free: 1, largest_now: 1 }, 'a released device is free once probed idle again; the slot is');
});

t.test('the reservation and groups come from Core where it offers them', async (t) => {
  const tc = await makeCore(t, { devices: 4 });
  const facts = tc.core as unknown as {
    reservations: () => Map<string, { job: number; devices: number[]; expectedStart: number | null }>;
    topology: () => { affinity: 'require'; groups: Map<string, number[][]> };
  };
  facts.reservations = () => new Map([['nvidia', { job: 9, devices: [2, 3], expectedStart: 1700000000 }]]);
  facts.topology = () => ({ affinity: 'require', groups: new Map([['nvidia', [[0, 1], [2, 3]]]]) });
  t.match(pools(ctxOf(tc.core, bobCaller))[0], {
    free: 4, groups: [{ devices: [0, 1], free: [0, 1] }, { devices: [2, 3], free: [2, 3] }],
    largest_now: 2, largest_ever: 2, reservation: { job: 9, devices: [2, 3], expected_start: 1700000000 },
  });
});
