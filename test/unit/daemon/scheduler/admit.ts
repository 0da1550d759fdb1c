// The admit step: today only the host's max_running, as a pass-level stop; its reason's words.
import t from 'tap';
import { admit, admitNone, explainAdmit } from '../../../../packages/daemon/src/scheduler/admit';

t.test('max_running stops every job once reached', async (t) => {
  t.equal(admitNone({ running: 0, maxRunning: 1 }), null);
  t.equal(admitNone({ running: 31, maxRunning: 32 }), null);
  t.equal(admitNone({ running: 32, maxRunning: 32 }), 'MaxRunning');
  t.equal(admitNone({ running: 40, maxRunning: 32 }), 'MaxRunning', 'a limit lowered below the running count');
});

t.test('no per-job condition yet', async (t) => {
  t.equal(admit({ id: 1, count: 8, kind: null, timeLimit: 60 }, { running: 0, maxRunning: 1 }), null);
});

t.test('the MaxRunning message counts the running jobs against the limit', async (t) => {
  t.same(explainAdmit('MaxRunning', { running: 32, maxRunning: 32 }), { code: 'MaxRunning', message: '32 jobs running (limit 32)' });
  t.same(explainAdmit('MaxRunning', { running: 1, maxRunning: 1 }), { code: 'MaxRunning', message: '1 job running (limit 1)' });
});
