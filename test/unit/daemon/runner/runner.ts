import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Outcome } from '@xlurm/protocol';
import { jobPaths } from '@xlurm/protocol';
import { Runner } from '../../../../packages/daemon/src/runner/runner';
import type { StoredJob } from '../../../../packages/daemon/src/store/store';
import { stepdPath } from '../../../../native/ts/index';
import { exhaustDescriptors } from '../../../helpers/nofile';
import { waitFor } from '../../../helpers/wait';

function job(id: number): StoredJob {
  return {
    id, owner: { uid: process.getuid!(), gid: process.getgid!(), name: 'me' },
    spec: { command: ['true'], cwd: '/', env: {}, name: 'true', count: 0, kind: null, time_limit: null, script: null },
    state: 'RUNNING', devices: [], submitted_at: 1, started_at: 1, result: null, reason: null,
  };
}

t.test('a supervisor that cannot be spawned fails the job; the daemon does not crash', async (t) => {
  const home = t.testdir({ jobs: {} });
  const events: Array<[string, number, unknown]> = [];
  const done = new Promise<void>((resolve) => {
    const runner = new Runner(home, path.join(home, 'no-such-stepd'), false, {
      finished: (id: number, o: Outcome) => { events.push(['finished', id, o]); resolve(); },
      deferred: (id: number, why: string) => { events.push(['deferred', id, why]); resolve(); },
    }, () => undefined, () => 42);
    runner.launch(job(7));
  });
  await done;
  // An unhandled 'error' event would have ended this process before here.
  await new Promise((r) => setImmediate(r));
  t.match(events, [['finished', 7, { state: 'FAILED', exit_code: 1, error: /^cannot start process executor worker: spawn .*no-such-stepd(: No such file or directory| ENOENT)/ }]]);
  t.notOk(fs.existsSync(path.join(home, 'jobs', '7.result')));
});

t.test('a spawn that fails for lack of descriptors does not crash the daemon', async (t) => {
  const home = t.testdir({ jobs: {} });
  const events: Array<[string, number, unknown]> = [];
  let resolve!: () => void;
  const done = new Promise<void>((r) => { resolve = r; });
  const runner = new Runner(home, stepdPath(), false, {
    finished: (id: number, o: Outcome) => { events.push(['finished', id, o]); resolve(); },
    deferred: (id: number, why: string) => { events.push(['deferred', id, why]); resolve(); },
  }, () => undefined, () => 42);
  // Room for the lock and the log, none for the supervisor's pipes.
  const release = exhaustDescriptors(2);
  try {
    runner.launch(job(8));
  } finally {
    release();
  }
  await done;
  await new Promise((r) => setImmediate(r)); // an unhandled 'error' event would end this process here
  t.equal(events.length, 1);
  t.match(events[0], ['deferred', 8, /EMFILE|Too many open files/], 'nothing ran: the job waits instead of failing');
});

/** A runner whose events are recorded; `next(kind, id)` waits for one. */
function recordingRunner(home: string, stepd: string) {
  const events: Array<[string, number, unknown]> = [];
  const logs: string[] = [];
  const runner = new Runner(home, stepd, false, {
    finished: (id: number, o: Outcome) => { events.push(['finished', id, o]); },
    deferred: (id: number, why: string) => { events.push(['deferred', id, why]); },
  }, (m) => logs.push(m), () => 42);
  const next = (kind: string, id: number) => waitFor(() => events.find((e) => e[0] === kind && e[1] === id), { what: `${kind} ${id}` });
  return { runner, events, logs, next };
}

t.test('without memfd the spec goes through an unlinked file, and the job runs', async (t) => {
  const home = t.testdir({ jobs: {} });
  const { runner, next } = recordingRunner(home, stepdPath());
  t.teardown(() => runner.stop());
  (runner as unknown as { files: { memfdWorks: boolean } }).files.memfdWorks = false; // as after an ENOSYS
  runner.launch(job(9));
  const [, , outcome] = await next('finished', 9);
  t.match(outcome, { state: 'COMPLETED', exit_code: 0 });
  t.same(fs.readdirSync(path.join(home, 'jobs')).filter((f) => f.endsWith('.spec')), [], 'no spec file left behind');
});

t.test('a launcher that cannot start is not retried for every job: they start directly meanwhile', async (t) => {
  const home = t.testdir({ jobs: {} });
  const { runner, logs, next } = recordingRunner(home, path.join(home, 'no-such-stepd'));
  t.teardown(() => runner.stop());
  runner.launch(job(10));
  await next('finished', 10);
  await waitFor(() => logs.some((l) => l === 'supervisor launcher exited'), { what: 'the failed launcher noticed' });
  runner.launch(job(11));
  runner.launch(job(12));
  await next('finished', 11);
  await next('finished', 12);
  t.equal(logs.filter((l) => l === 'supervisor launcher exited').length, 1, 'one launcher tried, not one per job');
});

t.test('cancel: the marker is written; an error is returned only when neither marker nor signal reached the job', async (t) => {
  const home = t.testdir({ jobs: {} });
  const { runner, logs } = recordingRunner(home, stepdPath());
  t.teardown(() => runner.stop());
  t.equal(runner.cancel(13), undefined, 'no child of ours, but the marker is there for the supervisor to see');
  t.equal(fs.readFileSync(jobPaths(home, 13).cancel, 'utf8'), 'true\n');
  fs.rmSync(path.join(home, 'jobs'), { recursive: true });
  const err = runner.cancel(14);
  t.match(err, { code: 'ENOENT' }, 'no marker and no child to signal');
  t.match(logs.at(-1), /^job 14: cannot write cancel marker: .*ENOENT/);
});
