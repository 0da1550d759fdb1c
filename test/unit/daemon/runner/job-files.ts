import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Outcome } from '@xlurm/protocol';
import { parseJobFileName } from '@xlurm/protocol';
import { JobFiles, SPAWN_MARK, isJobLog, lockHeld } from '../../../../packages/daemon/src/runner/job-files';
import { Runner } from '../../../../packages/daemon/src/runner/runner';
import type { StoredJob } from '../../../../packages/daemon/src/store/store';
import { flockExclusive, stepdPath } from '../../../../native/ts/index';
import { waitFor } from '../../../helpers/wait';

function job(id: number, command: string[]): StoredJob {
  return {
    id, owner: { uid: process.getuid!(), gid: process.getgid!(), name: 'me' },
    spec: { command, cwd: '/', env: { PATH: '/usr/bin:/bin' }, name: 'j', count: 0, kind: null, time_limit: null, script: null },
    state: 'RUNNING', devices: [], submitted_at: 1, started_at: 1, result: null, reason: null,
  };
}

t.test('every file the supervisor and the daemon create under jobs/ is one of the job files', async (t) => {
  // The supervisor names its result's temporary file itself (native/src/stepd/result.c); this
  // pins that name to protocol's jobPaths().temp, which retention removes.
  const home = t.testdir({ jobs: {} });
  const jobs = path.join(home, 'jobs');
  const seen = new Set<string>();
  const watcher = fs.watch(jobs, (_event, name) => { if (name) seen.add(String(name)); });
  t.teardown(() => watcher.close());
  const outcomes = new Map<number, Outcome>();
  const runner = new Runner(home, stepdPath(), false, {
    finished: (id, o) => { outcomes.set(id, o); },
    deferred: (id, why) => { t.fail(`job ${id} deferred: ${why}`); },
  }, () => undefined, () => 42);
  t.teardown(() => runner.stop());

  runner.launch(job(31, ['sleep', '30']));
  await waitFor(() => fs.readFileSync(path.join(jobs, '31.lock'), 'utf8') === 'started\n', { what: 'the payload started' });
  t.equal(runner.cancel(31), undefined, 'the cancellation reached the supervisor');
  const o = await waitFor(() => outcomes.get(31), { what: 'job 31 ends' });
  t.match(o, { state: 'CANCELLED' });
  const files = new JobFiles(home);
  const temps = () => [...seen].map((n) => ({ n, f: parseJobFileName(n) })).filter((x) => x.f?.kind === 'temp');
  // Both atomic writes went through a temporary name: ours (the cancel marker) and the supervisor's.
  await waitFor(() => temps().some((x) => x.n === path.basename(files.paths(31).temp(process.pid)))
    && temps().some((x) => x.n !== path.basename(files.paths(31).temp(process.pid))), { what: 'both temporary names seen' });
  for (const name of seen) t.match(parseJobFileName(name), { id: 31 }, `${name} is a file of job 31`);
  t.same(fs.readdirSync(jobs).sort(), ['31.cancel', '31.lock', '31.log', '31.result'], 'no temporary file is left');
});

t.test('job file names: made in one place, and parsed back', async (t) => {
  const files = new JobFiles('/h');
  const p = files.paths(7);
  t.same({ ...p, temp: p.temp(99) }, {
    log: '/h/jobs/7.log', lock: '/h/jobs/7.lock', lockNew: '/h/jobs/7.lock.new', result: '/h/jobs/7.result',
    cancel: '/h/jobs/7.cancel', limit: '/h/jobs/7.limit', spec: '/h/jobs/7.spec', snapshot: '/h/jobs/7.json', temp: '/h/jobs/7.tmp.99',
  });
  const kinds = Object.entries({ ...p, temp: p.temp(99) }).map(([k, f]) => [k, parseJobFileName(path.basename(f))]);
  for (const [k, parsed] of kinds) t.same(parsed, { id: 7, kind: k }, `${String(k)} parses back`);
  for (const other of ['7', '7.', '.log', 'x.log', '7.log.1', '1.2.log', '7.tmp.', '7.tmp.x', '7.constructor', '7.toString', 'daemon.log']) {
    t.equal(parseJobFileName(other), undefined, `${other} is not a job file`);
  }
  t.ok(isJobLog('12.log'));
  t.notOk(isJobLog('12.result'));
  t.notOk(isJobLog('a12.log'));
});

t.test('the lock file: marked, locked, and made under a temporary name', async (t) => {
  const home = t.testdir({ jobs: {} });
  const files = new JobFiles(home);
  const fd = files.createLock(3);
  t.equal(fs.readFileSync(files.paths(3).lock, 'utf8'), SPAWN_MARK);
  t.ok(lockHeld(files.paths(3).lock), 'held through the returned descriptor');
  t.notOk(fs.existsSync(files.paths(3).lockNew));
  t.throws(() => files.createLock(3), { message: 'worker already running' });
  t.notOk(fs.existsSync(files.paths(3).lockNew), 'no temporary lock left after a refusal');
  fs.closeSync(fd);
  t.notOk(lockHeld(files.paths(3).lock));
  t.notOk(lockHeld(files.paths(4).lock), 'a missing lock is not held');
  fs.closeSync(files.createLock(3));
});

t.test('the spec without memfd: a file that is gone once opened', async (t) => {
  const home = t.testdir({ jobs: {} });
  const files = new JobFiles(home);
  (files as unknown as { memfdWorks: boolean }).memfdWorks = false;
  const fd = files.openSpec(5, Buffer.from('a\0b\0'));
  try {
    t.same(fs.readFileSync(`/proc/self/fd/${fd}`), Buffer.from('a\0b\0'));
    t.notOk(fs.existsSync(files.paths(5).spec));
  } finally { fs.closeSync(fd); }
});

t.test('the result file: an outcome, missing, or not a result', async (t) => {
  const home = t.testdir({ jobs: {} });
  const files = new JobFiles(home);
  t.equal(files.readResult(1), 'missing');
  const write = (s: string) => fs.writeFileSync(files.paths(1).result, s);
  write('{"state":"COMPLETED","exit_code":0,"finished_at":5,"error":null}\n');
  t.same(files.readResult(1), { state: 'COMPLETED', exit_code: 0, finished_at: 5, error: null });
  write('{"state":"FAILED","exit_code":3,"finished_at":5,"error":"boom","extra":1}\n');
  t.same(files.readResult(1), { state: 'FAILED', exit_code: 3, finished_at: 5, error: 'boom' });
  for (const bad of ['', 'null', '{"state":"RUNNING","exit_code":0,"finished_at":5}', '{"state":"BOGUS","exit_code":0,"finished_at":5}',
    '{"state":"COMPLETED","exit_code":0.5,"finished_at":5}', '{"state":"COMPLETED","exit_code":0}']) {
    write(bad);
    t.equal(files.readResult(1), 'malformed', JSON.stringify(bad));
  }
});

t.test('the cancel marker is written atomically', async (t) => {
  const home = t.testdir({ jobs: {} });
  const files = new JobFiles(home);
  files.writeCancel(2);
  t.equal(fs.readFileSync(files.paths(2).cancel, 'utf8'), 'true\n');
  t.equal(fs.statSync(files.paths(2).cancel).mode & 0o777, 0o600);
  t.same(fs.readdirSync(path.join(home, 'jobs')), ['2.cancel']);
});

t.test('removal takes every file of the given jobs and nothing else', async (t) => {
  const home = t.testdir({ jobs: {} });
  const files = new JobFiles(home);
  const all = (id: number) => {
    const p = files.paths(id);
    return [p.log, p.lock, p.lockNew, p.result, p.cancel, p.spec, p.snapshot, p.temp(123), p.temp(456)];
  };
  for (const f of [...all(1), ...all(2), ...all(10)]) fs.writeFileSync(f, 'x');
  fs.writeFileSync(path.join(home, 'jobs', 'notes.txt'), 'x');
  files.remove([1, 10]);
  t.same(fs.readdirSync(path.join(home, 'jobs')).sort(), [...all(2).map((f) => path.basename(f)), 'notes.txt'].sort());
  files.remove([1]);
  t.pass('removing what is gone already is fine');
});
