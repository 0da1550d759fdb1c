import t from 'tap';
import type { JobState } from '@xlurm/protocol';
import { parseDependency, type Dependencies } from '../../../../packages/protocol/src/dependency';
import { dependencyStatus, type ParentState } from '../../../../packages/daemon/src/scheduler/dependency';

const deps = (text: string): Dependencies => {
  const d = parseDependency(text);
  if ('error' in d) throw new Error(d.error);
  return d;
};
const of = (states: Record<number, JobState | null>) => (id: number): ParentState => states[id] ?? null;
const status = (text: string, states: Record<number, JobState | null>, singletonWith: number | null = null) =>
  dependencyStatus(deps(text), of(states), singletonWith);

t.test('afterok: waits for COMPLETED; any other end can never satisfy it', async (t) => {
  t.same(status('afterok:7', { 7: 'PENDING' }), { kind: 'wait', reason: { code: 'Dependency', message: 'after job 7 completes' }, on: 7 });
  t.same(status('afterok:7', { 7: 'RUNNING' }).kind, 'wait');
  t.same(status('afterok:7', { 7: 'COMPLETED' }), { kind: 'ready' });
  for (const s of ['FAILED', 'CANCELLED', 'TIMED_OUT', 'EXPIRED'] as const) {
    t.same(status('afterok:7', { 7: s }), { kind: 'never', error: `dependency never satisfied: job 7 ended ${s}` }, s);
  }
});

t.test('afternotok, afterany, after', async (t) => {
  t.same(status('afternotok:7', { 7: 'RUNNING' }), { kind: 'wait', reason: { code: 'Dependency', message: 'after job 7 ends unsuccessfully' }, on: 7 });
  t.same(status('afternotok:7', { 7: 'FAILED' }), { kind: 'ready' });
  t.same(status('afternotok:7', { 7: 'COMPLETED' }), { kind: 'never', error: 'dependency never satisfied: job 7 ended COMPLETED' });
  t.same(status('afterany:7', { 7: 'RUNNING' }), { kind: 'wait', reason: { code: 'Dependency', message: 'after job 7 ends' }, on: 7 });
  for (const s of ['COMPLETED', 'FAILED', 'CANCELLED'] as const) t.same(status('afterany:7', { 7: s }), { kind: 'ready' }, s);
  t.same(status('after:7', { 7: 'PENDING' }), { kind: 'wait', reason: { code: 'Dependency', message: 'after job 7 starts' }, on: 7 });
  t.same(status('after:7', { 7: 'RUNNING' }), { kind: 'ready' });
  t.same(status('after:7', { 7: 'CANCELLED' }), { kind: 'ready' }, 'ended without starting: nothing left to wait for');
});

t.test('every term must hold; the first that cannot wins over waiting', async (t) => {
  t.same(status('afterok:7:8', { 7: 'COMPLETED', 8: 'RUNNING' }).kind, 'wait');
  t.match(status('afterok:7:8', { 7: 'COMPLETED', 8: 'RUNNING' }), { reason: { message: 'after job 8 completes' } });
  t.same(status('afterok:7,afterok:8', { 7: 'RUNNING', 8: 'FAILED' }), { kind: 'never', error: 'dependency never satisfied: job 8 ended FAILED' });
  t.same(status('afterok:7,afternotok:8', { 7: 'COMPLETED', 8: 'FAILED' }), { kind: 'ready' });
});

t.test('a parent no longer stored counts as satisfying (it ended, and its dependents were not cancelled then)', async (t) => {
  t.same(status('afterok:7', { 7: null }), { kind: 'ready' });
});

t.test('singleton: waits for the job the caller found', async (t) => {
  t.same(status('singleton', {}, 4), { kind: 'wait', reason: { code: 'Dependency', message: 'singleton: job 4 of the same name has not ended' }, on: null });
  t.same(status('singleton', {}, null), { kind: 'ready' });
  t.match(status('afterok:7,singleton', { 7: 'PENDING' }, 4), { reason: { message: 'after job 7 completes' } }, 'its jobs first');
});
