import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Outcome } from '@xlurm/protocol';
import { Runner } from '../../../packages/daemon/src/runner/runner';
import type { StoredJob } from '../../../packages/daemon/src/store/store';
import { getNofileLimit, setNofileLimit, stepdPath } from '../../../native/ts/index';
import { freeFdNumbers } from '../../helpers/probe';

function job(id: number): StoredJob {
  return {
    id, owner: { uid: process.getuid!(), gid: process.getgid!(), name: 'me' },
    spec: { command: ['true'], cwd: '/', env: {}, name: 'true', count: 0, kind: null, time_limit: null, script: null },
    state: 'RUNNING', devices: [], submitted_at: 1, started_at: 1, result: null, stepdPid: null,
  };
}

t.test('a supervisor that cannot be spawned fails the job; the daemon does not crash', async (t) => {
  const home = t.testdir({ jobs: {} });
  const events: Array<[string, number, unknown]> = [];
  const done = new Promise<void>((resolve) => {
    const runner = new Runner(home, path.join(home, 'no-such-stepd'), false, {
      finished: (id: number, o: Outcome) => { events.push(['finished', id, o]); resolve(); },
      deferred: (id: number, why: string) => { events.push(['deferred', id, why]); resolve(); },
      spawned: (id: number) => { events.push(['spawned', id, null]); },
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
    spawned: (id: number) => { events.push(['spawned', id, null]); },
  }, () => undefined, () => 42);
  // Room for the lock and the log, none for the supervisor's pipes.
  const [soft, hard] = getNofileLimit();
  const [, , third] = freeFdNumbers(process.pid, 3);
  setNofileLimit(third!, hard);
  try {
    runner.launch(job(8));
  } finally {
    setNofileLimit(soft, hard);
  }
  await done;
  await new Promise((r) => setImmediate(r)); // an unhandled 'error' event would end this process here
  t.equal(events.length, 1);
  t.match(events[0], ['deferred', 8, /EMFILE/], 'nothing ran: the job waits instead of failing');
});
