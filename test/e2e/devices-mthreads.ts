// Moore Threads devices end to end (spec 5, 6.4, 9): the real daemon with `--backend mthreads`
// loads the fake MTML (test/fixtures/fake-mtml) through XLURM_MTML_LIBRARY. MTML has no process
// query: a GPU is busy while some process holds one of its device nodes open, so the fake names
// node files in a scratch directory (test/helpers/mtml.ts) and tests hold them open from real
// processes, which the daemon finds in the real /proc. Start-up, discovery failures and a process
// table that hides processes: devices-mthreads-startup.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SHOW_VISIBILITY, afterFullProbe, fakeDaemon, info, jobLog, statuses, waitMarker } from '../helpers/devices';
import { fakeLibrary, type FakeLibrary } from '../helpers/fixtures';
import { mtmlGpus, mttUuid as uuid } from '../helpers/mtml';
import { waitFor } from '../helpers/wait';

const { node, gpu, gpus, hold } = mtmlGpus(t);
const UUID_CALL = 'mtmlDeviceGetUUID';
const probes = (fake: FakeLibrary, devices: number) => afterFullProbe(fake, (c) => c === UUID_CALL, devices);
const row = (i: number, status: string, name = 'MTT S4000') => `mtt:${i}        ${status.padEnd(12)}-      ${name}\n`;
const HEADER = 'DEVICE       STATUS      JOB    NAME\n';

t.test('discovery, xinfo, allocation and visibility', async (t) => {
  const fake = fakeLibrary(t, 'mthreads', gpus(3));
  const { d, dir } = await fakeDaemon(t, [fake], { backend: 'mthreads' });

  t.test('xinfo text and json; status names the backend', async (t) => {
    const r = await d.run('xinfo', []);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, HEADER + row(0, 'idle') + row(1, 'idle') + row(2, 'idle'));
    t.same(await info(d), [0, 1, 2].map((i) => ({
      device: { kind: 'mthreads', id: i, name: 'MTT S4000', visible: uuid(i), npu: null, chip: null }, job: null, status: 'idle',
    })));
    t.same(((await d.request('status', {})) as any).result.backends, ['mthreads']);
  });

  t.test('jobs get MTHREADS_VISIBLE_DEVICES = UUIDs and MUSA_VISIBLE_DEVICES = indices; -1 elsewhere', async (t) => {
    const m = path.join(dir, 'm1');
    const a = await d.batch(`${SHOW_VISIBILITY}; ${waitMarker(m)}`, ['-g', '2'], { env: { MUSA_VISIBLE_DEVICES: '7' } });
    const ja = await d.waitState(a, 'RUNNING');
    t.same(ja.devices.map((x: any) => [x.kind, x.id]), [['mthreads', 0], ['mthreads', 1]]);
    t.same((await info(d)).map((v) => [v.status, v.job]), [['allocated', a], ['allocated', a], ['idle', null]]);
    const q = await d.run('xqueue', []);
    t.match(q.stdout, new RegExp(`\\n${a} +\\S+ +RUNNING +mtt:\\[0,1\\] `), q.stdout);
    const line = await waitFor(async () => (await jobLog(d, a)).trim());
    t.equal(line, `CUDA=-1 ASC=-1 MUSA=0,1 MT=${uuid(0)},${uuid(1)} MACA=-1 HIP=-1 ROCR=-1 ADI=unset`);
    fs.writeFileSync(m, '');
    await d.waitState(a, 'COMPLETED');

    for (const kind of ['mthreads', 'mtt']) {
      const b = await d.batch('echo "$MUSA_VISIBLE_DEVICES $MTHREADS_VISIBLE_DEVICES"', ['-i', '2,0', '--device', kind]);
      await d.waitState(b, 'COMPLETED');
      t.equal(await jobLog(d, b), `2,0 ${uuid(2)},${uuid(0)}\n`, `allocation order (--device ${kind})`);
    }
    const cpu = await d.run('xrun', ['-g', '0', 'sh', '-c', SHOW_VISIBILITY], { env: { MUSA_VISIBLE_DEVICES: '0' } });
    t.equal(cpu.stdout, 'CUDA=-1 ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=unset\n', 'a CPU job sees -1 everywhere');
    for (const [args, n] of [[['-g', '4'], 4], [['--device', 'nv'], 1]] as const) {
      const r = await d.run('xbatch', [...args, '--wrap', 'true']);
      t.equal(r.stderr, `xlurm: requested ${n} device(s), but no matching pool has enough devices\n`, args.join(' '));
    }
  });

  t.test('busy while a process outside xlurm holds a GPU node open; the job waits, then starts', async (t) => {
    const holder = await hold(node(1, 'render'));
    await waitFor(async () => (await statuses(d))[1] === 'busy', { what: 'mtt:1 busy' });
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'idle') + row(1, 'busy') + row(2, 'idle'));
    const id = await d.batch('echo "$MUSA_VISIBLE_DEVICES"', ['-i', '1']);
    await probes(fake, 3);
    t.equal((await d.job(id)).state, 'PENDING', 'waits while the GPU is busy');
    holder.kill('SIGKILL');
    await d.waitState(id, 'COMPLETED', 10000);
    t.equal(await jobLog(d, id), '1\n');
  });

  t.test("a job's own use of the nodes does not keep the GPU from the next job", async (t) => {
    const m = path.join(dir, 'm2');
    const a = await d.batch(`exec 3<${node(2)}; ${waitMarker(m)}`, ['-i', '2']);
    await d.waitState(a, 'RUNNING');
    const b = await d.batch('true', ['-i', '2']);
    fs.writeFileSync(m, '');
    await d.waitState(a, 'COMPLETED');
    await d.waitState(b, 'COMPLETED', 10000);
  });
});

t.test('occupancy or identity that cannot be established makes a GPU unknown', async (t) => {
  const fake = fakeLibrary(t, 'mthreads', gpus(2));
  const { d } = await fakeDaemon(t, [fake], { backend: 'mthreads' });

  t.test('a failing query: unknown with the driver error, no allocation, logged once, recovery', async (t) => {
    fake.write([...gpus(2), `fail ${UUID_CALL} 2 1`]);
    await waitFor(async () => (await statuses(d))[1] === 'unknown', { what: 'mtt:1 unknown' });
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'idle') + row(1, 'unknown') +
      '             error: mtmlDeviceGetUUID: Driver failure (2)\n');
    const id = await d.batch('true', ['-i', '1']);
    await probes(fake, 2);
    t.equal((await d.job(id)).state, 'PENDING', 'an unknown GPU is not allocated');
    fake.write(gpus(2));
    await d.waitState(id, 'COMPLETED', 10000);
    const lines = d.output.split('\n');
    t.equal(lines.filter((l) => l.endsWith('device mtt:1 unknown: mtmlDeviceGetUUID: Driver failure (2)')).length, 1);
    t.equal(lines.filter((l) => l.endsWith('device mtt:1 recovered: idle')).length, 1);
  });

  t.test('no node to watch, or a node missing on the host: unknown, never idle', async (t) => {
    fake.write([...gpu(0), `device 1 ${uuid(1)} "MTT S4000"`]);
    await waitFor(async () => (await statuses(d))[1] === 'unknown', { what: 'mtt:1 unknown' });
    t.equal((await info(d))[1].monitoring_error,
      'occupancy unknown: MTML has no process query and reports no device node to watch (mtmlDeviceGetGpuPath: Not supported (4))');
    fake.write([...gpu(0), `device 1 ${uuid(1)} "MTT S4000"`, `node 1 gpu ${path.join(path.dirname(node(0)), 'gone')}`]);
    await waitFor(async () => /cannot stat/.test((await info(d))[1].monitoring_error ?? ''), { what: 'missing node' });
    t.equal((await info(d))[1].monitoring_error, `occupancy unknown: cannot stat ${path.join(path.dirname(node(0)), 'gone')}: No such file or directory`);
    t.equal((await statuses(d))[0], 'idle');
    fake.write(gpus(2));
    await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { what: 'idle again' });
  });

  t.test('a changed UUID is unknown', async (t) => {
    fake.write([...gpu(0), ...gpu(1).map((l) => l.replace(uuid(1), 'f00d'))]);
    await waitFor(async () => (await statuses(d))[1] === 'unknown', { what: 'mtt:1 unknown' });
    t.equal((await info(d))[1].monitoring_error, `device identity changed since discovery: ${uuid(1)} is now f00d`);
    fake.write(gpus(2));
    await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { what: 'idle again' });
  });

  t.test('a hung call: every GPU unknown, then recovery', async (t) => {
    fake.write([...gpus(2), `hang ${UUID_CALL} 30 0`]);
    await waitFor(async () => (await statuses(d))[0] === 'unknown', { timeout: 10000, what: 'mtt:0 unknown' });
    t.same(await statuses(d), ['unknown', 'unknown']);
    t.equal((await info(d))[0].monitoring_error, 'mtmlDeviceGetUUID timed out after 1500 ms');
    t.notOk(fake.calls().some((c) => c.startsWith('CONCURRENT')), 'no second call while one is hung');
    fake.write(gpus(2));
    await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { timeout: 10000, what: 'recovery' });
  });
});
