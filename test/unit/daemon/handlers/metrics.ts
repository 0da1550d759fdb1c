// handlers/metrics.ts (docs/behaviour.md §26.3): the text for anyone, also without a sampler.
import t from 'tap';
import { metrics } from '../../../../packages/daemon/src/handlers/metrics';
import { bobCaller, ctxOf, makeCore } from '../../../helpers/core';

t.test('the metrics text for any user', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const r = metrics(ctxOf(tc.core, bobCaller));
  t.match(r.text, /^xlurm_up 1$/m);
  t.match(r.text, /^xlurm_device_status\{device="nv:0",status="idle"\} 1$/m);
});
