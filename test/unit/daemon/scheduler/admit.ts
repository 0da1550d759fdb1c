// The admit step: the host's max_running as a pass-level stop (with the slots reservations keep), the size caps per job; their reasons' words.
import t from 'tap';
import { admit, admitNone, admitted, explainAdmit, type AdmitState } from '../../../../packages/daemon/src/scheduler/admit';

t.test('max_running stops every job once reached', async (t) => {
  t.equal(admitNone({ running: 0, maxRunning: 1 }), null);
  t.equal(admitNone({ running: 31, maxRunning: 32 }), null);
  t.equal(admitNone({ running: 32, maxRunning: 32 }), 'MaxRunning');
  t.equal(admitNone({ running: 40, maxRunning: 32 }), 'MaxRunning', 'a limit lowered below the running count');
  t.equal(admitNone({ running: 31, maxRunning: 32, kept: 1 }), 'MaxRunning', 'the slot kept for a reserving job');
});

t.test('no per-job condition without size caps', async (t) => {
  t.equal(admit({ id: 1, count: 8, kind: null, timeLimit: 60 }, { running: 0, maxRunning: 1 }), null);
});

t.test('size caps: at most N running jobs of exactly K devices; other sizes unaffected', async (t) => {
  const s: AdmitState = { running: 0, maxRunning: 32, sizeLimits: new Map([[8, 1]]), runningBySize: new Map() };
  const eight = { id: 1, count: 8, kind: null, timeLimit: null };
  const four = { id: 2, count: 4, kind: null, timeLimit: null };
  t.equal(admit(eight, s), null);
  admitted(eight, s);
  t.equal(s.running, 1);
  t.equal(admit({ ...eight, id: 3 }, s), 'SizeLimit');
  t.equal(admit(four, s), null, 'a smaller job is not capped');
  admitted(four, s);
  t.same([...s.runningBySize!], [[8, 1]], 'only capped sizes are counted');
  t.same(explainAdmit('SizeLimit', s, eight), { code: 'SizeLimit', message: '1 job of 8 devices running (limit 1)' });
  const two: AdmitState = { running: 2, maxRunning: 32, sizeLimits: new Map([[1, 2]]), runningBySize: new Map([[1, 2]]) };
  t.same(explainAdmit('SizeLimit', two, { id: 5, count: 1, kind: null, timeLimit: null }), { code: 'SizeLimit', message: '2 jobs of 1 device running (limit 2)' });
});

t.test('the MaxRunning message counts the running jobs against the limit', async (t) => {
  t.same(explainAdmit('MaxRunning', { running: 32, maxRunning: 32 }), { code: 'MaxRunning', message: '32 jobs running (limit 32)' });
  t.same(explainAdmit('MaxRunning', { running: 1, maxRunning: 1 }), { code: 'MaxRunning', message: '1 job running (limit 1)' });
  t.same(explainAdmit('MaxRunning', { running: 1, maxRunning: 2, kept: 1 }), { code: 'MaxRunning', message: '1 job running (limit 2, 1 slot kept for reserving jobs)' });
});

t.test("an array's %N throttle: its own tasks wait once N run, with the MaxRunning code; other jobs and arrays are unaffected", async (t) => {
  const s: AdmitState = { running: 0, maxRunning: 32, arrayRunning: new Map([[7, 1]]) };
  const task = (id: number, arrayId = 7) => ({ id, count: 0, kind: null, timeLimit: null, arrayId, throttle: 2 });
  t.equal(admit(task(8), s), null);
  admitted(task(8), s);
  t.same([...s.arrayRunning!], [[7, 2]]);
  t.equal(admit(task(9), s), 'ArrayLimit');
  t.equal(admit(task(20, 20), s), null, 'another array');
  t.equal(admit({ id: 30, count: 0, kind: null, timeLimit: null }, s), null, 'a job of no array');
  t.same(explainAdmit('ArrayLimit', s, task(9)), { code: 'MaxRunning', message: 'array 7 runs 2 tasks (limit 2)' });
  const fresh: AdmitState = { running: 0, maxRunning: 32 };
  admitted(task(40, 40), fresh);
  t.same([...fresh.arrayRunning!], [[40, 1]], 'counted from nothing');
});
