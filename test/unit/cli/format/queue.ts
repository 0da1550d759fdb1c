import t from 'tap';
import type { Device, Job, JobSummary } from '@xlurm/protocol';
import {
  assignedDevices, devicesCell, jobDetail, queueTable, selectRows, stateLabel, stateName, tableClock, waitAndRun,
} from '../../../../packages/cli/src/format/queue';

const savedTz = process.env.TZ;
t.teardown(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

const dev = (kind: Device['kind'], id: number): Device => ({ kind, id, name: `${kind} ${id}`, visible: `${kind}-${id}`, npu: null, chip: null });

const T0 = Date.UTC(2024, 4, 1, 0, 0, 0) / 1000; // 2024-05-01 00:00:00 UTC

function summary(id: number, over: Partial<JobSummary> = {}): JobSummary {
  return {
    id, owner: { uid: 1000, gid: 1000, name: 'alice' }, name: `job${id}`, state: 'PENDING', count: 1, kind: null,
    devices: [], submitted_at: T0, started_at: null, finished_at: null, reason: null, ...over,
  };
}

t.test('state spellings', async (t) => {
  t.equal(stateLabel('TIMED_OUT'), 'TIMEDOUT');
  t.equal(stateLabel('RUNNING'), 'RUNNING');
  t.equal(stateName('TIMED_OUT'), 'TimedOut');
  t.equal(stateName('PENDING'), 'Pending');
  t.equal(stateName('CANCELLED'), 'Cancelled');
});

t.test('assigned device lists group by vendor in order of first appearance', async (t) => {
  t.equal(assignedDevices([]), '-');
  t.equal(assignedDevices([dev('nvidia', 2)]), 'nv:[2]');
  t.equal(assignedDevices([dev('nvidia', 2), dev('ascend', 1), dev('nvidia', 0), dev('ascend', 3)]), 'nv:[2,0],asc:[1,3]');
  t.equal(assignedDevices([dev('mthreads', 0), dev('metax', 1), dev('ppu', 2), dev('hcu', 3)]), 'mtt:[0],mx:[1],ppu:[2],hcu:[3]');
});

t.test('DEVICES column rules', async (t) => {
  const cases: Array<[Partial<JobSummary>, string, string]> = [
    [{ state: 'RUNNING', devices: [dev('ascend', 0), dev('ascend', 2)], count: 2 }, 'asc:[0,2]', 'assigned devices'],
    [{ state: 'RUNNING', count: 0 }, '-', 'running CPU job'],
    [{ state: 'CANCELLED', count: 2 }, '-', 'cancelled before start'],
    [{ state: 'COMPLETED', count: 0 }, '-', 'finished CPU job'],
    [{ state: 'PENDING', count: 0 }, 'cpu', 'pending CPU job'],
    [{ state: 'PENDING', count: 2, device_ids: [0, 2], kind: 'ascend' }, 'asc:[0,2]', 'pending -i with --device'],
    [{ state: 'PENDING', count: 2, device_ids: [3, 1] }, 'auto:[3,1]', 'pending -i keeps request order'],
    [{ state: 'PENDING', count: 2, kind: 'ascend' }, 'asc:2', 'pending with --device'],
    [{ state: 'PENDING', count: 1 }, 'auto:1', 'pending default'],
  ];
  for (const [over, cell, what] of cases) t.equal(devicesCell(summary(1, over)), cell, what);
});

t.test('WAIT and RUN', async (t) => {
  const now = T0 + 7200;
  t.same(waitAndRun(T0, null, null, now), { wait: '02:00:00', run: '-' }, 'pending: wait grows');
  t.same(waitAndRun(T0, T0 + 60, null, now), { wait: '00:01:00', run: '01:59:00' }, 'running: run grows');
  t.same(waitAndRun(T0, T0 + 60, T0 + 120, now), { wait: '00:01:00', run: '00:01:00' }, 'finished');
  t.same(waitAndRun(T0, null, T0 + 30, now), { wait: '00:00:30', run: '-' }, 'cancelled while pending');
  t.same(waitAndRun(T0, T0 - 5, T0 - 10, now), { wait: '00:00:00', run: '00:00:00' }, 'clock skew saturates');
});

t.test('row selection: newest 100 active, submission order, RUNNING first without --all', async (t) => {
  const states: JobSummary['state'][] = ['COMPLETED', 'PENDING', 'RUNNING', 'FAILED', 'PENDING', 'RUNNING', 'TIMED_OUT'];
  const jobs = states.map((state, i) => summary(i + 1, { state }));
  t.same(selectRows(jobs, false).map((j) => j.id), [3, 6, 2, 5]);
  t.same(selectRows(jobs, true).map((j) => j.id), [1, 2, 3, 4, 5, 6, 7], '--all: strictly by id');
  const many = Array.from({ length: 250 }, (_, i) => summary(i + 1, { state: i % 2 ? 'RUNNING' : 'PENDING' }));
  const picked = selectRows(many, false);
  t.equal(picked.length, 100);
  t.same(picked.slice(0, 3).map((j) => j.id), [152, 154, 156], 'the newest 100, running first');
  t.same(picked.slice(50, 53).map((j) => j.id), [151, 153, 155]);
  t.same(selectRows(many, true).map((j) => j.id)[0], 151);
  t.same(selectRows(many.map((j, i) => ({ ...j, state: i < 240 ? 'COMPLETED' as const : 'PENDING' as const })), false).map((j) => j.id),
    [241, 242, 243, 244, 245, 246, 247, 248, 249, 250], 'terminal jobs do not count towards the 100');
});

t.test('table: exact header and padding under TZ=Asia/Shanghai', async (t) => {
  process.env.TZ = 'Asia/Shanghai';
  const clock = tableClock((T0 + 3661) * 1000);
  t.equal(queueTable([], false, clock), 'JOB USER STATE DEVICES STARTED (UTC+8) WAIT RUN NAME\n');
  const rows = [
    summary(7, { state: 'RUNNING', devices: [dev('nvidia', 2), dev('nvidia', 0)], count: 2, started_at: T0 + 61, name: 'train\tv2' }),
    summary(12, { owner: { uid: 1001, gid: 1001, name: 'bob' }, count: 0 }),
  ];
  t.equal(queueTable(rows, false, clock),
    'JOB USER  STATE   DEVICES  STARTED (UTC+8) WAIT     RUN      NAME\n'
    + '7   alice RUNNING nv:[2,0] 05-01 08:01:01  00:01:01 01:00:00 train\\tv2\n'
    + '12  bob   PENDING cpu      -               01:01:01 -        job12\n');
  const all = queueTable([summary(3, { state: 'TIMED_OUT', started_at: T0, finished_at: T0 + 183845, count: 0 })], true, clock);
  t.equal(all,
    'JOB USER  STATE    DEVICES STARTED (UTC+8)     WAIT     RUN        NAME\n'
    + '3   alice TIMEDOUT -       2024-05-01 08:00:00 00:00:00 2-03:04:05 job3\n');
});

t.test('table header names other zones', async (t) => {
  process.env.TZ = 'UTC';
  t.equal(queueTable([], false, tableClock(T0 * 1000)), 'JOB USER STATE DEVICES STARTED (UTC+0) WAIT RUN NAME\n');
  process.env.TZ = 'Asia/Kolkata';
  t.equal(queueTable([], false, tableClock(T0 * 1000)), 'JOB USER STATE DEVICES STARTED (UTC+5:30) WAIT RUN NAME\n');
  process.env.TZ = 'America/Chicago';
  t.equal(queueTable([], false, tableClock(Date.UTC(2024, 0, 1) )), 'JOB USER STATE DEVICES STARTED (UTC-6) WAIT RUN NAME\n');
});

function job(over: Partial<Job> = {}): Job {
  return {
    id: 42,
    owner: { uid: 1000, gid: 1000, name: 'alice' },
    spec: { command: ['python', 'x.py'], cwd: '/home/alice/proj', env: {}, name: 'python', count: 1, kind: null, time_limit: null, script: null },
    state: 'PENDING', devices: [], submitted_at: T0, started_at: null, result: null, reason: null, ...over,
  };
}

t.test('detail text', async (t) => {
  process.env.TZ = 'Asia/Shanghai';
  t.equal(jobDetail(job(), T0 + 90),
    'Job 42: Pending\nName: python\nUser: alice (UID 1000)\nDirectory: /home/alice/proj\nLog: xqueue 42 --log\n'
    + 'Devices: -\nStarted at: -\nWait time: 00:01:30\nRun time: -\n');
  t.equal(jobDetail(job({
    state: 'FAILED', devices: [dev('nvidia', 1)], started_at: T0 + 10,
    result: { state: 'FAILED', exit_code: 1, finished_at: T0 + 70, error: 'cannot execute python: No such file or directory' },
  }), T0 + 1000),
  'Job 42: Failed\nName: python\nUser: alice (UID 1000)\nDirectory: /home/alice/proj\nLog: xqueue 42 --log\n'
    + 'Devices: nv:[1]\nStarted at: 2024-05-01 08:00:10 UTC+8\nWait time: 00:00:10\nRun time: 00:01:00\n'
    + 'Exit code: 1\nError: cannot execute python: No such file or directory\n');
  process.env.TZ = 'UTC';
  t.match(jobDetail(job({
    state: 'TIMED_OUT', started_at: T0, result: { state: 'TIMED_OUT', exit_code: 124, finished_at: T0 + 5, error: null },
  }), T0 + 1000), /^Job 42: TimedOut\n[^]*Started at: 2024-05-01 00:00:00 UTC\+0\nWait time: 00:00:00\nRun time: 00:00:05\nExit code: 124\n$/);
});

t.test('detail text ends with the Reason line for a pending job (docs/behaviour.md §20.4)', async (t) => {
  process.env.TZ = 'UTC';
  const reason = { code: 'Resources' as const, message: 'needs 2 nv devices: nv:0 held by job 12 (alice), nv:1 busy (pid 4242, not started by xlurm)' };
  t.equal(jobDetail(job({ reason }), T0 + 90),
    'Job 42: Pending\nName: python\nUser: alice (UID 1000)\nDirectory: /home/alice/proj\nLog: xqueue 42 --log\n'
    + 'Devices: -\nStarted at: -\nWait time: 00:01:30\nRun time: -\n'
    + 'Reason: Resources: needs 2 nv devices: nv:0 held by job 12 (alice), nv:1 busy (pid 4242, not started by xlurm)\n');
  t.notMatch(jobDetail(job({ reason: null }), T0 + 90), /Reason:/, 'no line before the first pass has considered it');
  t.notMatch(jobDetail(job({ state: 'RUNNING', started_at: T0, reason }), T0 + 90), /Reason:/, 'only PENDING jobs have a reason line');
});

t.test('long table: REASON before NAME; the default table is unchanged', async (t) => {
  process.env.TZ = 'UTC';
  const clock = tableClock((T0 + 61) * 1000);
  t.equal(queueTable([], false, clock, true), 'JOB USER STATE DEVICES STARTED (UTC+0) WAIT RUN REASON NAME\n');
  const rows = [
    summary(7, { state: 'RUNNING', devices: [dev('nvidia', 0)], started_at: T0 + 1, reason: null }),
    summary(8, { reason: { code: 'Resources', message: 'needs 1 nv device: nv:0 held by job 7 (alice)' } }),
    summary(9, { reason: null }),
  ];
  t.equal(queueTable(rows, false, clock, true),
    'JOB USER  STATE   DEVICES STARTED (UTC+0) WAIT     RUN      REASON    NAME\n'
    + '7   alice RUNNING nv:[0]  05-01 00:00:01  00:00:01 00:01:00 -         job7\n'
    + '8   alice PENDING auto:1  -               00:01:01 -        Resources job8\n'
    + '9   alice PENDING auto:1  -               00:01:01 -        -         job9\n');
  t.equal(queueTable(rows, false, clock),
    'JOB USER  STATE   DEVICES STARTED (UTC+0) WAIT     RUN      NAME\n'
    + '7   alice RUNNING nv:[0]  05-01 00:00:01  00:00:01 00:01:00 job7\n'
    + '8   alice PENDING auto:1  -               00:01:01 -        job8\n'
    + '9   alice PENDING auto:1  -               00:01:01 -        job9\n');
});
