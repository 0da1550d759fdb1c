// MetaX devices end to end (spec 5, 6.4, 9): the real daemon with `--backend metax` loads the fake
// MXSML (test/fixtures/fake-mxsml) through XLURM_MXSML_LIBRARY; tests rewrite the fake's state
// file while the daemon runs and drive everything through the real CLIs. The fake's physical
// gpuIds never equal the indices, so a backend matching process rows on the wrong id would see
// every GPU idle. Start-up and discovery failures: devices-metax-startup.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SHOW_VISIBILITY, afterFullProbe, fakeDaemon, info, jobLog, statuses, waitMarker } from '../helpers/devices';
import { fakeLibrary, type FakeLibrary } from '../helpers/fixtures';
import { waitFor } from '../helpers/wait';

const uuid = (i: number) => `GPU-3e7a0000-0000-4000-8000-00000000000${i}`;
const gpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} ${uuid(i)} "MXC500"`);
const PROCS = 'mxSmlGetSingleGpuProcess_v3';
const probes = (fake: FakeLibrary, devices: number) => afterFullProbe(fake, (c) => c === PROCS, devices);
const row = (i: number, status: string, name = 'MXC500') => `mx:${i}         ${status.padEnd(12)}-      ${name}\n`;
const HEADER = 'DEVICE       STATUS      JOB    NAME\n';

t.test('discovery, xinfo, allocation and visibility', async (t) => {
  const fake = fakeLibrary(t, 'metax', gpus(3));
  const { d, dir } = await fakeDaemon(t, [fake], { backend: 'metax' });

  t.test('xinfo text and json; status names the backend', async (t) => {
    const r = await d.run('xinfo', []);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, HEADER + row(0, 'idle') + row(1, 'idle') + row(2, 'idle'));
    t.same(await info(d), [0, 1, 2].map((i) => ({
      device: { kind: 'metax', id: i, name: 'MXC500', visible: uuid(i), npu: null, chip: null }, job: null, status: 'idle',
    })));
    t.same(((await d.request('status', {})) as any).result.backends, ['metax']);
  });

  t.test('jobs get CUDA_VISIBLE_DEVICES and MACA_VISIBLE_DEVICES = indices; -1 elsewhere', async (t) => {
    const m = path.join(dir, 'm1');
    const a = await d.batch(`${SHOW_VISIBILITY}; ${waitMarker(m)}`, ['-g', '2'], { env: { CUDA_VISIBLE_DEVICES: '7', MACA_VISIBLE_DEVICES: '7' } });
    const ja = await d.waitState(a, 'RUNNING');
    t.same(ja.devices.map((x: any) => [x.kind, x.id]), [['metax', 0], ['metax', 1]]);
    t.same((await info(d)).map((v) => [v.status, v.job]), [['allocated', a], ['allocated', a], ['idle', null]]);
    const q = await d.run('xqueue', []);
    t.match(q.stdout, new RegExp(`\\n${a} +\\S+ +RUNNING +mx:\\[0,1\\] `), q.stdout);
    const line = await waitFor(async () => (await jobLog(d, a)).trim());
    t.equal(line, 'CUDA=0,1 ASC=-1 MUSA=-1 MT=-1 MACA=0,1 HIP=-1 ROCR=-1 ADI=unset');
    fs.writeFileSync(m, '');
    await d.waitState(a, 'COMPLETED');

    for (const kind of ['metax', 'mx']) {
      const b = await d.batch('echo "$CUDA_VISIBLE_DEVICES $MACA_VISIBLE_DEVICES"', ['-i', '2,0', '--device', kind]);
      await d.waitState(b, 'COMPLETED');
      t.equal(await jobLog(d, b), '2,0 2,0\n', `allocation order (--device ${kind})`);
    }
    const r = await d.run('xbatch', ['-g', '4', '--wrap', 'true']);
    t.equal(r.stderr, 'xlurm: requested 4 device(s), but no matching pool has enough devices\n');
  });

  t.test('busy while a foreign compute process runs on it (rows matched by index); the job waits', async (t) => {
    fake.write([...gpus(3), 'proc 4343 0,2']);
    await waitFor(async () => (await statuses(d)).join() === 'busy,idle,busy', { what: 'mx:0 and mx:2 busy' });
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'busy') + row(1, 'idle') + row(2, 'busy'));
    const id = await d.batch('echo "$MACA_VISIBLE_DEVICES"', ['-i', '2']);
    await probes(fake, 3);
    t.equal((await d.job(id)).state, 'PENDING', 'waits while the GPU is busy');
    fake.write(gpus(3));
    await d.waitState(id, 'COMPLETED', 10000);
    t.equal(await jobLog(d, id), '2\n');
  });
});

t.test('unavailable GPUs are unhealthy; failed or invalid answers and changed UUIDs are unknown', async (t) => {
  const fake = fakeLibrary(t, 'metax', gpus(2));
  const { d } = await fakeDaemon(t, [fake], { backend: 'metax' });

  t.test('an unavailable GPU is unhealthy and not allocated until it is available again', async (t) => {
    fake.write([...gpus(2), 'unavailable 1 3 "PCIe link down"']);
    await waitFor(async () => (await statuses(d))[1] === 'unhealthy', { what: 'mx:1 unhealthy' });
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'idle') + row(1, 'unhealthy'));
    const id = await d.batch('true', ['-i', '1']);
    await probes(fake, 1);
    t.equal((await d.job(id)).state, 'PENDING', 'an unhealthy GPU is not allocated');
    fake.write([...gpus(2), 'state 1 0']);
    await probes(fake, 1);
    t.equal((await statuses(d))[1], 'unhealthy', 'mxSmlGetDeviceState 0 is unavailable too');
    fake.write(gpus(2));
    await d.waitState(id, 'COMPLETED', 10000);
    t.equal(d.output.split('\n').filter((l) => l.endsWith('device mx:1 unhealthy')).length, 1, 'logged once');
  });

  t.test('a failing query: unknown with the driver error, logged once, recovery', async (t) => {
    fake.write([...gpus(2), `fail ${PROCS} 8 1`]);
    await waitFor(async () => (await statuses(d))[1] === 'unknown', { what: 'mx:1 unknown' });
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'idle') + row(1, 'unknown') +
      `             error: ${PROCS}: Permission denied (8)\n`);
    fake.write(gpus(2));
    await waitFor(async () => (await statuses(d))[1] === 'idle', { what: 'mx:1 idle again' });
    const lines = d.output.split('\n');
    t.equal(lines.filter((l) => l.endsWith(`device mx:1 unknown: ${PROCS}: Permission denied (8)`)).length, 1);
    t.equal(lines.filter((l) => l.endsWith('device mx:1 recovered: idle')).length, 1);
  });

  t.test('an invalid process answer is unknown, never idle', async (t) => {
    fake.write([...gpus(2), 'proc 0 0']);
    await waitFor(async () => (await statuses(d))[0] === 'unknown', { what: 'mx:0 unknown' });
    t.equal((await info(d))[0].monitoring_error, `${PROCS}: invalid answer (row 0 has PID 0)`);
    fake.write(gpus(2));
    await waitFor(async () => (await statuses(d))[0] === 'idle', { what: 'mx:0 idle again' });
  });

  t.test('a changed UUID is unknown', async (t) => {
    fake.write([gpus(2)[0]!, 'device 1 GPU-0ther "MXC500"']);
    await waitFor(async () => (await statuses(d))[1] === 'unknown', { what: 'mx:1 unknown' });
    t.equal((await info(d))[1].monitoring_error, `device identity changed since discovery: ${uuid(1)} is now GPU-0ther`);
    fake.write(gpus(2));
    await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { what: 'idle again' });
  });
});
