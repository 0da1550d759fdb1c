import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { JobFiles } from '../../../../packages/daemon/src/runner/job-files';
import { Supervisors, type SupervisorEvents } from '../../../../packages/daemon/src/runner/supervisors';
import type { StoredJob } from '../../../../packages/daemon/src/store/store';
import { stepdPath } from '../../../../native/ts/index';
import type { Tap } from '../../../helpers/tap';
import { waitFor } from '../../../helpers/wait';

function job(id: number, name = 'me'): StoredJob {
  return {
    id, owner: { uid: process.getuid!(), gid: process.getgid!(), name },
    spec: { command: ['true'], cwd: '/', env: {}, name: 'true', count: 0, kind: null, time_limit: null, script: null },
    state: 'RUNNING', devices: [], submitted_at: 1, started_at: 1, result: null, reason: null,
  };
}

function setup(t: Tap, opts: { switchUser?: boolean; stepd?: string } = {}) {
  const home = t.testdir({ jobs: {} });
  const files = new JobFiles(home);
  const events: Array<[keyof SupervisorEvents, unknown]> = [];
  const logs: string[] = [];
  const sup = new Supervisors(opts.stepd ?? stepdPath(), opts.switchUser ?? false, files, {
    deferred: (id, why) => { events.push(['deferred', [id, why]]); },
    failed: (id, error) => { events.push(['failed', [id, error]]); },
    exited: (id) => { events.push(['exited', id]); },
    untracked: (id) => { events.push(['untracked', id]); },
    launcherLost: (ids) => { events.push(['launcherLost', ids]); },
  }, (m) => logs.push(m));
  t.teardown(() => sup.stop());
  return { home, files, events, logs, sup };
}

t.test('a started supervisor is reported once it is reaped, and its job files are there', async (t) => {
  const { files, events, sup } = setup(t);
  const p = sup.prepare(job(1));
  t.ok(p, 'prepared');
  sup.start(p!);
  await waitFor(() => events.find((e) => e[0] === 'exited' && e[1] === 1), { what: 'job 1 reaped' });
  t.same(events, [['exited', 1]]);
  t.match(files.readResult(1), { state: 'COMPLETED', exit_code: 0 });
  t.notOk(sup.signal(1, 'SIGUSR1'), 'a reaped supervisor is not signalled');
});

t.test('the one failure path: errors that are not passing fail the job, with or without the executor prefix', async (t) => {
  await t.test('an owner whose account changed', async (t) => {
    const { events, files, sup } = setup(t, { switchUser: true });
    t.equal(sup.prepare(job(2, 'no-such-name-for-this-uid')), undefined);
    t.same(events, [['failed', [2, "job owner's account changed since submission"]]]);
    t.same(fs.readdirSync(path.dirname(files.paths(2).log)), [], 'nothing is left behind');
  });
  await t.test('a supervisor that still holds the lock', async (t) => {
    const { events, files, sup } = setup(t);
    const held = files.createLock(3);
    t.teardown(() => fs.closeSync(held));
    t.equal(sup.prepare(job(3)), undefined);
    t.same(events, [['failed', [3, 'worker already running']]]);
  });
});

t.test('only an unreaped child of ours is signalled', async (t) => {
  const { sup } = setup(t);
  t.notOk(sup.signal(99, 'SIGUSR1'));
});

t.test('a launcher socket with a full buffer (ENOBUFS) only delays the job', async (t) => {
  const { events, sup } = setup(t);
  // The launcher refuses the request the way a full SOCK_SEQPACKET buffer does.
  const full = {
    accepts: () => true,
    spawn: () => { throw Object.assign(new Error('sendmsg ENOBUFS'), { code: 'ENOBUFS' }); },
  };
  (sup as unknown as { currentLauncher: () => unknown }).currentLauncher = () => full;
  const p = sup.prepare(job(7));
  t.ok(p, 'prepared');
  sup.start(p!);
  t.same(events, [['deferred', [7, 'sendmsg ENOBUFS']]], 'deferred, not failed');
});
