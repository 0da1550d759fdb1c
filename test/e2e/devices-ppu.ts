// T-Head PPU devices end to end (spec 5, 6.4, 9): the real daemon with `--backend ppu` loads the
// fake HGML (test/fixtures/fake-hgml, which needs the fake libuki.so beside it) through
// XLURM_HGML_LIBRARY; tests rewrite the fake's state file while the daemon runs and drive
// everything through the real CLIs. Start-up and discovery failures: devices-ppu-startup.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  SHOW_VISIBILITY, afterFullProbe, checkResponsive, fakeDaemon, info, jobLog, statuses, waitMarker, xqueueCost,
} from '../helpers/devices';
import { fakeLibrary, type FakeLibrary } from '../helpers/fixtures';
import { waitFor } from '../helpers/wait';

const uuid = (i: number) => `GPU-019ea108-0000-4000-8000-00000000000${i}`;
const ppus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} ${uuid(i)} "PPU-ZW810E"`);
const PROCS = 'hgmlDeviceGetComputeRunningProcesses_v3';
const probes = (fake: FakeLibrary, devices: number) => afterFullProbe(fake, (c) => c === PROCS, devices);
const row = (i: number, status: string, name = 'PPU-ZW810E') => `ppu:${i}        ${status.padEnd(12)}-      ${name}\n`;
const HEADER = 'DEVICE       STATUS      JOB    NAME\n';

t.test('discovery, xinfo, allocation and visibility', async (t) => {
  const fake = fakeLibrary(t, 'ppu', ppus(3));
  const { d, dir } = await fakeDaemon(t, [fake], { backend: 'ppu' });

  t.test('xinfo text and json; status names the backend', async (t) => {
    const r = await d.run('xinfo', []);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, HEADER + row(0, 'idle') + row(1, 'idle') + row(2, 'idle'));
    t.same(await info(d), [0, 1, 2].map((i) => ({
      device: { kind: 'ppu', id: i, name: 'PPU-ZW810E', visible: uuid(i), npu: null, chip: null }, job: null, status: 'idle',
    })));
    t.same(((await d.request('status', {})) as any).result.backends, ['ppu']);
    t.ok(fake.calls().includes('hgmlInit_v2'), 'HGML v2 initialisation');
  });

  t.test('jobs get CUDA_VISIBLE_DEVICES = PPU UUIDs in allocation order; nothing else', async (t) => {
    const m = path.join(dir, 'm1');
    const show = `${SHOW_VISIBILITY}; echo "PPU=\${PPU_VISIBLE_DEVICES-unset}"`;
    const a = await d.batch(`${show}; ${waitMarker(m)}`, ['-g', '2']);
    const ja = await d.waitState(a, 'RUNNING');
    t.same(ja.devices.map((x: any) => [x.kind, x.id]), [['ppu', 0], ['ppu', 1]]);
    t.same((await info(d)).map((v) => [v.status, v.job]), [['allocated', a], ['allocated', a], ['idle', null]]);
    const q = await d.run('xqueue', []);
    t.match(q.stdout, new RegExp(`\\n${a} +\\S+ +RUNNING +ppu:\\[0,1\\] `), q.stdout);
    const line = await waitFor(async () => (await jobLog(d, a)).trim());
    t.equal(line, `CUDA=${uuid(0)},${uuid(1)} ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=unset\nPPU=unset`);
    fs.writeFileSync(m, '');
    await d.waitState(a, 'COMPLETED');

    const b = await d.batch('echo "$CUDA_VISIBLE_DEVICES"', ['-i', '2,0', '--device', 'ppu']);
    await d.waitState(b, 'COMPLETED');
    t.equal(await jobLog(d, b), `${uuid(2)},${uuid(0)}\n`);
    const r = await d.run('xbatch', ['-g', '4', '--wrap', 'true']);
    t.equal(r.stderr, 'xlurm: requested 4 device(s), but no matching pool has enough devices\n');
  });

  t.test('busy while a foreign process runs on it; the job waits, then starts', async (t) => {
    fake.write([...ppus(3), 'procs 1 4242 4343']);
    await waitFor(async () => (await statuses(d))[1] === 'busy', { what: 'ppu:1 busy' });
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'idle') + row(1, 'busy') + row(2, 'idle'));
    const id = await d.batch('echo "$CUDA_VISIBLE_DEVICES"', ['-i', '1']);
    await probes(fake, 3);
    t.equal((await d.job(id)).state, 'PENDING', 'waits while the PPU is busy');
    fake.write(ppus(3));
    await d.waitState(id, 'COMPLETED', 10000);
    t.equal(await jobLog(d, id), `${uuid(1)}\n`);
  });

  t.test('process rows are decoded whatever their size (16/24/32 bytes); a corrupt answer is unknown', async (t) => {
    for (const stride of [32, 16]) {
      fake.write([...ppus(3), `stride ${stride}`, 'procs 2 77 78']);
      await waitFor(async () => (await statuses(d))[2] === 'busy', { what: `ppu:2 busy (stride ${stride})` });
      fake.write([...ppus(3), `stride ${stride}`]);
      await waitFor(async () => (await statuses(d))[2] === 'idle', { what: `ppu:2 idle (stride ${stride})` });
    }
    fake.write([...ppus(3), 'procs 2 0']);
    await waitFor(async () => (await statuses(d))[2] === 'unknown', { what: 'ppu:2 unknown' });
    t.equal((await info(d))[2].monitoring_error, 'hgmlDeviceGetComputeRunningProcesses: invalid answer (the rows match no known layout)');
    fake.write(ppus(3));
    await waitFor(async () => (await statuses(d))[2] === 'idle', { what: 'ppu:2 idle again' });
  });
});

t.test('failed queries, changed identity and hung calls make PPUs unknown', async (t) => {
  const fake = fakeLibrary(t, 'ppu', ppus(2));
  const { d } = await fakeDaemon(t, [fake], { backend: 'ppu' });

  t.test('a failing query: unknown with the driver error, no allocation, logged once, recovery', async (t) => {
    fake.write([...ppus(2), 'fail hgmlDeviceGetComputeRunningProcesses 15 1']);
    await waitFor(async () => (await statuses(d))[1] === 'unknown', { what: 'ppu:1 unknown' });
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'idle') + row(1, 'unknown') +
      '             error: hgmlDeviceGetComputeRunningProcesses: GPU is lost (15)\n');
    const id = await d.batch('true', ['-i', '1']);
    await probes(fake, 2);
    t.equal((await d.job(id)).state, 'PENDING', 'an unknown PPU is not allocated');
    fake.write(ppus(2));
    await d.waitState(id, 'COMPLETED', 10000);
    const lines = d.output.split('\n');
    t.equal(lines.filter((l) => l.endsWith('device ppu:1 unknown: hgmlDeviceGetComputeRunningProcesses: GPU is lost (15)')).length, 1);
    t.equal(lines.filter((l) => l.endsWith('device ppu:1 recovered: idle')).length, 1);
  });

  t.test('a changed UUID is unknown', async (t) => {
    fake.write([ppus(2)[0]!, 'device 1 GPU-0ther "PPU-ZW810E"']);
    await waitFor(async () => (await statuses(d))[1] === 'unknown', { what: 'ppu:1 unknown' });
    t.equal((await info(d))[1].monitoring_error, `device identity changed since discovery: ${uuid(1)} is now GPU-0ther`);
    fake.write(ppus(2));
    await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { what: 'idle again' });
  });

  t.test('a hung call: every PPU unknown, clients answered at once, recovery', async (t) => {
    const baseline = await xqueueCost(d);
    fake.write([...ppus(2), `hang ${PROCS} 30 0`]);
    await waitFor(async () => (await statuses(d))[0] === 'unknown', { timeout: 10000, what: 'ppu:0 unknown' });
    t.same(await statuses(d), ['unknown', 'unknown']);
    t.equal((await info(d))[0].monitoring_error, 'hgmlDeviceGetComputeRunningProcesses timed out after 1500 ms');
    await checkResponsive(t, d, baseline, 3000);
    t.notOk(fake.calls().some((c) => c.startsWith('CONCURRENT')), 'no second call while one is hung');
    fake.write(ppus(2));
    await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { timeout: 10000, what: 'recovery' });
  });
});
