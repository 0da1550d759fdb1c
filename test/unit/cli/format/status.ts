import t from 'tap';
import { formatRetention, statusText } from '../../../../packages/cli/src/format/status';

const savedTz = process.env.TZ;
t.teardown(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

t.test('retention units', async (t) => {
  t.equal(formatRetention(604800), '7d');
  t.equal(formatRetention(7200), '2h');
  t.equal(formatRetention(90), '90s');
  t.equal(formatRetention(120), '2m');
  t.equal(formatRetention(0), '0s');
});

t.test('status lines', async (t) => {
  process.env.TZ = 'UTC';
  const text = statusText({
    version: '0.1.0', protocol: 1, pid: 4321, uid: 0, backend: 'auto', backends: ['nvidia', 'ascend'],
    max_running: 32, retention_secs: 604800, started_at: Date.UTC(2024, 4, 1) / 1000, uptime_secs: 183845,
    excluded: [], counts: { RUNNING: 2, PENDING: 1 },
  });
  t.equal(text, [
    'Version: 0.1.0', 'Protocol: 1', 'PID: 4321', 'UID: 0', 'Backend: auto', 'Discovered backends: nvidia, ascend',
    'Started at: 2024-05-01 00:00:00 UTC+0', 'Uptime: 2-03:04:05', 'Max running: 32', 'Retention: 7d',
    'Excluded device IDs: -',
    'Jobs: PENDING 1, RUNNING 2, COMPLETED 0, FAILED 0, CANCELLED 0, TIMED_OUT 0',
  ].join('\n') + '\n');
  const other = statusText({
    version: '0.1.0', protocol: 1, pid: 1, uid: 1000, backend: 'none', backends: [], max_running: 4, retention_secs: 1,
    started_at: 0, uptime_secs: 5, excluded: [0, 2], counts: {},
  });
  t.match(other, /^Discovered backends: -$/m);
  t.match(other, /^Excluded device IDs: 0,2$/m);
  t.match(other, /^Retention: 1s$/m);
});

t.test('the scheduling policy, when the daemon reports it', async (t) => {
  process.env.TZ = 'UTC';
  const base = {
    version: '0.1.0', protocol: 1, pid: 1, uid: 0, backend: 'none', backends: [], max_running: 4, retention_secs: 60,
    started_at: 0, uptime_secs: 5, excluded: [], counts: {},
  };
  const text = statusText({
    ...base,
    policy: { scheduler: 'reserve', fair_share: false, group_affinity: 'prefer', limits: { 'scheduler.max_running_by_size': '8=1', 'limits.kill_grace': '30s' } },
  });
  t.match(text, /\nJobs: [^\n]*\nScheduler: reserve\nFair share: off\nGroup affinity: prefer\nLimits: scheduler\.max_running_by_size 8=1, limits\.kill_grace 30s\n$/);
  t.match(statusText({ ...base, policy: { scheduler: 'greedy', fair_share: true, group_affinity: 'off', limits: {} } }), /\nFair share: on\n[^]*\nLimits: -\n$/);
});

// docs/behaviour.md §28.3: root's reply names who holds the connection slots, largest first.
t.test('the connections line, when the daemon sends one', async (t) => {
  const base = {
    version: '0.1.0', protocol: 1, pid: 1, uid: 0, backend: 'none', backends: [], max_running: 4, retention_secs: 1,
    started_at: 0, uptime_secs: 5, excluded: [], counts: {},
  };
  const text = statusText({ ...base, connections: [{ user: 'alice', count: 12 }, { user: 'root', count: 1 }] });
  t.match(text, /^connections: alice 12, root 1\nJobs: /m, 'before the job counts');
  t.notMatch(statusText(base), /connections/, 'absent for other users');
});
