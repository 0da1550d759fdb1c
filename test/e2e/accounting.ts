// Accounting end to end (docs/behaviour.md §26.1–§26.3, §26.5): the real daemon on the fake NVML
// with sampling every second and a metrics file; `xlurm stats` checked against jobs of known
// length (figures recomputed from the jobs' own records), samples in the store, the Prometheus
// text through promtool, the metrics file never seen half-written while jobs churn, and
// `xlurm monitor --json` failing on a stopped or silent daemon.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { fakeLibrary } from '../helpers/fixtures';
import { waitMarker } from '../helpers/devices';
import { peerMissing, type Tap } from '../helpers/tap';
import { waitFor } from '../helpers/wait';

const GPU = (i: number) => `device ${i} GPU-acc0000-0000-4000-8000-00000000000${i} "Fake A100"`;

/** The metric families the contract names, exactly (docs/behaviour.md §26.3). */
const FAMILIES = [
  'xlurm_jobs', 'xlurm_jobs_pending_by_reason', 'xlurm_device_status', 'xlurm_device_utilization_ratio',
  'xlurm_device_memory_used_bytes', 'xlurm_user_device_seconds_total', 'xlurm_job_wait_seconds',
  'xlurm_scheduler_pass_seconds', 'xlurm_up', 'xlurm_build_info',
].sort();

const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => fs.existsSync(p))
  ?? (spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).stdout.trim() || undefined);

function promtool(text: string): { code: number | null; out: string } {
  const r = spawnSync(PROMTOOL!, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

async function setup(tt: Tap) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-acc-'));
  tt.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const fake = fakeLibrary(tt, 'nvidia', [GPU(0), GPU(1), 'util 0 37 2048']);
  const metricsFile = path.join(dir, 'xlurm.prom');
  const config = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(config, `[accounting]\nsample_interval = "1s"\nmetrics_file = "${metricsFile}"\n`);
  const d = await startDaemon(tt, { backend: 'nvidia', env: { ...fake.env, XLURM_CONFIG: config } });
  return { d, dir, metricsFile };
}

async function json(d: Daemon, args: string[]): Promise<any> {
  const r = await d.run('xlurm', args);
  if (r.code !== 0) throw new Error(`xlurm ${args.join(' ')}: ${r.code} ${r.stderr}`);
  return JSON.parse(r.stdout);
}

t.test('stats, samples, metrics and the monitor on fake GPUs', async (t) => {
  const { d, dir, metricsFile } = await setup(t);
  const go = path.join(dir, 'go');
  // Known lengths: a 2-GPU job of about 2 s that makes a 1-GPU job wait for it, a failure,
  // and a pending job cancelled (it never started).
  const big = await d.batch('sleep 2', ['-g', '2']);
  await d.waitState(big, 'RUNNING');
  const waiting = await d.batch('sleep 1', ['-g', '1']);
  const failed = await d.batch('exit 3', ['-g', '0']);
  await d.waitState(waiting, 'RUNNING');
  // Larger requests go first: this one is submitted only once the 1-GPU job holds its GPU.
  const held = await d.batch(waitMarker(go), ['-g', '2']);
  t.equal((await d.run('xcancel', [String(held)])).code, 0);
  await d.waitState(held, ['CANCELLED']);
  await d.waitState(failed, 'FAILED');
  await d.waitState(waiting, 'COMPLETED');
  await d.waitState(big, 'COMPLETED');
  const jobs = await Promise.all([big, waiting, failed, held].map((id) => d.job(id)));
  const started = jobs.filter((j) => j.started_at !== null);
  t.equal(started.length, 3, 'the cancelled job never started');
  t.ok(jobs[0]!.result.finished_at - jobs[0]!.started_at >= 2, 'the 2-GPU job ran its 2 s');
  t.ok(jobs[1]!.started_at - jobs[1]!.submitted_at >= 1, 'the 1-GPU job waited for it');

  const s = await json(d, ['stats', '--json']);
  t.same(Object.keys(s), ['since', 'until', 'users', 'host']);
  t.equal(s.until - s.since, 7 * 86400, '--days 7 by default');
  t.equal(s.users.length, 1);
  const u = s.users[0];
  t.same(Object.keys(u), ['user', 'uid', 'jobs', 'device_hours', 'cpu_hours', 'wait_mean_s', 'wait_p95_s', 'run_mean_s', 'success_rate']);
  t.equal(u.uid, process.getuid!());
  t.same(u.jobs, { COMPLETED: 2, FAILED: 1, CANCELLED: 1, TIMED_OUT: 0, EXPIRED: 0, OUT_OF_MEMORY: 0 });
  const run = (j: any) => j.result.finished_at - j.started_at;
  const wait = (j: any) => j.started_at - j.submitted_at;
  const devSeconds = started.reduce((n, j) => n + run(j) * j.devices.length, 0);
  t.equal(u.device_hours, Math.round((devSeconds / 3600) * 1e6) / 1e6, 'device-hours: run interval × devices');
  t.equal(u.cpu_hours, 0, 'no job asked for CPUs');
  t.equal(u.wait_mean_s, Math.round((started.reduce((n, j) => n + wait(j), 0) / 3) * 1000) / 1000);
  t.equal(u.wait_p95_s, Math.max(...started.map(wait)), 'p95 of three waits is the longest');
  t.equal(u.run_mean_s, Math.round((started.reduce((n, j) => n + run(j), 0) / 3) * 1000) / 1000);
  t.equal(u.success_rate, 0.6667, 'COMPLETED / jobs that started');
  t.equal(s.host.device_hours, u.device_hours);
  t.equal(s.host.available_device_hours, 2 * 7 * 24, 'two GPUs for seven days');
  t.ok(s.host.utilization > 0 && s.host.utilization < 0.001);

  const csv = (await d.run('xlurm', ['stats', '--csv'])).stdout.split('\n');
  t.equal(csv[0], 'user,uid,completed,failed,cancelled,timed_out,expired,out_of_memory,device_hours,cpu_hours,wait_mean_s,wait_p95_s,run_mean_s,success_rate');
  t.equal(csv[1], [u.user, u.uid, 2, 1, 1, 0, 0, 0, u.device_hours, 0, u.wait_mean_s, u.wait_p95_s, u.run_mean_s, u.success_rate].join(','));
  const since = await json(d, ['stats', '--json', '--since', 'now-1h']);
  t.ok(Math.abs(since.until - since.since - 3600) <= 1, 'the last hour (the CLI and the daemon read the clock a moment apart)');
  t.same(since.users[0].jobs, u.jobs);
  t.same((await json(d, ['stats', '--json', '--user', 'nosuchuser'])).users, [], 'root may name any user');
  const both = await d.run('xlurm', ['stats', '--days', '3', '--since', '2026-01-01']);
  t.equal(both.code, 2, 'one window only');
  t.match(both.stderr, /'--days <N>' cannot be used with '--since <DATE>'/);
  t.match((await d.run('xlurm', ['stats', '--since', 'yesterday'])).stderr, /invalid value 'yesterday' for '--since <DATE>'/);

  // Samples: every device with its status and holder, the host's memory; readings where the fake reports them.
  const db = new Database(path.join(d.home, 'xlurm.db'), { readonly: true, fileMustExist: true });
  t.teardown(() => db.close());
  await waitFor(() => (db.prepare('SELECT count(*) AS n FROM host_samples').get() as { n: number }).n >= 2, { what: 'host samples' });
  const held2 = db.prepare(`SELECT * FROM device_samples WHERE job = ? ORDER BY at LIMIT 1`).get(big) as any;
  t.match(held2, { status: 'allocated', user: jobs[0]!.owner.name }, 'a sample names the holder and its owner');
  const nv0 = db.prepare(`SELECT * FROM device_samples WHERE device = 'nv:0' ORDER BY at DESC LIMIT 1`).get() as any;
  t.match(nv0, { utilization: 0.37, memory_used: 2048 * 2 ** 20 });
  const nv1 = db.prepare(`SELECT * FROM device_samples WHERE device = 'nv:1' ORDER BY at DESC LIMIT 1`).get() as any;
  t.match(nv1, { utilization: null, memory_used: null }, 'nothing reported, nothing recorded');
  const host = db.prepare('SELECT * FROM host_samples ORDER BY at DESC LIMIT 1').get() as any;
  t.ok(host.mem_available > 0 && host.load1 !== null);

  // The metrics text: `xlurm metrics` and the file, the contract's names, promtool.
  const text = (await d.run('xlurm', ['metrics'])).stdout;
  const families = [...new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]))].sort();
  t.same(families, FAMILIES);
  t.match(text, /^xlurm_up 1$/m);
  t.match(text, /^xlurm_build_info\{version="\d+\.\d+\.\d+[^"]*"\} 1$/m);
  t.match(text, /^xlurm_jobs\{state="COMPLETED"\} 2$/m);
  t.match(text, /^xlurm_jobs\{state="CANCELLED"\} 1$/m);
  t.match(text, /^xlurm_device_status\{device="nv:0",status="idle"\} 1$/m);
  t.match(text, /^xlurm_device_utilization_ratio\{device="nv:0"\} 0\.37$/m);
  t.notMatch(text, /xlurm_device_utilization_ratio\{device="nv:1"\}/);
  t.match(text, /^xlurm_device_memory_used_bytes\{device="nv:0"\} 2147483648$/m);
  t.match(text, new RegExp(`^xlurm_user_device_seconds_total\\{user="${jobs[0]!.owner.name}"\\} ${devSeconds}$`, 'm'));
  t.match(text, /^xlurm_job_wait_seconds_count 3$/m);
  t.match(text, /^xlurm_scheduler_pass_seconds_count \d+$/m);
  await waitFor(() => fs.existsSync(metricsFile), { what: 'the metrics file' });
  t.equal(fs.statSync(metricsFile).mode & 0o777, 0o644, 'readable by the collector');
  if (!PROMTOOL) peerMissing(t, 'promtool not found (Debian package prometheus): the text is not checked by it');
  else {
    const r = promtool(text);
    t.equal(r.code, 0, `promtool check metrics: ${r.out}`);
    const f = promtool(fs.readFileSync(metricsFile, 'utf8'));
    t.equal(f.code, 0, `promtool on the file: ${f.out}`);
  }

  // One snapshot, with exactly the contract's keys.
  const m = await json(d, ['monitor', '--json']);
  t.same(Object.keys(m), ['generated_at', 'version', 'uptime_s', 'mode', 'devices', 'counts', 'reservations', 'users']);
  t.equal(m.mode, 'greedy');
  t.equal(m.devices.length, 2);
  t.same(Object.keys(m.counts), ['by_state', 'by_reason']);
  t.equal(m.counts.by_state.COMPLETED, 2);
  t.same(m.users, []);
});

t.test('the metrics file is never seen half-written while jobs churn', async (t) => {
  const { d, metricsFile } = await setup(t);
  await waitFor(() => fs.existsSync(metricsFile), { what: 'the metrics file' });
  const first = fs.readFileSync(metricsFile, 'utf8');
  let stop = false;
  const churned: number[] = [];
  const churn = (async () => {
    while (!stop) churned.push(await d.batch('true', ['-g', '1']));
  })();
  let reads = 0;
  const versions = new Set<string>();
  const until = Date.now() + 3500;
  while (Date.now() < until) {
    const text = fs.readFileSync(metricsFile, 'utf8');
    reads++;
    versions.add(text);
    if (!text.startsWith('# HELP xlurm_up ') || !/\nxlurm_scheduler_pass_seconds_count \d+\n$/.test(text)) {
      t.fail(`a partial metrics file was read: ${JSON.stringify(text.slice(-120))}`);
      break;
    }
    await new Promise((r) => setImmediate(r));
  }
  stop = true;
  await churn;
  // The daemon's stop leaves running jobs to their supervisors (docs/behaviour.md, `stop`), and
  // a supervisor writes its job's result into XLURM_HOME/jobs as it ends: a job still running at
  // the teardown would write there while the home is being removed (ENOTEMPTY). Every job this
  // test started ends, seen by the daemon, first.
  for (const id of churned) await d.waitState(id, 'COMPLETED');
  t.ok(versions.size >= 2, `the file was rewritten while it was read (${versions.size} versions in ${reads} reads)`);
  t.not([...versions].at(-1), first);
  t.same(fs.readdirSync(path.dirname(metricsFile)).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left behind');
});

t.test('the monitor fails on a stopped or silent daemon, never shows an empty machine', async (t) => {
  const { d } = await setup(t);
  t.equal((await d.run('xlurm', ['monitor', '--json'])).code, 0);
  // Silent: the daemon is stopped by SIGSTOP and its socket still accepts connections.
  process.kill(d.proc!.pid!, 'SIGSTOP');
  const t0 = Date.now();
  let r;
  try { r = await d.run('xlurm', ['monitor', '--json']); } finally { process.kill(d.proc!.pid!, 'SIGCONT'); }
  const took = Date.now() - t0;
  t.equal(r.code, 1);
  t.equal(r.stdout, '', 'nothing on stdout');
  t.match(r.stderr, /^xlurm: the daemon did not answer within 2 s\n$/);
  t.ok(took >= 1900 && took < 8000, `gave up after the deadline (${took} ms)`);
  await d.stop();
  const gone = await d.run('xlurm', ['monitor', '--json']);
  t.equal(gone.code, 1);
  t.equal(gone.stdout, '');
  t.match(gone.stderr, /^xlurm: xlurm is not running/);
});

t.test('a reload turns sampling and the metrics file on at once; config show lists [accounting]', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-acc-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(config, '[accounting]\nsample_interval = "0"\n');
  const d = await startDaemon(t, { env: { XLURM_CONFIG: config } });
  const metricsFile = path.join(dir, 'xlurm.prom');
  t.notOk(fs.existsSync(metricsFile));
  fs.writeFileSync(config, `[accounting]\nsample_interval = "1h"\nmetrics_file = "${metricsFile}"\n`);
  const r = await d.request('reload', {}) as { ok: boolean; result: { changed: string[] } };
  t.equal(r.ok, true);
  t.same(r.result.changed, ['accounting.sample_interval', 'accounting.metrics_file']);
  await waitFor(() => fs.existsSync(metricsFile), { what: 'the metrics file, written at once (not after an hour)' });
  const shown = await json(d, ['config', 'show', '--json']);
  t.same(shown.config.accounting, { sample_interval: '1h', retention: '90d', metrics_file: metricsFile });
});
