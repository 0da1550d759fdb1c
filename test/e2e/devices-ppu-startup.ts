// T-Head PPU start-up (spec 9.2, 9.3): `--backend ppu` stops on any discovery failure with a
// clear message, `--backend auto` skips a failing HGML and logs why; the fake HGML
// (test/fixtures/fake-hgml) needs its libuki.so, and a variant lacks the optional symbols.
// The running behaviour is in devices-ppu.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DAEMON_MAIN, baseEnv } from '../helpers/env';
import { runProcess, startDaemon, tempHome } from '../helpers/daemon';
import { NO_VENDOR_LIBRARIES, info } from '../helpers/devices';
import { fakeLibrary } from '../helpers/fixtures';

const uuid = (i: number) => `GPU-019ea108-0000-4000-8000-00000000000${i}`;
const ppus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} ${uuid(i)} "PPU-ZW810E"`);
const HEADER = 'DEVICE       STATUS      JOB    NAME\n';

/** Run the daemon in the foreground with --backend ppu and these variables; it must fail. */
async function failedStart(env: Record<string, string>) {
  return runProcess(process.execPath, [DAEMON_MAIN, 'daemon', '--backend', 'ppu'], { env: baseEnv({ XLURM_HOME: tempHome(t), ...env }) });
}

const fake = fakeLibrary(t, 'ppu', ppus(2));

t.test('discovery failures stop --backend ppu with a clear message', async (t) => {
  let r = await failedStart({ ...fake.env, XLURM_HGML_LIBRARY: '/nonexistent/libhgml.so' });
  t.equal(r.code, 1);
  t.equal(r.stderr, 'xlurm: ppu discovery: cannot load library: /nonexistent/libhgml.so: cannot open shared object file: No such file or directory\n');

  // libhgml.so without its libuki.so beside it (and none on the loader's path)
  const lonely = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-hgml-'));
  t.teardown(() => fs.rmSync(lonely, { recursive: true, force: true }));
  fs.copyFileSync(fake.library, path.join(lonely, 'libhgml.so'));
  r = await failedStart({ ...fake.env, XLURM_HGML_LIBRARY: path.join(lonely, 'libhgml.so') });
  t.equal(r.stderr, 'xlurm: ppu discovery: cannot load library: libuki.so: cannot open shared object file: No such file or directory\n');

  fake.write([...ppus(1), 'fail hgmlInit 9']);
  r = await failedStart(fake.env);
  t.equal(r.stderr, 'xlurm: ppu discovery: hgmlInit_v2: Driver Not Loaded (9)\n');
  fake.write(ppus(2));
});

t.test('a PPU that cannot be identified is left out and logged', async (t) => {
  fake.write([...ppus(2), 'fail hgmlDeviceGetUUID 15 0']);
  const d = await startDaemon(t, { backend: 'ppu', env: fake.env });
  t.same((await info(d)).map((v) => v.device.id), [1]);
  t.match(d.output, /ppu discovery: device 0 left out: hgmlDeviceGetUUID: GPU is lost \(15\)/);
  fake.write(ppus(2));
});

t.test('auto skips a failing HGML and logs why', async (t) => {
  const d = await startDaemon(t, { backend: 'auto', env: { ...NO_VENDOR_LIBRARIES, ...fake.env, XLURM_HGML_LIBRARY: '/nonexistent/libhgml.so' } });
  t.match(d.output, /ppu discovery: cannot load library: \/nonexistent\/libhgml\.so/);
  t.same(await info(d), []);
  const ok = await startDaemon(t, { backend: 'auto', env: { ...NO_VENDOR_LIBRARIES, ...fake.env } });
  t.same((await info(ok)).map((v) => `${v.device.kind}:${v.device.id}`), ['ppu:0', 'ppu:1']);
});

t.test('a library without hgmlInit_v2 and hgmlDeviceGetName: hgmlInitWithFlags(0), default name', async (t) => {
  const minimal = fakeLibrary(t, 'ppu-minimal', ppus(1));
  const d = await startDaemon(t, { backend: 'ppu', env: minimal.env });
  t.equal((await d.run('xinfo', [])).stdout, HEADER + 'ppu:0        idle        -      T-Head PPU\n');
  await d.stop();
  const calls = minimal.calls();
  t.equal(calls.filter((c) => c === 'hgmlInitWithFlags').length, 1);
  t.equal(calls.filter((c) => c === 'hgmlShutdown').length, 1, 'shut down once per init');
});
