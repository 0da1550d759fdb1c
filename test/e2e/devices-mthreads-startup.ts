// Moore Threads start-up (spec 9.2, 9.3) and the process table (spec 9.4): `--backend mthreads`
// stops on any discovery failure with a clear message, `--backend auto` skips a failing MTML and
// logs why; a process table that cannot show every process (XLURM_MTML_PROC_ROOT pointing at one
// whose PID 2 is not a kernel thread, as in a container's own /proc) makes every GPU unknown.
// The running behaviour is in devices-mthreads.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DAEMON_MAIN, baseEnv } from '../helpers/env';
import { runProcess, startDaemon, tempHome } from '../helpers/daemon';
import { NO_VENDOR_LIBRARIES, afterFullProbe, fakeDaemon, info, statuses } from '../helpers/devices';
import { fakeLibrary } from '../helpers/fixtures';
import { mtmlGpus, mttUuid as uuid } from '../helpers/mtml';
import { waitFor } from '../helpers/wait';

const { gpu, gpus } = mtmlGpus(t);
const UUID_CALL = 'mtmlDeviceGetUUID';

t.test('a process table that hides processes (another PID namespace) makes every GPU unknown', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-mtt-proc-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  fs.mkdirSync(path.join(root, '2'));
  fs.writeFileSync(path.join(root, '2/stat'), '2 (bash) S 1 2 2 0 -1 4194560 0 0 0 0\n'); // no PF_KTHREAD
  const fake = fakeLibrary(t, 'mthreads', gpus(2));
  const { d } = await fakeDaemon(t, [fake], { backend: 'mthreads', env: { XLURM_MTML_PROC_ROOT: root } });
  await waitFor(async () => (await statuses(d)).every((s) => s === 'unknown'), { what: 'all unknown' });
  t.equal((await info(d))[0].monitoring_error, `occupancy unknown: ${root} is not the host's process table ` +
    '(its PID 2 is not a kernel thread): processes in other PID namespaces cannot be seen');
  const r = await d.run('xbatch', ['-g', '1', '--wrap', 'true']);
  const id = Number(r.stdout.trim());
  await afterFullProbe(fake, (c) => c === UUID_CALL, 2);
  t.equal((await d.job(id)).state, 'PENDING', 'nothing is allocated');
});

t.test('start-up: --backend mthreads fails with a clear message; auto skips and logs', async (t) => {
  const fake = fakeLibrary(t, 'mthreads', gpus(2));
  const failedStart = (env: Record<string, string>, backend = 'mthreads') =>
    runProcess(process.execPath, [DAEMON_MAIN, 'daemon', '--backend', backend], { env: baseEnv({ XLURM_HOME: tempHome(t), ...fake.env, ...env }) });

  let r = await failedStart({ XLURM_MTML_LIBRARY: '' });
  t.equal(r.stderr, 'xlurm: mtt discovery: cannot load library: libmtml.so: cannot open shared object file: No such file or directory\n',
    "without the override: the loader's libmtml.so");
  r = await failedStart({ XLURM_MTML_LIBRARY: '/nonexistent/libmtml.so' });
  t.equal(r.code, 1);
  t.equal(r.stderr, 'xlurm: mtt discovery: cannot load library: /nonexistent/libmtml.so: cannot open shared object file: No such file or directory\n');
  r = await failedStart({ XLURM_MTML_LIBRARY: 'libmtml.so' }, 'mtt');
  t.equal(r.stderr, 'xlurm: mtt discovery: XLURM_MTML_LIBRARY must be an absolute path: libmtml.so\n');
  fake.write([...gpus(1), 'fail mtmlLibraryInit 1']);
  r = await failedStart({});
  t.equal(r.stderr, 'xlurm: mtt discovery: mtmlLibraryInit: Driver not loaded (1)\n');
  fake.write([]);
  r = await failedStart({});
  t.equal(r.stderr, 'xlurm: mtt discovery: no compute devices discovered\n');
  fake.write([...gpus(1), ...gpu(1).map((l) => l.replace(uuid(1), uuid(0)))]);
  r = await failedStart({});
  t.equal(r.stderr, 'xlurm: mtt discovery: duplicate device IDs in inventory\n');

  fake.write([...gpus(2), `fail ${UUID_CALL} 2 0`]);
  const left = await startDaemon(t, { backend: 'mthreads', env: fake.env });
  t.same((await info(left)).map((v) => v.device.id), [1]);
  t.match(left.output, /mtt discovery: device 0 left out: mtmlDeviceGetUUID: Driver failure \(2\)/);
  await left.stop();

  fake.write([...gpus(1), 'fail mtmlLibraryInit 1']);
  const skipped = await startDaemon(t, { backend: 'auto', env: { ...NO_VENDOR_LIBRARIES, ...fake.env } });
  t.match(skipped.output, /mtt discovery: mtmlLibraryInit: Driver not loaded \(1\)/);
  t.same(await info(skipped), []);
  fake.write(gpus(2));
  const auto = await startDaemon(t, { backend: 'auto', env: { ...NO_VENDOR_LIBRARIES, ...fake.env } });
  t.same((await info(auto)).map((v) => `${v.device.kind}:${v.device.id}`), ['mthreads:0', 'mthreads:1']);
  await auto.stop();
  const calls = fake.calls();
  t.equal(calls.filter((c) => c === 'mtmlLibraryShutDown').length, calls.filter((c) => c === 'mtmlLibraryInit').length - 2,
    'shut down once per successful init (the two failed inits have nothing to shut down)');
  t.equal(calls.filter((c) => c === 'mtmlLibraryInitDeviceByIndex').length, calls.filter((c) => c === 'mtmlLibraryFreeDevice').length,
    'every device object freed');
});
