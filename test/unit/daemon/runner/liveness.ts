import t from 'tap';
import * as fs from 'node:fs';
import type { Outcome } from '@xlurm/protocol';
import { JobFiles, SPAWN_MARK } from '../../../../packages/daemon/src/runner/job-files';
import { Liveness, VANISHED } from '../../../../packages/daemon/src/runner/liveness';
import { flockExclusive } from '../../../../native/ts/index';
import type { Tap } from '../../../helpers/tap';
import { waitFor } from '../../../helpers/wait';

function setup(t: Tap, trustMissingLock: boolean) {
  const home = t.testdir({ jobs: {} });
  const files = new JobFiles(home);
  const events: Array<['finished', number, Outcome] | ['deferred', number, string]> = [];
  const live = new Liveness(files, {
    finished: (id, o) => { events.push(['finished', id, o]); },
    deferred: (id, why) => { events.push(['deferred', id, why]); },
  }, () => undefined, () => 42);
  live.trustMissingLock = trustMissingLock;
  t.teardown(() => live.stop());
  const lock = (id: number, mark: string) => fs.writeFileSync(files.paths(id).lock, mark);
  const result = (id: number, text: string) => fs.writeFileSync(files.paths(id).result, text);
  return { files, events, live, lock, result };
}

const DONE = '{"state":"COMPLETED","exit_code":0,"finished_at":7,"error":null}\n';

t.test('after a restart in the same boot: a start that never reached the payload goes back to the queue', async (t) => {
  const { events, live, lock, result } = setup(t, true);
  lock(2, SPAWN_MARK); // free, still marked spawn, no result
  lock(3, 'started\n'); result(3, DONE);
  lock(4, 'started\n'); // the supervisor died without a result
  lock(5, SPAWN_MARK); result(5, DONE); // a result wins over the mark
  live.adopt([1, 2, 3, 4, 5], true); // 1: no lock file at all
  t.same(events, [
    ['deferred', 1, 'the previous daemon stopped before spawning its supervisor'],
    ['deferred', 2, 'the previous daemon stopped before its supervisor started the job'],
    ['finished', 3, { state: 'COMPLETED', exit_code: 0, finished_at: 7, error: null }],
    ['finished', 4, { state: 'FAILED', exit_code: 1, finished_at: 42, error: VANISHED }],
    ['finished', 5, { state: 'COMPLETED', exit_code: 0, finished_at: 7, error: null }],
  ]);
});

t.test('after a reboot (or any other adoption) a missing lock or a spawn mark proves nothing: the job vanished', async (t) => {
  const { events, live, lock } = setup(t, false);
  lock(2, SPAWN_MARK);
  live.adopt([1, 2], true);
  live.adopt([3]);
  t.same(events.map((e) => [e[0], e[1], (e[2] as Outcome).error]), [
    ['finished', 1, VANISHED], ['finished', 2, VANISHED], ['finished', 3, VANISHED],
  ]);
});

t.test('a held lock is watched until it comes free; an unreadable result fails the job', async (t) => {
  const { files, events, live, lock, result } = setup(t, true);
  lock(6, 'started\n');
  const fd = fs.openSync(files.paths(6).lock, 'r+');
  t.equal(flockExclusive(fd), true, 'the test holds the lock like a live supervisor');
  live.adopt([6], true);
  t.same(events, [], 'alive: nothing reported');
  result(6, '{"state":');
  fs.closeSync(fd);
  const e = await waitFor(() => events.find((x) => x[1] === 6), { what: 'job 6 collected' });
  t.same(e, ['finished', 6, { state: 'FAILED', exit_code: 1, finished_at: 42, error: `${VANISHED} (unreadable result file)` }]);
});

t.test('the jobs a lost launcher owed: judged by their locks', async (t) => {
  const { events, live, lock, result } = setup(t, false); // a lost launcher is always in this boot
  lock(8, SPAWN_MARK);
  lock(9, 'started\n'); result(9, DONE);
  live.launcherLost([7, 8, 9]);
  t.same(events, [
    ['deferred', 7, 'the supervisor launcher stopped before spawning its supervisor'],
    ['deferred', 8, 'the supervisor launcher stopped before its supervisor started the job'],
    ['finished', 9, { state: 'COMPLETED', exit_code: 0, finished_at: 7, error: null }],
  ]);
});

t.test('a reaped supervisor is collected', async (t) => {
  const { events, live, lock, result } = setup(t, true);
  lock(10, 'started\n'); result(10, DONE);
  live.reaped(10);
  t.same(events, [['finished', 10, { state: 'COMPLETED', exit_code: 0, finished_at: 7, error: null }]]);
});
