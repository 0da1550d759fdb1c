// The report's own stats table (docs/behaviour.md §26.1) for a daemon without the stats operation.
import t from 'tap';
import { deviceWeight, nearestRank, statsFromReport } from '../../../../packages/cli/src/report/stats';

const DAY = 86400;
const dev = (id: number) => ({ kind: 'nvidia' as const, id, name: 'H100', visible: `G${id}`, npu: null, chip: null });

t.test('figures per user over the jobs that ended in the window; the host utilisation', async (t) => {
  const since = 10 * DAY;
  const until = since + DAY;
  const job = (id: number, user: string, state: string, devices: number[], sub: number, start: number | null, end: number | null) => ({
    id, user, uid: user === 'alice' ? 1000 : 1001, name: 'j', count: devices.length, state: state as 'COMPLETED', devices, submitted_at: sub, started_at: start, finished_at: end,
  });
  const data = {
    since, until, host: true, devices: [dev(0), dev(1)], samples: [],
    jobs: [
      job(1, 'alice', 'COMPLETED', [0], since, since + 60, since + 3660), // waited 60 s, ran 1 h on 1 device
      job(2, 'alice', 'FAILED', [0, 1], since + 100, since + 400, since + 2200), // waited 300 s, ran 30 min on 2
      job(3, 'alice', 'CANCELLED', [], since + 5, null, since + 10), // never started
      job(4, 'bob', 'RUNNING', [1], since, since + 10, null), // not ended: not in the table, but holds a device
    ],
  };
  const s = statsFromReport(data);
  t.equal(s.users.length, 1);
  const a = s.users[0]!;
  t.same(a.jobs, { COMPLETED: 1, FAILED: 1, CANCELLED: 1, TIMED_OUT: 0, EXPIRED: 0, OUT_OF_MEMORY: 0 });
  t.equal(a.device_hours, 2);
  t.equal(a.wait_mean_s, 180);
  t.equal(a.wait_p95_s, 300);
  t.equal(a.run_mean_s, (3600 + 1800) / 2);
  t.equal(a.success_rate, 0.5, 'COMPLETED over the jobs that started');
  t.equal(s.host!.available_device_hours, 48);
  t.equal(s.host!.device_hours, 1 + 1 + (DAY - 10) / 3600);
  t.equal(statsFromReport({ ...data, host: false }).host, null, 'a user\'s report has no host line');
  t.equal(nearestRank([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.95), 10);
  t.equal(nearestRank([], 0.95), 0);
});

t.test('a slice job counts its device weight (its share of each card\'s memory); without one, its devices', async (t) => {
  const since = 10 * DAY;
  const until = since + DAY;
  const base = { uid: 1000, user: 'alice', name: 'j', count: 2, state: 'COMPLETED' as const, devices: [0, 1], submitted_at: since };
  const data = {
    since, until, host: true, devices: [dev(0), dev(1)], samples: [],
    jobs: [
      { ...base, id: 1, started_at: since, finished_at: since + 7200, device_weight: 0.5 }, // 2 h × (1/4 + 1/4)
      { ...base, id: 2, started_at: since, finished_at: since + 3600 }, // an older daemon's data: 2 devices
    ],
  };
  const s = statsFromReport(data);
  t.equal(s.users[0]!.device_hours, 1 + 2);
  t.equal(s.host!.device_hours, 3);
  t.equal(deviceWeight(data.jobs[0]!), 0.5);
  t.equal(deviceWeight(data.jobs[1]!), 2);
});
