// Core with the scheduling policy (docs/behaviour.md §21.1–§21.4): the pass gets the queue in the
// order's sequence, the size caps with the running counts, and in reserve mode the holders'
// expected ends; xinfo's views show the reservation; applyConfig switches it all live.
import t from 'tap';
import { alice, makeCore, spec, startedBy } from '../../helpers/core';
import { waitFor } from '../../helpers/wait';

t.test('the order reaches the pass: a later larger job starts first in one pass', async (t) => {
  const tc = await makeCore(t, { devices: 2 });
  const holder = await tc.core.submit(alice, spec({ count: 2 }));
  await startedBy(tc, holder.id);
  const one = await tc.core.submit(alice, spec({ count: 1 }));
  const two = await tc.core.submit(alice, spec({ count: 2 }));
  await waitFor(() => tc.core.current(two.id)?.reason?.code === 'Resources', { what: 'a pass over both' });
  t.equal(tc.core.current(one.id)?.reason?.code, 'Resources');
});

t.test('reserve mode, switched on by applyConfig: the reservation in the views, cleared when its job leaves', async (t) => {
  const tc = await makeCore(t, { devices: 4 });
  t.same(tc.core.applyConfig({ ...tc.core.cfg, schedulerMode: 'reserve' }), ['scheduler.mode']);
  const holder = await tc.core.submit(alice, spec({ count: 2, time_limit: 600 }));
  await startedBy(tc, holder.id);
  const big = await tc.core.submit(alice, spec({ count: 4 }));
  await waitFor(() => tc.core.current(big.id)?.reason?.code === 'Resources', { what: 'the big job considered' });
  const views = tc.core.deviceViews();
  t.same(views.map((v) => [v.status, v.job, v.reserved_for]), [
    ['allocated', holder.id, big.id], ['allocated', holder.id, big.id], ['reserved', null, big.id], ['reserved', null, big.id],
  ]);
  const started = tc.core.current(holder.id)!.started_at!;
  t.same([...tc.core.reservations()], [['nvidia', { job: big.id, devices: [0, 1, 2, 3], expectedStart: started + 600 }]]);
  t.equal(tc.core.devices.views()[2]!.status, 'idle', 'the device layer itself knows nothing of reservations');

  const small = await tc.core.submit(alice, spec({ count: 1 }));
  await waitFor(() => tc.core.current(small.id)?.reason?.code === 'Reservation', { what: 'the small job held off' });
  t.equal(tc.core.current(small.id)!.reason!.message, `nv:0,nv:1,nv:2,nv:3 reserved for job ${big.id} (alice, 4 devices)`);
  const short = await tc.core.submit(alice, spec({ count: 1, time_limit: 60 }));
  await startedBy(tc, short.id);
  t.same(tc.core.current(short.id)!.devices.map((d) => d.id), [2], 'backfilled');

  await tc.core.cancel(big.id);
  await waitFor(() => tc.core.reservations().size === 0 && tc.core.current(small.id)?.state === 'RUNNING', { what: 'the reservation gone' });
  t.notOk(tc.core.deviceViews().some((v) => v.reserved_for !== undefined));
  t.same(tc.core.applyConfig({ ...tc.core.cfg, schedulerMode: 'greedy' }), ['scheduler.mode']);
});

t.test('size caps from the configuration: counted over the running jobs', async (t) => {
  const tc = await makeCore(t, { devices: 4 });
  t.same(tc.core.applyConfig({ ...tc.core.cfg, maxRunningBySize: new Map([[2, 1]]) }), ['scheduler.max_running_by_size']);
  const a = await tc.core.submit(alice, spec({ count: 2 }));
  await startedBy(tc, a.id);
  const b = await tc.core.submit(alice, spec({ count: 2 }));
  const c = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, c.id);
  await waitFor(() => tc.core.current(b.id)?.reason?.code === 'SizeLimit', { what: 'b capped' });
  t.equal(tc.core.current(b.id)!.reason!.message, '1 job of 2 devices running (limit 1)');
  t.same(tc.core.applyConfig({ ...tc.core.cfg, maxRunningBySize: new Map() }), ['scheduler.max_running_by_size']);
  await waitFor(() => tc.core.current(b.id)?.reason?.code === 'Resources', { what: 'uncapped: now it only lacks devices (one is free)' });
});
