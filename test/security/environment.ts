// Class CVE-2022-29501, "privileged helpers trusting the caller's environment" (docs/security.md):
// a submitted environment is the job's and nothing else's. test/multiuser/environment.ts shows
// that XLURM_NVML_LIBRARY, LD_PRELOAD and PATH reach no root process; this file extends it to
// the rest of what a root helper could be steered by: XLURM_HOME, LD_LIBRARY_PATH (full of
// vendor-library look-alikes), NODE_OPTIONS, every XLURM_*_LIBRARY, XLURM_HCU_HEALTH_TOOL and
// XLURM_CONFIG, through the daemon, the supervisor and the job's --notify. The job itself sees
// every variable; no process of uid 0 loads, runs or writes anything they name.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fakeLibrary } from '../helpers/fixtures';
import { markerLibrary, nodeMarker, rootMarks, shimBin, moreRootWork } from '../helpers/marks';
import { MULTIUSER_SKIP, accounts, compile, rawRequestAs, rootDaemon, sharedDir, workDir } from '../helpers/multiuser';
import { waitFor } from '../helpers/wait';

const LIBRARY_VARS = ['XLURM_NVML_LIBRARY', 'XLURM_DCMI_LIBRARY', 'XLURM_MTML_LIBRARY', 'XLURM_MXSML_LIBRARY', 'XLURM_HGML_LIBRARY', 'XLURM_HCU_SMI_LIBRARY'];
/** Names a root process might resolve through LD_LIBRARY_PATH (never libc: the job must still run). */
const LOOKALIKES = ['libnvidia-ml.so.1', 'libnvidia-ml.so', 'libdcmi.so', 'libmtml.so', 'libmxsml.so', 'libhgml.so', 'librocm_smi64.so', 'libcuda.so.1'];

t.test('XLURM_HOME, LD_LIBRARY_PATH, NODE_OPTIONS and every library variable of a job steer no root process', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const marks = sharedDir(t, 0o777, 'xlsec-marks');
  const tools = sharedDir(t, 0o755, 'xlsec-evil');
  const evil = compile(tools, 'evil.so', markerLibrary(marks), ['-shared', '-fPIC']);
  const libdir = path.join(tools, 'lib');
  fs.mkdirSync(libdir, { mode: 0o755 });
  for (const name of LOOKALIKES) fs.copyFileSync(evil, path.join(libdir, name));
  const bin = shimBin(tools, marks, ['hy-smi', 'npu-smi', 'rocm-smi', 'setpriv', 'systemd-run']);
  const nodeMark = nodeMarker(tools, marks);
  const fakeHome = sharedDir(t, 0o777, 'xlsec-home');
  const evilConfig = path.join(tools, 'evil.toml');
  fs.writeFileSync(evilConfig, '[daemon]\nmax_running = 1\nbackend = "none"\n', { mode: 0o644 });
  const out = sharedDir(t, 0o777, 'xlsec-out');

  // Control: the node marker works for root (the library and shims' control is the multiuser file's).
  // (spawnSync: the helpers' runProcess drops NODE_OPTIONS on purpose.)
  const control = spawnSync(process.execPath, ['-e', '0'], { env: { NODE_OPTIONS: `--require ${nodeMark}`, PATH: '/usr/bin:/bin' }, encoding: 'utf8' });
  t.equal(control.status, 0, control.stderr);
  t.ok(rootMarks(marks).some((n) => n.startsWith('0-node-')), 'control: a root node process with NODE_OPTIONS leaves a mark');
  for (const n of rootMarks(marks)) fs.rmSync(path.join(marks, n));

  const fake = fakeLibrary(t, 'nvidia', ['device 0 GPU-7e57c0de-0000-4000-8000-000000000000 "Fake GPU"']);
  const d = await rootDaemon(t, { backend: 'nvidia', env: fake.env });
  const cwd = workDir(t);
  const env: Record<string, string> = {
    XLURM_HOME: fakeHome, LD_LIBRARY_PATH: libdir, LD_PRELOAD: evil, NODE_OPTIONS: `--require ${nodeMark}`,
    PATH: `${bin}:/usr/bin:/bin`, XLURM_HCU_HEALTH_TOOL: path.join(bin, 'hy-smi'), XLURM_CONFIG: evilConfig,
    ...Object.fromEntries(LIBRARY_VARS.map((k) => [k, evil])),
  };
  const script = 'for v in XLURM_HOME LD_LIBRARY_PATH NODE_OPTIONS XLURM_CONFIG XLURM_DCMI_LIBRARY; do echo "$v=${!v}"; done; echo "uid=$(id -u)"';
  // A hand-made submission (as nobody) carries exactly this environment: the CLI's own XLURM_HOME is the real one.
  const reply = await rawRequestAs(nobody, d.socket, JSON.stringify({
    v: 1, op: 'submit', args: {
      command: ['bash', '-c', script], cwd, env, name: 'hostile-env', count: 1,
      notify: `id -u > ${out}/notify-uid; echo "$XLURM_HOME" > ${out}/notify-home`,
    },
  }) + '\n');
  t.equal(reply.ok, true, JSON.stringify(reply.error));
  const id = reply.result.id as number;
  const job = await d.waitState(id, ['COMPLETED', 'FAILED']);
  const log = (await d.run('xqueue', [String(id), '--log'])).stdout;
  t.equal(job.state, 'COMPLETED', log);
  t.ok(log.startsWith(`XLURM_HOME=${fakeHome}\nLD_LIBRARY_PATH=${libdir}\nNODE_OPTIONS=--require ${nodeMark}\nXLURM_CONFIG=${evilConfig}\nXLURM_DCMI_LIBRARY=${evil}\nuid=65534\n`), 'the job sees its own variables');
  await waitFor(() => fs.existsSync(path.join(out, 'notify-home')), { timeout: 20000, what: 'the notification ran' });
  t.equal(fs.readFileSync(path.join(out, 'notify-uid'), 'utf8'), '65534\n', 'the notification ran as the owner');

  // The daemon's own root work goes on: any mark it would leave is there to see.
  await moreRootWork(d, fake);

  const names = fs.readdirSync(marks);
  t.ok(names.some((n) => n.startsWith('65534-preload-')), 'the job\'s processes loaded its libraries');
  t.same(rootMarks(marks), [], 'no root process loaded a library, ran a shim or a node module the job named');
  t.same(fs.readdirSync(fakeHome), [], 'nothing was written under the job\'s XLURM_HOME');
  t.ok(fs.existsSync(path.join(d.home, 'jobs')), 'the daemon\'s own state directory holds the job');
  const st = await d.request('status', {}) as { ok: boolean; result: { backend: string; max_running: number } };
  t.equal(st.ok, true, 'the daemon still answers');
  t.equal(st.result.max_running, 32, 'the job\'s XLURM_CONFIG configured nothing');
  const info = JSON.parse((await d.run('xinfo', ['--json'])).stdout);
  t.equal(info[0].device.name, 'Fake GPU', 'still the administrator\'s library');
});
