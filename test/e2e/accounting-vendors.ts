// Samples from vendor libraries other than NVML end to end (extensions 28.11; docs/behaviour.md
// §26.2-§26.4): the real daemon on the fake DCMI and on the fake rocm_smi, whose utilisation and
// memory reach the store's samples, `xlurm metrics` and the report; a device whose library reports
// nothing has no figure (never 0). On the HCU host, `hy-smi --healthcheck` runs with the library's
// directory and nothing of the daemon's environment (the fake tool records what it was given).
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { fakeLibrary } from '../helpers/fixtures';
import { waitFor } from '../helpers/wait';
import type { Tap } from '../helpers/tap';

/** A daemon sampling every second on `backend`, with extra daemon variables. */
async function sampling(tt: Tap, backend: string, env: Record<string, string>): Promise<{ d: Daemon; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-accv-'));
  tt.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(config, '[accounting]\nsample_interval = "1s"\n');
  const d = await startDaemon(tt, { backend, env: { ...env, XLURM_CONFIG: config } });
  return { d, dir };
}

const metrics = async (d: Daemon) => (await d.run('xlurm', ['metrics'])).stdout;

/** The latest sample of `device` that has a utilisation figure, once there is one. */
async function sampled(d: Daemon, device: string): Promise<{ utilization: number; memory_used: number | null }> {
  const db = new Database(path.join(d.home, 'xlurm.db'), { readonly: true, fileMustExist: true });
  try {
    return await waitFor(() => db.prepare(`SELECT utilization, memory_used FROM device_samples
      WHERE device = ? AND utilization IS NOT NULL ORDER BY at DESC LIMIT 1`).get(device) as { utilization: number; memory_used: number | null } | undefined,
    { what: `a sample of ${device} with its utilisation` });
  } finally {
    db.close();
  }
}

t.test('Ascend (DCMI): AI Core utilisation and HBM in samples, metrics and the report', async (t) => {
  const fake = fakeLibrary(t, 'ascend', ['chip 0 0 0 Ascend 910B3', 'chip 1 0 1 Ascend 910B3', 'util 0 37', 'hbm 0 65536 2048']);
  const { d, dir } = await sampling(t, 'ascend', fake.env);
  const text = await waitFor(async () => { const m = await metrics(d); return /xlurm_device_utilization_ratio\{device="asc:0"\}/.test(m) && m; },
    { what: 'asc:0 utilisation in the metrics', interval: 250 });
  t.match(text, /^xlurm_device_utilization_ratio\{device="asc:0"\} 0\.37$/m);
  t.match(text, /^xlurm_device_memory_used_bytes\{device="asc:0"\} 2147483648$/m);
  t.notMatch(text, /device="asc:1"\} /, 'asc:1 reports nothing: no figure, never 0');
  t.match(text, /^xlurm_device_status\{device="asc:1",status="idle"\} 1$/m);

  t.same(await sampled(d, 'asc:0'), { utilization: 0.37, memory_used: 2048 * 2 ** 20 });
  const db = new Database(path.join(d.home, 'xlurm.db'), { readonly: true, fileMustExist: true });
  t.teardown(() => db.close());
  t.match(db.prepare(`SELECT utilization, memory_used FROM device_samples WHERE device = 'asc:1' ORDER BY at DESC LIMIT 1`).get(),
    { utilization: null, memory_used: null }, 'nothing reported, nothing recorded');

  // The report draws the samples' daily mean (docs/behaviour.md §26.4).
  const file = path.join(dir, 'report.html');
  const r = await d.run('xlurm', ['report', '--days', '1', '--html', file]);
  t.equal(r.code, 0, r.stderr);
  t.match(fs.readFileSync(file, 'utf8'), /mean sampled device utilisation/);
});

t.test("HCU (rocm_smi): busy percent and VRAM reach the metrics; hy-smi runs without the daemon's environment", async (t) => {
  const fake = fakeLibrary(t, 'hcu', ['device 0 0x1a2b "Hygon K100"', 'device 1 0x1a2c "Hygon K100"', 'util 1 58', 'mem 1 65536 4096']);
  // Variables the daemon has that the tool must not inherit.
  const { d } = await sampling(t, 'hcu', { ...fake.env, XLURM_TEST_LEAK: 'from the daemon', LD_LIBRARY_PATH: '/nonexistent/daemon-lib' });
  const text = await waitFor(async () => {
    const m = await metrics(d);
    return /xlurm_device_utilization_ratio\{device="hcu:1"\}/.test(m) && /device="hcu:1",status="idle"/.test(m) && m;
  }, { what: 'hcu:1 idle (hy-smi answered) with its utilisation', interval: 250 });
  t.match(text, /^xlurm_device_utilization_ratio\{device="hcu:1"\} 0\.58$/m);
  t.match(text, /^xlurm_device_memory_used_bytes\{device="hcu:1"\} 4294967296$/m);
  t.notMatch(text, /device="hcu:0"\} /, 'hcu:0 reports nothing: no figure');
  t.same(await sampled(d, 'hcu:1'), { utilization: 0.58, memory_used: 4096 * 2 ** 20 });

  const given = new Map(fs.readFileSync(`${fake.logPath}.env`, 'utf8').split('\n').filter(Boolean)
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const));
  for (const shellOwn of ['PWD', 'SHLVL', '_', 'OLDPWD']) given.delete(shellOwn); // set by sh itself
  t.same([...given].sort(), [
    ['LC_ALL', 'C'],
    ['LD_LIBRARY_PATH', path.dirname(fs.realpathSync(fake.library))],
    ['PATH', '/usr/sbin:/usr/bin:/sbin:/bin'],
  ], "the tool's whole environment: the library's directory, a system PATH, the C locale");
});
