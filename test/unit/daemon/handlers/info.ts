// handlers/info.ts: the devices and their states, for anyone.
import t from 'tap';
import { info } from '../../../../packages/daemon/src/handlers/info';
import { alice, bobCaller, ctxOf, makeCore, nvidia, rootCaller, spec, startedBy } from '../../../helpers/core';

t.test('every user sees every device with its state and job', async (t) => {
  const tc = await makeCore(t, { devices: 3 });
  const job = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, job.id);
  tc.core.exclude([2]);
  const want = [
    { device: nvidia(0), job: job.id, status: 'allocated', nodes: [] },
    { device: nvidia(1), job: null, status: 'idle', nodes: [] },
    { device: nvidia(2), job: null, status: 'disabled', nodes: [] },
  ];
  t.same(info(ctxOf(tc.core, bobCaller)), want);
  t.same(info(ctxOf(tc.core, rootCaller)), want);
});
