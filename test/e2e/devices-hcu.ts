// Hygon HCU devices end to end (spec 5, 6.4, 9): the real daemon with `--backend hcu` loads the
// fake rocm_smi (test/fixtures/fake-rocm-smi) through XLURM_HCU_SMI_LIBRARY and runs the fake
// hy-smi (test/fixtures/fake-hy-smi) named by XLURM_HCU_HEALTH_TOOL; both read one state file,
// which the tests rewrite while the daemon runs. Start-up and discovery failures:
// devices-hcu-startup.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  SHOW_VISIBILITY, afterFullProbe, checkResponsive, fakeDaemon, info, jobLog, statuses, waitMarker, xqueueCost,
} from '../helpers/devices';
import { fakeLibrary, FAKE_HY_SMI, type FakeLibrary } from '../helpers/fixtures';
import { pidAlive, waitFor } from '../helpers/wait';

const uid = (i: number) => `0x5a5e00000000000${i}`;
const hcus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} ${uid(i)} "Hygon K100_AI"`);
/** One hy-smi run per probe. */
const isHealthRun = (c: string) => c.startsWith('hy-smi ');
const probes = (fake: FakeLibrary) => afterFullProbe(fake, isHealthRun, 1);
const row = (i: number, status: string) => `hcu:${i}        ${status.padEnd(12)}-      Hygon K100_AI\n`;
const HEADER = 'DEVICE       STATUS      JOB    NAME\n';

t.test('discovery, xinfo, allocation, visibility, busy and unhealthy', async (t) => {
  const fake = fakeLibrary(t, 'hcu', hcus(4));
  const { d, dir } = await fakeDaemon(t, [fake], { backend: 'hcu' });

  t.test('xinfo text and json; the health tool is logged', async (t) => {
    const r = await d.run('xinfo', []);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, HEADER + [0, 1, 2, 3].map((i) => row(i, 'idle')).join(''));
    t.same(await info(d), [0, 1, 2, 3].map((i) => ({
      device: { kind: 'hcu', id: i, name: 'Hygon K100_AI', visible: uid(i), npu: null, chip: null }, job: null, status: 'idle',
    })));
    t.same(((await d.request('status', {})) as any).result.backends, ['hcu']);
    t.match(d.output, `hcu: health from ${FAKE_HY_SMI} --healthcheck`);
  });

  t.test('ROCR_VISIBLE_DEVICES = ids; HIP and CUDA = 0..N-1', async (t) => {
    const m = path.join(dir, 'm1');
    const a = await d.batch(`${SHOW_VISIBILITY}; ${waitMarker(m)}`, ['-g', '2']);
    const b = await d.batch(SHOW_VISIBILITY, ['-i', '3,2']);
    const ja = await d.waitState(a, 'RUNNING');
    t.same(ja.devices.map((x: any) => [x.kind, x.id]), [['hcu', 0], ['hcu', 1]]);
    await d.waitState(b, 'COMPLETED');
    t.equal(await jobLog(d, b), 'CUDA=0,1 ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=0,1 ROCR=3,2 ADI=unset\n');
    t.equal(await jobLog(d, a), 'CUDA=0,1 ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=0,1 ROCR=0,1 ADI=unset\n');
    t.match((await d.run('xqueue', [])).stdout, new RegExp(`\\n${a} +\\S+ +RUNNING +hcu:\\[0,1\\] `));
    fs.writeFileSync(m, '');
    await d.waitState(a, 'COMPLETED');
  });

  t.test('busy while a foreign process uses it (on one or several HCUs)', async (t) => {
    fake.write([...hcus(4), 'procs 2 4242', 'procs 0 77', 'procs 3 77']);
    await waitFor(async () => (await statuses(d)).join() === 'busy,idle,busy,busy', { what: 'hcu:0,2,3 busy' });
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'busy') + row(1, 'idle') + row(2, 'busy') + row(3, 'busy'));
    t.ok(fake.calls().includes('rsmi_compute_process_info_by_device_get'), 'per-device figures asked for');
    const id = await d.batch('echo "$ROCR_VISIBLE_DEVICES"', ['-i', '2']);
    await probes(fake);
    t.equal((await d.job(id)).state, 'PENDING', 'waits while the HCU is busy');
    fake.write(hcus(4));
    await d.waitState(id, 'COMPLETED', 10000);
    t.equal(await jobLog(d, id), '2\n');
  });

  t.test('unhealthy by hy-smi: not allocated until healthy again; logged', async (t) => {
    fake.write([...hcus(4), 'health 1 Unhealthy']);
    await waitFor(async () => (await statuses(d))[1] === 'unhealthy', { what: 'hcu:1 unhealthy' });
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'idle') + row(1, 'unhealthy') + row(2, 'idle') + row(3, 'idle'));
    t.notOk('monitoring_error' in (await info(d))[1]);
    const id = await d.batch('true', ['-i', '1']);
    const other = await d.batch('echo "$ROCR_VISIBLE_DEVICES"', ['-g', '3']);
    await d.waitState(other, 'COMPLETED');
    t.equal(await jobLog(d, other), '0,2,3\n', 'the healthy ones still are allocated');
    await probes(fake);
    t.equal((await d.job(id)).state, 'PENDING', 'an unhealthy HCU is not allocated');
    fake.write([...hcus(4), 'health 1 healthy']);
    await d.waitState(id, 'COMPLETED', 10000);
    t.equal(d.output.split('\n').filter((l) => l.endsWith('device hcu:1 unhealthy')).length, 1, 'logged once');
  });
});

t.test('failed health checks and rocm_smi queries make HCUs unknown', async (t) => {
  const fake = fakeLibrary(t, 'hcu', hcus(3));
  const { d } = await fakeDaemon(t, [fake], { backend: 'hcu' });
  const cases: Array<[string[], string[], (string | undefined)[]]> = [
    [['hysmi exit 3'], ['unknown', 'unknown', 'unknown'],
      Array(3).fill('hy-smi --healthcheck: exit status 3: hy-smi (fake): failing with exit status 3')],
    [['hysmi garbage'], ['unknown', 'unknown', 'unknown'], Array(3).fill('hy-smi --healthcheck: no HCU rows in the output')],
    [['hysmi omit 1'], ['idle', 'unknown', 'idle'], [undefined, 'hy-smi --healthcheck: no row for HCU[1]', undefined]],
    [['fail rsmi_compute_process_info_get 2', 'health 0 Unhealthy'], ['unknown', 'unknown', 'unknown'],
      Array(3).fill('rsmi_compute_process_info_get: RSMI_STATUS_NOT_SUPPORTED (2)')],
    [['procs 1 99', 'fail rsmi_compute_process_info_by_device_get 16 1'], ['idle', 'unknown', 'idle'],
      [undefined, 'rsmi_compute_process_info_by_device_get: RSMI_STATUS_BUSY (16)', undefined]],
    [['procs 2 0'], ['unknown', 'unknown', 'unknown'], Array(3).fill('rsmi_compute_process_info_get: invalid answer (PID 0)')],
  ];
  for (const [lines, want, errors] of cases) {
    t.test(lines.join('; '), async (t) => {
      fake.write([...hcus(3), ...lines]);
      const views = await waitFor(async () => {
        const v = await info(d);
        return v.map((x) => x.status).join() === want.join() && v.every((x, i) => x.monitoring_error === errors[i]) ? v : undefined;
      }, { what: `statuses ${want.join()}` });
      t.same(views.map((x) => x.monitoring_error), errors);
      fake.write(hcus(3));
      await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { what: 'idle again' });
    });
  }

  t.test('a changed unique id is unknown', async (t) => {
    fake.write([...hcus(2), 'device 2 0x2 "Hygon K100_AI"']);
    await waitFor(async () => (await statuses(d))[2] === 'unknown', { what: 'hcu:2 unknown' });
    t.equal((await info(d))[2].monitoring_error, `device identity changed since discovery: ${uid(2)} is now 0x2`);
    fake.write(hcus(3));
    await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { what: 'idle again' });
  });

  t.test('a hung health tool: unknown at its deadline, killed, clients answered at once, recovery', async (t) => {
    const baseline = await xqueueCost(d);
    const before = fake.calls().filter(isHealthRun).length;
    fake.write([...hcus(3), 'hysmi hang 30']);
    await waitFor(async () => (await statuses(d)).every((s) => s === 'unknown'), { timeout: 15000, what: 'all unknown' });
    t.same((await info(d)).map((v) => v.monitoring_error), Array(3).fill('hy-smi --healthcheck timed out after 3000 ms'));
    const hung = fake.calls().filter(isHealthRun).slice(before).map((c) => Number(c.split(' ')[1]));
    t.ok(hung.length >= 1, 'the tool ran');
    await waitFor(() => !pidAlive(hung[0]!), { what: `hung hy-smi ${hung[0]} killed` });
    await checkResponsive(t, d, baseline, 3000);
    fake.write(hcus(3));
    await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { timeout: 15000, what: 'recovery' });
    t.ok(d.output.includes('device hcu:0 unknown: hy-smi --healthcheck timed out after 3000 ms'));
    t.ok(d.output.includes('device hcu:0 recovered: idle'));
  });
});
