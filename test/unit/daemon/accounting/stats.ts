// accounting/stats.ts: usage statistics from the store (docs/behaviour.md §26.1), on jobs whose
// times are set by hand: whole days from the daily summary, partial days from the jobs, the
// 95th percentile, privacy filters, and a summary that outlives the jobs' own retention.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Owner, Submission } from '@xlurm/protocol';
import { Store } from '../../../../packages/daemon/src/store/store';
import { usageStats } from '../../../../packages/daemon/src/accounting/stats';
import { setCardMemory } from '../../../../packages/daemon/src/sharing/weight';

const alice: Owner = { uid: 1000, gid: 1000, name: 'alice' };
const bob: Owner = { uid: 1001, gid: 1001, name: 'bob' };
const DAY = 86400;
const NOW = 20000 * DAY + 12 * 3600; // noon of a UTC day

function store(t: { teardown(fn: () => void): void }): Store {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-stats-'));
  const s = new Store(path.join(dir, 'xlurm.db'));
  t.teardown(() => { s.close(); fs.rmSync(dir, { recursive: true, force: true }); });
  return s;
}

const spec = (over: Partial<Submission> = {}): Submission => ({ command: ['true'], cwd: '/', env: {}, name: 'j', count: 1, ...over });
const dev = (id: number) => ({ kind: 'nvidia' as const, id, name: 'GPU', visible: `GPU-${id}`, npu: null, chip: null });

/** A job through the store's own transitions: submitted, started (unless `wait` is null), ended. */
function job(s: Store, o: Owner, end: number, run: number, wait: number | null, state: 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT' | 'EXPIRED' = 'COMPLETED', over: Partial<Submission> = {}): number {
  const count = over.count ?? 1;
  const submitted = wait === null ? end - 10 : end - run - wait;
  const j = s.insert(o, spec(over), submitted);
  if (wait !== null) s.markRunning(j.id, Array.from({ length: count }, (_, i) => dev(i)), end - run, over.share);
  s.finish(j.id, { state, exit_code: state === 'COMPLETED' ? 0 : 1, finished_at: end, error: null });
  return j.id;
}

t.test('figures of jobs of known length, per user, and the host', async (t) => {
  const s = store(t);
  job(s, alice, NOW - 3600, 1800, 60, 'COMPLETED', { count: 2 });          // 1 device-hour
  job(s, alice, NOW - 7200, 3600, 120, 'FAILED', { count: 1, cpus: 4 } as Partial<Submission>); // 1 device-hour, 4 CPU-hours
  job(s, alice, NOW - 100, 0, null, 'CANCELLED');                          // never started
  job(s, bob, NOW - 50, 360, 0, 'COMPLETED', { count: 0 });                // CPU only
  job(s, bob, NOW - 8 * DAY, 3600, 0);                                     // outside 7 days
  const r = usageStats(s.db, { since: NOW - 7 * DAY, until: NOW, host: true, devices: 4 });
  t.equal(r.since, NOW - 7 * DAY);
  t.equal(r.until, NOW);
  t.same(r.users.map((u) => u.user), ['alice', 'bob']);
  const a = r.users[0]!;
  t.same(a.jobs, { COMPLETED: 1, FAILED: 1, CANCELLED: 1, TIMED_OUT: 0, EXPIRED: 0, OUT_OF_MEMORY: 0 });
  t.equal(a.device_hours, 2);
  t.equal(a.cpu_hours, (await cpusStored(s)) ? 4 : 0, 'CPU-hours of the job that asked for CPUs');
  t.equal(a.wait_mean_s, 90);
  t.equal(a.wait_p95_s, 120);
  t.equal(a.run_mean_s, 2700);
  t.equal(a.success_rate, 0.5, 'COMPLETED / jobs that started: the cancelled one never did');
  const b = r.users[1]!;
  t.same(b.jobs.COMPLETED, 1, 'the job that ended 8 days ago is outside');
  t.equal(b.device_hours, 0);
  t.equal(b.success_rate, 1);
  t.same(r.host, { device_hours: 2, available_device_hours: 4 * 7 * 24, utilization: Math.round((2 / (4 * 168)) * 1e6) / 1e6 });

  const own = usageStats(s.db, { since: NOW - 7 * DAY, until: NOW, host: false, devices: 4, uid: bob.uid });
  t.same(own.users.map((u) => u.user), ['bob'], 'a user sees their own row');
  t.equal(own.host, null);
  const named = usageStats(s.db, { since: NOW - 7 * DAY, until: NOW, host: true, devices: 4, name: 'alice' });
  t.same(named.users.map((u) => u.user), ['alice']);
  t.equal(named.host!.device_hours, 2, 'the host total stays the whole host');
  const none = usageStats(s.db, { since: NOW - 7 * DAY, until: NOW, host: true, devices: 0 });
  t.equal(none.host!.utilization, 0, 'no devices, no utilisation (not NaN)');
});

/** Whether this store keeps a job's CPUs (the `cpus` column of host-resource requests). */
async function cpusStored(s: Store): Promise<boolean> {
  return (s.db.prepare(`SELECT count(*) AS n FROM pragma_table_info('jobs') WHERE name = 'cpus'`).get() as { n: number }).n === 1;
}

t.test('whole days from the daily summary and the partial days at both ends agree with the jobs', async (t) => {
  const s = store(t);
  const waits: number[] = [];
  let devSeconds = 0;
  // One job every 5 hours over 40 days: jobs on whole days, and on the window's two partial days.
  for (let i = 0, end = NOW - 40 * DAY; end < NOW; i++, end += 5 * 3600) {
    const run = 600 + (i % 7) * 60;
    const wait = (i * 37) % 500;
    const count = 1 + (i % 3);
    job(s, alice, end, run, wait, i % 5 === 0 ? 'FAILED' : 'COMPLETED', { count });
    if (end >= NOW - 30 * DAY - 1234) { waits.push(wait); devSeconds += run * count; }
  }
  const r = usageStats(s.db, { since: NOW - 30 * DAY - 1234, until: NOW, host: true, devices: 8 });
  const a = r.users[0]!;
  t.equal(a.jobs.COMPLETED + a.jobs.FAILED, waits.length);
  t.equal(a.device_hours, Math.round((devSeconds / 3600) * 1e6) / 1e6);
  t.equal(a.wait_mean_s, Math.round((waits.reduce((x, y) => x + y, 0) / waits.length) * 1000) / 1000);
  const sorted = [...waits].sort((x, y) => x - y);
  t.equal(a.wait_p95_s, sorted[Math.ceil(0.95 * sorted.length) - 1], 'nearest-rank 95th percentile');
  // A window inside one day: the jobs only.
  const day = usageStats(s.db, { since: NOW - 6 * 3600, until: NOW, host: false, devices: 8 });
  t.equal(day.users[0]!.jobs.COMPLETED + day.users[0]!.jobs.FAILED, 1, 'one job ended in the last 6 hours');
});

t.test('the summary outlives the jobs themselves ([daemon] retention)', async (t) => {
  const s = store(t);
  const ids = [job(s, alice, NOW - 20 * DAY, 3600, 10), job(s, alice, NOW - 19 * DAY, 3600, 20)];
  s.removeJobs(ids);
  const r = usageStats(s.db, { since: NOW - 30 * DAY, until: NOW, host: true, devices: 1 });
  t.equal(r.users[0]!.jobs.COMPLETED, 2);
  t.equal(r.users[0]!.device_hours, 2);
  t.equal(r.users[0]!.wait_mean_s, 15);
  t.equal(r.users[0]!.wait_p95_s, 0, 'the percentile needs the jobs, and they are gone');
  // Some of a day's jobs removed: the percentile ranks those left.
  const kept = [job(s, alice, NOW - 10 * DAY, 60, 5), job(s, alice, NOW - 10 * DAY + 1, 60, 7), job(s, alice, NOW - 10 * DAY + 2, 60, 900)];
  s.removeJobs([kept[2]!]);
  const after = usageStats(s.db, { since: NOW - 30 * DAY, until: NOW, host: true, devices: 1 });
  t.equal(after.users[0]!.jobs.COMPLETED, 5);
  t.equal(after.users[0]!.wait_p95_s, 7, 'the longer of the two waits the history still holds');
});

t.test('a long history is answered without reading its jobs', async (t) => {
  const s = store(t);
  for (let i = 0; i < 9000; i++) job(s, i % 2 ? alice : bob, NOW - (i % 90) * DAY - 1000, 600, i % 300);
  const t0 = process.hrtime.bigint();
  const r = usageStats(s.db, { since: NOW - 30 * DAY, until: NOW, host: true, devices: 8 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  t.equal(r.users.length, 2);
  t.equal(r.users[0]!.jobs.COMPLETED + r.users[1]!.jobs.COMPLETED, 9000 * 30 / 90, 'the jobs of 30 of the 90 days');
  t.ok(ms < 200, `answered in ${ms.toFixed(1)} ms`);
  const plan = (s.db.prepare(`EXPLAIN QUERY PLAN SELECT uid FROM usage_daily WHERE day >= 1 AND day <= 2 GROUP BY uid`).all() as { detail: string }[]).map((p) => p.detail).join('; ');
  t.match(plan, /usage_daily/);
});

t.test('a slice job counts its share of each card\'s memory, in the statistics and the device-seconds total', async (t) => {
  const G = 1024 ** 3;
  // Cards 0 and 1 report 16G; card 2's total is not known (counted whole, as fair-share usage does).
  setCardMemory((d) => (d.id < 2 ? 16 * G : undefined));
  t.teardown(() => setCardMemory(() => undefined));
  const s = store(t);
  const share = (mem: number): Partial<Submission> => ({ share: { mem, compute: 100 } });
  job(s, alice, NOW - 3 * DAY, 7200, 10, 'COMPLETED', { count: 2, ...share(4 * G) });  // 2 h × 2 × 1/4: 1 device-hour (daily summary)
  job(s, alice, NOW - 600, 3600, 10, 'COMPLETED', { count: 1, ...share(8 * G) });      // 1 h × 1/2 (the partial day)
  job(s, bob, NOW - 600, 3600, 10, 'COMPLETED', { count: 3, ...share(8 * G) });        // 1 h × (1/2 + 1/2 + 1 unknown)
  job(s, bob, NOW - 3 * DAY, 3600, 10, 'COMPLETED', { count: 1 });                     // a whole device: 1
  const weights = (s.db.prepare('SELECT device_weight AS w FROM jobs ORDER BY id').all() as { w: number | null }[]).map((r) => r.w);
  t.same(weights, [0.5, 0.5, 2, null], 'recorded at the start; NULL for whole devices');
  const r = usageStats(s.db, { since: NOW - 7 * DAY, until: NOW, host: true, devices: 3 });
  t.same(r.users.map((u) => [u.user, u.device_hours]), [['alice', 1.5], ['bob', 3]]);
  t.equal(r.host!.device_hours, 4.5);
  const day = usageStats(s.db, { since: NOW - 6 * 3600, until: NOW, host: false, devices: 3, uid: alice.uid });
  t.equal(day.users[0]!.device_hours, 0.5, 'hours × share, summed from the jobs of a partial day');
  const totals = Object.fromEntries((s.db.prepare(`SELECT label, value FROM metric_totals WHERE name = 'user_device_seconds'`).all() as { label: string; value: number }[])
    .map((x) => [x.label, x.value]));
  t.same(totals, { alice: 2 * 3600 * 0.5 + 3600 * 0.5, bob: 3600 * 2 + 3600 }, 'xlurm_user_device_seconds_total\'s stored part');
});
