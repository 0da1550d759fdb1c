// cli/format/stats.ts: the CSV (docs/behaviour.md §26.1) and the table of `xlurm stats`.
import t from 'tap';
import { CSV_HEADER, statsCsv, statsText } from '../../../../packages/cli/src/format/stats';

const user = (name: string) => ({
  user: name, uid: 1000, jobs: { COMPLETED: 3, FAILED: 1, CANCELLED: 0, TIMED_OUT: 0, EXPIRED: 2, OUT_OF_MEMORY: 0 },
  device_hours: 1.5, cpu_hours: 0.25, wait_mean_s: 12.5, wait_p95_s: 40, run_mean_s: 3600, success_rate: 0.75,
});

t.test('CSV: the contract header and one row per user, names quoted where needed', async (t) => {
  t.equal(CSV_HEADER, 'user,uid,completed,failed,cancelled,timed_out,expired,out_of_memory,device_hours,cpu_hours,wait_mean_s,wait_p95_s,run_mean_s,success_rate');
  const csv = statsCsv({ since: 0, until: 1, users: [user('alice'), user('o"dd,name')], host: null });
  t.same(csv.split('\n'), [CSV_HEADER, 'alice,1000,3,1,0,0,2,0,1.5,0.25,12.5,40,3600,0.75', '"o""dd,name",1000,3,1,0,0,2,0,1.5,0.25,12.5,40,3600,0.75', '']);
  t.equal(statsCsv({ since: 0, until: 1, users: [], host: null }), CSV_HEADER + '\n', 'no jobs: the header only');
});

t.test('the table, and the host line for root', async (t) => {
  const text = statsText({ since: 0, until: 86400, users: [user('alice')], host: { device_hours: 1.5, available_device_hours: 48, utilization: 0.03125 } });
  const lines = text.split('\n');
  t.match(lines[0], /^Jobs that ended from /);
  t.match(lines[1], /^USER +JOBS +COMPLETED +FAILED +CANCELLED +TIMED_OUT +EXPIRED +OOM +DEVICE-H +CPU-H +WAIT +WAIT-P95 +RUN +SUCCESS$/);
  t.match(lines[2], /^alice +6 +3 +1 +0 +0 +2 +0 +1\.50 +0\.25 +13s +40s +60m +75\.0%$/);
  t.equal(lines[3], 'Host: 1.50 of 48.00 device-hours allocated (utilisation 3.1%)');
  t.match(statsText({ since: 0, until: 1, users: [], host: null }), /No jobs ended in this period\.\n$/);
});
