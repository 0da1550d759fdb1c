// MetaX start-up (spec 9.2, 9.3): the library search list, the XLURM_MXSML_LIBRARY override,
// discovery failures that stop `--backend metax`, virtual functions left out, and `--backend auto`
// skipping a failing vendor (here Moore Threads or MetaX) while using the others.
// The running behaviour is in devices-metax.ts.
import t from 'tap';
import { DAEMON_MAIN, baseEnv } from '../helpers/env';
import { runProcess, startDaemon, tempHome } from '../helpers/daemon';
import { NO_VENDOR_LIBRARIES, info } from '../helpers/devices';
import { fakeLibrary } from '../helpers/fixtures';

type Tap = { equal(a: unknown, b: unknown, msg?: string): unknown };

const uuid = (i: number) => `GPU-3e7a0000-0000-4000-8000-00000000000${i}`;
const gpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} ${uuid(i)} "MXC500"`);
const fake = fakeLibrary(t, 'metax', gpus(2));

/** Run the daemon in the foreground with --backend metax and these variables; it must fail. */
async function failedStart(t: Tap, env: Record<string, string>, backend = 'metax'): Promise<string> {
  const r = await runProcess(process.execPath, [DAEMON_MAIN, 'daemon', '--backend', backend], { env: baseEnv({ XLURM_HOME: tempHome(t), ...env }) });
  t.equal(r.code, 1, `exit status (${r.stderr.trim()})`);
  return r.stderr;
}

t.test('discovery failures stop --backend metax with a clear message', async (t) => {
  const missing = (p: string) => `${p}: cannot open shared object file: No such file or directory`;
  t.equal(await failedStart(t, {}), `xlurm: mx discovery: cannot load library: ${[
    '/opt/mxdriver/lib/libmxsml.so', '/opt/maca/lib/libmxsml.so', '/opt/mxn100/lib/libmxsml.so', 'libmxsml.so',
  ].map(missing).join('; ')}\n`, 'the search list, in order, then the loader');
  t.equal(await failedStart(t, { ...fake.env, XLURM_MXSML_LIBRARY: '/nonexistent/libmxsml.so' }),
    `xlurm: mx discovery: cannot load library: ${missing('/nonexistent/libmxsml.so')}\n`, 'an override disables the search');
  t.equal(await failedStart(t, { ...fake.env, XLURM_MXSML_LIBRARY: 'libmxsml.so' }, 'mx'),
    'xlurm: mx discovery: XLURM_MXSML_LIBRARY must be an absolute path: libmxsml.so\n');
  const mtml = fakeLibrary(t, 'mthreads', []);
  t.equal(await failedStart(t, { ...fake.env, XLURM_MXSML_LIBRARY: mtml.library }),
    `xlurm: mx discovery: ${mtml.library} does not export mxSmlInit (not an MXSML library?)\n`);
  fake.write([...gpus(1), 'fail mxSmlInit 26']);
  t.equal(await failedStart(t, fake.env), 'xlurm: mx discovery: mxSmlInit: Unknown error (26)\n');
  fake.write([]);
  t.equal(await failedStart(t, fake.env), 'xlurm: mx discovery: mxSmlInit: No device (2)\n');
  fake.write([`vf 0 ${uuid(0)} VF`, `device 1 ${uuid(1)} MXC500`, 'fail mxSmlGetDeviceInfo 1 1']);
  const r = await failedStart(t, fake.env);
  t.match(r, /mx discovery: device 0 left out: a virtual function \(VF\); the physical GPUs are managed\n.*mx discovery: device 1 left out: mxSmlGetDeviceInfo: Failure \(1\)\n/s,
    'a VF is left out while another device might be physical');
  t.match(r, /\nxlurm: mx discovery: no compute devices discovered\n$/);
  fake.write(gpus(2));
});

t.test('GPUs that cannot be identified and VFs beside physical GPUs are left out and logged', async (t) => {
  fake.write([...gpus(2), `vf 2 ${uuid(7)} "MXC500 VF"`, `device 3 ${uuid(3)} MXC500`, 'fail mxSmlGetDeviceInfo 6 0']);
  const d = await startDaemon(t, { backend: 'metax', env: fake.env });
  t.same((await info(d)).map((v) => v.device.id), [1, 3]);
  t.match(d.output, /mx discovery: device 0 left out: mxSmlGetDeviceInfo: Invalid device id \(6\)/);
  t.match(d.output, /mx discovery: device 2 left out: a virtual function \(VF\); the physical GPUs are managed/);
  fake.write(gpus(2));
});

t.test('auto skips a failing vendor, logs why, and uses the others', async (t) => {
  const mtml = fakeLibrary(t, 'mthreads', ['device 0 5e1ec7ed-0 "MTT S4000"', 'fail mtmlLibraryInit 1']);
  const d = await startDaemon(t, { backend: 'auto', env: { ...NO_VENDOR_LIBRARIES, ...mtml.env, ...fake.env } });
  t.match(d.output, /mtt discovery: mtmlLibraryInit: Driver not loaded \(1\)/);
  t.same((await info(d)).map((v) => `${v.device.kind}:${v.device.id}`), ['metax:0', 'metax:1']);
  t.same(((await d.request('status', {})) as any).result.backends, ['metax']);

  fake.write([...gpus(1), 'fail mxSmlInit 1']);
  const none = await startDaemon(t, { backend: 'auto', env: { ...NO_VENDOR_LIBRARIES, ...fake.env } });
  t.match(none.output, /mx discovery: mxSmlInit: Failure \(1\)/);
  t.same(await info(none), []);
  fake.write(gpus(2));
});
