// Hygon HCU start-up (spec 9.2, 9.3): the rocm_smi library and the hy-smi health tool are found
// from the daemon's environment at start (override, fixed paths, then the daemon's PATH, never a
// job's); `--backend hcu` stops on any discovery failure with a clear message, `--backend auto`
// skips a failing HCU and logs why. The running behaviour is in devices-hcu.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DAEMON_MAIN, baseEnv } from '../helpers/env';
import { runProcess, startDaemon, tempHome } from '../helpers/daemon';
import { NO_VENDOR_LIBRARIES, afterFullProbe, info, statuses } from '../helpers/devices';
import { fakeLibrary, FAKE_HY_SMI } from '../helpers/fixtures';

const hcus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} 0x5a5e00000000000${i} "Hygon K100_AI"`);
const fake = fakeLibrary(t, 'hcu', hcus(2));
const { XLURM_HCU_HEALTH_TOOL: _tool, ...noTool } = fake.env;
/** A PATH without any hy-smi (the fixed path /opt/dtk/.hyhal/bin/hy-smi does not exist here). */
const BARE_PATH = '/usr/local/bin:/usr/bin:/bin';

/** A directory holding an executable `hy-smi` (the fake, or a script answering every HCU `Unhealthy`). */
function toolDir(unhealthy = false): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-hysmi-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  if (unhealthy) {
    fs.writeFileSync(path.join(dir, 'hy-smi'), '#!/bin/sh\nfor i in 0 1; do echo "HCU[$i] : Bus Id : 0000:0$i:00.0 : Unhealthy"; done\n', { mode: 0o755 });
  } else {
    fs.symlinkSync(FAKE_HY_SMI, path.join(dir, 'hy-smi'));
  }
  return dir;
}

async function failedStart(env: Record<string, string>) {
  const r = await runProcess(process.execPath, [DAEMON_MAIN, 'daemon', '--backend', 'hcu'], { env: { ...baseEnv({ XLURM_HOME: tempHome(t) }), ...env } });
  t.equal(r.code, 1);
  return r.stderr;
}

t.test('discovery failures stop --backend hcu with a clear message', async (t) => {
  t.equal(await failedStart({ ...fake.env, XLURM_HCU_SMI_LIBRARY: '/nonexistent/librocm_smi64.so' }),
    'xlurm: hcu discovery: cannot load library: /nonexistent/librocm_smi64.so: cannot open shared object file: No such file or directory\n');
  fake.write([...hcus(2), 'fail rsmi_init 8']);
  t.equal(await failedStart(fake.env), 'xlurm: hcu discovery: rsmi_init: RSMI_STATUS_INIT_ERROR (8)\n');
  fake.write(hcus(2));
  t.equal(await failedStart({ ...fake.env, XLURM_HCU_HEALTH_TOOL: '/nonexistent/hy-smi' }),
    'xlurm: hcu discovery: XLURM_HCU_HEALTH_TOOL is not an executable file: /nonexistent/hy-smi\n');
  t.equal(await failedStart({ ...fake.env, XLURM_HCU_HEALTH_TOOL: 'hy-smi' }),
    'xlurm: hcu discovery: XLURM_HCU_HEALTH_TOOL must be an absolute path: hy-smi\n');
  t.equal(await failedStart({ ...noTool, PATH: BARE_PATH }),
    "xlurm: hcu discovery: health tool hy-smi not found (tried /opt/dtk/.hyhal/bin/hy-smi and the daemon's PATH); set XLURM_HCU_HEALTH_TOOL\n");
});

t.test("hy-smi from the daemon's PATH; a job's PATH is never used", async (t) => {
  const dir = toolDir();
  const d = await startDaemon(t, { backend: 'hcu', env: { ...noTool, PATH: `relative/bin:${dir}:${BARE_PATH}` } });
  t.match(d.output, `hcu: health from ${path.join(dir, 'hy-smi')} --healthcheck`);
  t.same(await statuses(d), ['idle', 'idle']);
  const bad = toolDir(true);
  const r = await d.run('xrun', ['-g', '2', '--', 'sh', '-c', 'echo "$ROCR_VISIBLE_DEVICES"'], { env: { PATH: `${bad}:${BARE_PATH}` } });
  t.equal(r.stdout, '0,1\n', r.stderr);
  await afterFullProbe(fake, (c) => c.startsWith('hy-smi '), 1);
  t.same(await statuses(d), ['idle', 'idle'], 'health still from the daemon\'s hy-smi');
});

t.test('auto skips a failing HCU (library or health tool) and logs why', async (t) => {
  const d = await startDaemon(t, { backend: 'auto', env: { ...NO_VENDOR_LIBRARIES, ...noTool, PATH: BARE_PATH } });
  t.match(d.output, /hcu discovery: health tool hy-smi not found/);
  t.same(await info(d), []);
  const d2 = await startDaemon(t, { backend: 'auto', env: { ...NO_VENDOR_LIBRARIES, ...fake.env, XLURM_HCU_SMI_LIBRARY: '/nonexistent/librocm_smi64.so' } });
  t.match(d2.output, /hcu discovery: cannot load library: \/nonexistent\/librocm_smi64\.so/);
  t.same(await info(d2), []);
});

t.test('an HCU without a unique id is left out; rocm_smi is shut down once per init', async (t) => {
  const own = fakeLibrary(t, 'hcu', [...hcus(3), 'fail rsmi_dev_unique_id_get 2 1']);
  const d = await startDaemon(t, { backend: 'hcu', env: own.env });
  t.same((await info(d)).map((v) => v.device.id), [0, 2]);
  t.match(d.output, /hcu discovery: device 1 left out: rsmi_dev_unique_id_get: RSMI_STATUS_NOT_SUPPORTED \(2\)/);
  await d.stop();
  const calls = own.calls();
  t.equal(calls.filter((c) => c === 'rsmi_init').length, 1);
  t.equal(calls.filter((c) => c === 'rsmi_shut_down').length, 1);
});
