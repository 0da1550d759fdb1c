// accounting/sampler.ts (docs/behaviour.md §26.2, §26.3): a sample's rows, the samples' own
// retention, the metrics file at every sample, "0" = off, and a stalled driver delaying nothing.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Device, Owner } from '@xlurm/protocol';
import { Sampler } from '../../../../packages/daemon/src/accounting/sampler';
import { Core } from '../../../../packages/daemon/src/core';
import { parseDaemonArgs } from '../../../../packages/daemon/src/config/args';
import { loadDaemonConfig } from '../../../../packages/daemon/src/config/daemon';
import type { Backend, ProbeResult } from '../../../../packages/daemon/src/devices/backend';
import { DeviceManager } from '../../../../packages/daemon/src/devices/manager';
import { Store } from '../../../../packages/daemon/src/store/store';
import { FakeRunner, alice, makeCore, nvidia, spec, startedBy } from '../../../helpers/core';
import { waitFor } from '../../../helpers/wait';

function sampled(s: Sampler): Promise<void> {
  return new Promise((resolve) => { s.onSample = () => { s.onSample = undefined; resolve(); }; });
}

t.test('one sample: every device with its holder and owner, the host, the queue; the metrics file', async (t) => {
  const tc = await makeCore(t, { devices: 2 });
  const j = await tc.core.submit(alice, spec({ count: 1 }));
  await startedBy(tc, j.id);
  await tc.core.submit(alice, spec({ count: 2 }));
  const file = path.join(t.testdir(), 'xlurm.prom');
  const s = new Sampler(tc.core, { readings: () => new Map([['nv:0', { utilization: 0.25, memoryUsed: 4096 }]]) }, () => undefined);
  t.teardown(() => s.stop());
  const first = sampled(s);
  s.configure({ sampleInterval: 3600, retentionSecs: 86400, metricsFile: file });
  await first;
  const rows = tc.store.db.prepare('SELECT device, status, job, user, utilization, memory_used FROM device_samples ORDER BY device').all();
  t.same(rows, [
    { device: 'nv:0', status: 'allocated', job: j.id, user: 'alice', utilization: 0.25, memory_used: 4096 },
    { device: 'nv:1', status: 'idle', job: null, user: null, utilization: null, memory_used: null },
  ]);
  const host = tc.store.db.prepare('SELECT * FROM host_samples').get() as Record<string, number | null>;
  t.match(host, { pending: 1, running: 1 });
  t.ok((host.mem_available ?? 0) > 0, 'MemAvailable from /proc/meminfo');
  t.type(host.load1, 'number');
  t.match(fs.readFileSync(file, 'utf8'), /^xlurm_device_utilization_ratio\{device="nv:0"\} 0\.25$/m);
  const types = (text: string) => text.split('\n').filter((l) => l.startsWith('# TYPE'));
  t.same(types(s.metrics()), types(fs.readFileSync(file, 'utf8')), 'metrics() makes the same text');
});

t.test('samples older than the retention go as new ones come', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const now = tc.core.now();
  tc.store.db.prepare(`INSERT INTO device_samples (at, device, status) VALUES (?, 'nv:0', 'idle'), (?, 'nv:0', 'idle')`).run(now - 5000, now - 10);
  tc.store.db.prepare(`INSERT INTO host_samples (at, pending, running) VALUES (?, 0, 0)`).run(now - 5000);
  const s = new Sampler(tc.core, { readings: () => new Map() }, () => undefined);
  t.teardown(() => s.stop());
  const first = sampled(s);
  s.configure({ sampleInterval: 3600, retentionSecs: 1000, metricsFile: '' });
  await first;
  const ats = (tc.store.db.prepare('SELECT at FROM device_samples ORDER BY at').all() as { at: number }[]).map((r) => r.at);
  t.same(ats.length, 2, 'the old one removed, the recent one and the new one kept');
  t.ok(ats.every((a) => a >= now - 10));
  t.equal((tc.store.db.prepare('SELECT count(*) AS n FROM host_samples WHERE at < ?').get(now - 1000) as { n: number }).n, 0);
});

t.test('"0" samples nothing; a reload that turns it on samples at once', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const s = new Sampler(tc.core, { readings: () => new Map() }, () => undefined);
  t.teardown(() => s.stop());
  // configure() starts its first sample synchronously when sampling is on: none may start here.
  s.onSample = () => t.fail('sampled while off');
  s.configure({ sampleInterval: 0, retentionSecs: 1000, metricsFile: '' });
  t.equal((tc.store.db.prepare('SELECT count(*) AS n FROM host_samples').get() as { n: number }).n, 0);
  const on = sampled(s);
  s.configure({ sampleInterval: 1, retentionSecs: 1000, metricsFile: '' });
  await on;
  t.equal((tc.store.db.prepare('SELECT count(*) AS n FROM host_samples').get() as { n: number }).n, 1);
});

t.test('a metrics file that cannot be written is logged once and sampling goes on', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const logs: string[] = [];
  const s = new Sampler(tc.core, { readings: () => new Map() }, (m) => logs.push(m));
  t.teardown(() => s.stop());
  const file = path.join(t.testdir(), 'missing', 'xlurm.prom');
  const first = sampled(s);
  s.configure({ sampleInterval: 3600, retentionSecs: 1000, metricsFile: file });
  await first;
  await s.sample();
  t.equal(logs.filter((l) => l.startsWith(`cannot write metrics file ${file}:`)).length, 1, 'once, not every sample');
  t.equal((tc.store.db.prepare('SELECT count(*) AS n FROM host_samples').get() as { n: number }).n, 2);
});

t.test('a sample that cannot be recorded (a full disk) is logged once per spell, and sampling goes on', async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const logs: string[] = [];
  const s = new Sampler(tc.core, { readings: () => new Map() }, (m) => logs.push(m));
  t.teardown(() => s.stop());
  const full = () => tc.store.db.exec(`CREATE TRIGGER full BEFORE INSERT ON host_samples BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`);
  const count = () => (tc.store.db.prepare('SELECT count(*) AS n FROM host_samples').get() as { n: number }).n;
  full();
  const first = sampled(s);
  s.configure({ sampleInterval: 3600, retentionSecs: 1000, metricsFile: '' });
  await first;
  await s.sample();
  await s.sample();
  t.same(logs, ['cannot record a sample: database or disk is full'], 'once, not every sample');
  tc.store.db.exec('DROP TRIGGER full');
  await s.sample();
  t.equal(count(), 1, 'recorded again once there is room');
  t.equal(logs.length, 1, 'quietly');
  full();
  await s.sample();
  t.equal(logs.length, 2, 'a new spell of failures is said again');
  t.equal(count(), 1);
});

t.test("a sample never joins the store's open batch: a failure that rolls the batch back takes no sample with it, and the sample none of the jobs' writes", async (t) => {
  const tc = await makeCore(t, { devices: 1 });
  const s = new Sampler(tc.core, { readings: () => new Map() }, () => undefined);
  t.teardown(() => s.stop());
  const first = sampled(s);
  s.configure({ sampleInterval: 3600, retentionSecs: 1000, metricsFile: '' });
  await first;
  const count = () => (tc.store.db.prepare('SELECT count(*) AS n FROM host_samples').get() as { n: number }).n;
  t.equal(count(), 1);
  // A batch of the store's is open while the sample is taken; then it is
  // rolled back whole, as SQLite does on SQLITE_FULL or an I/O error.
  tc.store.db.exec('BEGIN');
  await s.sample();
  t.equal(count(), 1, 'not written into the open batch');
  tc.store.db.exec('ROLLBACK');
  await waitFor(() => count() === 2, { what: 'the sample, in a transaction of its own after the batch' });
  t.equal(tc.store.db.inTransaction, false);
});

/** A library whose every call hangs: its probe never answers. */
class HungBackend implements Backend {
  readonly kind = 'nvidia' as const;
  readonly devices: Device[] = [nvidia(0), nvidia(1)];
  probe(): Promise<Map<number, ProbeResult>> { return new Promise(() => undefined); }
  close(): void { /* nothing held */ }
}

t.test('a stalled driver delays neither a sample nor a pass', async (t) => {
  const dir = t.testdir({ jobs: {} });
  const store = new Store(path.join(dir, 'xlurm.db'));
  const devices = new DeviceManager([new HungBackend()], () => undefined, () => undefined, 100);
  t.teardown(() => { devices.stop(); store.close(); });
  const cfg = loadDaemonConfig(parseDaemonArgs(['--backend', 'none']), { file: path.join(dir, 'none.toml'), named: false });
  const runner = new FakeRunner();
  const core = new Core(dir, cfg, store, devices, runner, process.geteuid!(), () => undefined);
  core.recover();
  void devices.start(); // never settles: the first probe hangs
  const s = new Sampler(core, devices, () => undefined);
  t.teardown(() => s.stop());
  const owner: Owner = alice;
  const cpuJob = await core.submit(owner, spec({ count: 0 }));
  await waitFor(() => runner.started().includes(cpuJob.id), { what: 'a CPU job started', timeout: 5000 });
  const t0 = Date.now();
  await s.sample();
  t.ok(Date.now() - t0 < 1000, `the sample took ${Date.now() - t0} ms`);
  const rows = store.db.prepare('SELECT device, status FROM device_samples').all();
  t.same(rows, [{ device: 'nv:0', status: 'unknown' }, { device: 'nv:1', status: 'unknown' }]);
});
