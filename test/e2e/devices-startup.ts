// Start-up of every vendor backend (docs/behaviour.md, Devices; docs/driver-apis.md): the real
// daemon on each vendor's fake library (test/fixtures/fake-*), one row per vendor. For each:
// discovery failures that stop `--backend <vendor>` with a clear message (the library search
// list, the absolute-only override, the driver's own errors), `--backend auto` skipping a failing
// vendor and saying why, devices that cannot be identified left out and logged, the library shut
// down once per initialisation; then what only that vendor has. The running behaviour (polls,
// allocation, visibility): devices.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DAEMON_MAIN, baseEnv } from '../helpers/env';
import { Daemon, runProcess, startDaemon, tempHome } from '../helpers/daemon';
import { NO_VENDOR_LIBRARIES, SHOW_VISIBILITY, afterFullProbe, fakeDaemon, info, statuses, views } from '../helpers/devices';
import { fakeLibrary, FAKE_HY_SMI, type FakeKind, type FakeLibrary } from '../helpers/fixtures';
import { mtmlGpus, mttUuid } from '../helpers/mtml';
import type { Tap } from '../helpers/tap';
import { pidAlive, waitFor } from '../helpers/wait';

type Env = Record<string, string>;

interface Failure {
  /** The fake's state for this start (the row's `state` otherwise). */
  state?: readonly string[];
  /** The daemon's whole environment besides XLURM_HOME (the fake's own otherwise). */
  env?: (fake: FakeLibrary) => Env;
  /** The `--backend` value (the row's otherwise). */
  backend?: string;
  /** Its stderr: exactly this text, or matching every pattern. */
  stderr: string | RegExp[];
  what?: string;
}

interface AutoSkip {
  state?: readonly string[];
  env: (fake: FakeLibrary) => Env;
  /** What the daemon logs about the vendor it skipped. */
  logged: RegExp;
  /** The host may have other vendors' libraries: only this vendor's devices must be missing. */
  othersMayShow?: boolean;
  /** More checks on the daemon that skipped the vendor. */
  then?: (t: Tap, d: Daemon) => Promise<void>;
}

interface Vendor {
  vendor: string;
  kind: string;
  fake: FakeKind;
  backend: string;
  /** The fake's state once a test is done with it (every start begins from it). */
  state: readonly string[];
  /** `--backend <backend>` exits 1 with the message, in this order, on one fake. */
  failures: Failure[];
  /** `--backend auto` starts, logs why the vendor was skipped, and lists none of its devices. */
  autoSkips: AutoSkip[];
  /** `--backend <backend>` leaves out the devices it cannot identify, and logs each. */
  leftOut?: { state: readonly string[]; ids: number[]; logged: RegExp[] };
  /** What only this vendor has, on the same fake, after the rest. */
  extra?: (t: Tap, fake: FakeLibrary) => Promise<void>;
}

const missing = (p: string) => `${p}: cannot open shared object file: No such file or directory`;

/** A daemon started at once in the foreground, which must fail: its stderr. */
async function failedStart(t: Tap, fake: FakeLibrary, backend: string, f: Failure): Promise<void> {
  const env = f.env ? f.env(fake) : fake.env;
  const r = await runProcess(process.execPath, [DAEMON_MAIN, 'daemon', '--backend', f.backend ?? backend], { env: baseEnv({ XLURM_HOME: tempHome(t), ...env }) });
  const what = f.what ?? (typeof f.stderr === 'string' ? f.stderr.trim() : 'the message');
  t.equal(r.code, 1, `exit status 1: ${what}`);
  if (typeof f.stderr === 'string') t.equal(r.stderr, f.stderr, what);
  else for (const re of f.stderr) t.match(r.stderr, re, what);
}

/** `xlurm start` of a daemon that cannot discover its devices: it says so, and daemon.log says why. */
async function failedXlurmStart(t: Tap, env: Env, backend: string, logged: RegExp): Promise<void> {
  const d = new Daemon(t, tempHome(t), { env });
  const r = await d.run('xlurm', ['start', '--backend', backend], { cwd: os.tmpdir() });
  t.equal(r.code, 1);
  t.equal(r.stderr, `xlurm: daemon exited (exit status: 1); see ${path.join(d.home, 'daemon.log')}\n`);
  t.match(fs.readFileSync(path.join(d.home, 'daemon.log'), 'utf8'), logged);
}

const labels = async (d: Daemon) => (await info(d)).map((v) => `${v.device.kind}:${v.device.id}`);

// NVIDIA: NVML.
const nvUuid = (i: number) => `GPU-7e57c0de-0000-4000-8000-00000000000${i}`;
const nvGpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} ${nvUuid(i)} "Fake H100 80GB"`);

// Ascend: DCMI. One card with two compute chips and an MCU.
const CHIPS = ['chip 3 0 0 Ascend 910B3', 'chip 3 1 1 Ascend 910B3', 'mcu 3 2'];
const ASCEND_DEVICES = [0, 1].map((id) => ({ kind: 'ascend', id, name: 'Ascend 910B3', visible: String(id), npu: 3, chip: id }));
const DCMI_SEARCHED = ['/usr/local/dcmi/libdcmi.so', '/usr/local/Ascend/driver/lib64/driver/libdcmi.so'];
const hostHasDcmi = DCMI_SEARCHED.some((p) => fs.existsSync(p));

// Moore Threads: MTML, with device node files in a scratch directory (test/helpers/mtml.ts).
const mtml = mtmlGpus(t);
const MTT_UUID_CALL = 'mtmlDeviceGetUUID';

// MetaX: MXSML.
const mxUuid = (i: number) => `GPU-3e7a0000-0000-4000-8000-00000000000${i}`;
const mxGpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} ${mxUuid(i)} "MXC500"`);

// T-Head PPU: HGML (the fake needs its libuki.so beside it).
const ppuUuid = (i: number) => `GPU-019ea108-0000-4000-8000-00000000000${i}`;
const ppus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} ${ppuUuid(i)} "PPU-ZW810E"`);
const HEADER = 'DEVICE       STATUS      JOB    NAME\n';

// Hygon HCU: rocm_smi plus the hy-smi health tool, found from the daemon's environment at start
// (override, fixed path, then the daemon's PATH, never a job's).
const hcus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} 0x5a5e00000000000${i} "Hygon K100_AI"`);
const withoutTool = (fake: FakeLibrary): Env => { const { XLURM_HCU_HEALTH_TOOL: _tool, ...rest } = fake.env; return rest; };
/** A PATH without any hy-smi (the fixed path /opt/dtk/.hyhal/bin/hy-smi does not exist here). */
const BARE_PATH = '/usr/local/bin:/usr/bin:/bin';

/** A directory holding an executable `hy-smi` (the fake, or a script answering every HCU `Unhealthy`). */
function toolDir(t: Tap, unhealthy = false): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-hysmi-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  if (unhealthy) {
    fs.writeFileSync(path.join(dir, 'hy-smi'), '#!/bin/sh\nfor i in 0 1; do echo "HCU[$i] : Bus Id : 0000:0$i:00.0 : Unhealthy"; done\n', { mode: 0o755 });
  } else {
    fs.symlinkSync(FAKE_HY_SMI, path.join(dir, 'hy-smi'));
  }
  return dir;
}

/** An MTML library where MXSML is expected. */
const NOT_MXSML = fakeLibrary(t, 'mthreads', []).library;
/** The fake libhgml.so alone in a directory, without its libuki.so. */
const LONELY_HGML = (() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-hgml-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const lib = path.join(dir, 'libhgml.so');
  fs.copyFileSync(fakeLibrary(t, 'ppu', []).library, lib);
  return lib;
})();

const VENDORS: Vendor[] = [
  {
    vendor: 'NVIDIA', kind: 'nvidia', fake: 'nvidia', backend: 'nvidia', state: nvGpus(2),
    failures: [
      { env: (f) => ({ ...f.env, XLURM_NVML_LIBRARY: '/nonexistent/libnvidia-ml.so.1' }),
        stderr: [/^xlurm: nv discovery: cannot load library: \/nonexistent\/libnvidia-ml\.so\.1: cannot open shared object file: No such file or directory\n$/] },
      { env: (f) => ({ ...f.env, XLURM_NVML_LIBRARY: 'libnvidia-ml.so.1' }), backend: 'nv',
        stderr: 'xlurm: nv discovery: XLURM_NVML_LIBRARY must be an absolute path: libnvidia-ml.so.1\n' },
      { state: ['device 0 GPU-x a', 'fail nvmlInit 9'], stderr: 'xlurm: nv discovery: nvmlInit_v2: Driver Not Loaded (9)\n' },
      { state: [], stderr: 'xlurm: nv discovery: no compute devices discovered\n' },
    ],
    autoSkips: [
      { env: (f) => ({ ...f.env, XLURM_NVML_LIBRARY: '/nonexistent/libnvidia-ml.so.1' }), logged: /nv discovery: cannot load library: \/nonexistent\/libnvidia-ml\.so\.1/,
        then: async (t, d) => {
          const r = await d.run('xbatch', ['--wrap', 'true']);
          t.equal(r.stderr, 'xlurm: requested 1 device(s), but no matching pool has enough devices\n');
        } },
    ],
    extra: async (t, fake) => {
      t.test('xlurm start with the fake library works', async (t) => {
        const d = new Daemon(t, tempHome(t), { env: fake.env });
        t.teardown(async () => {
          const st = await d.request('status', {}).catch(() => null) as any;
          await d.run('xlurm', ['stop'], { cwd: os.tmpdir() });
          if (st?.ok) await waitFor(() => !pidAlive(st.result.pid), { what: 'daemon exit' });
        });
        const r = await d.run('xlurm', ['start', '--backend', 'nvidia'], { cwd: os.tmpdir() });
        t.equal(r.code, 0, r.stderr);
        t.equal(r.stdout, 'xlurm started\n');
        t.same(await statuses(d), ['idle', 'idle']);
        const st = await d.request('status', {}) as any;
        t.same(st.result.backends, ['nvidia']);
      });

      t.test('xlurm start with a broken library path fails; daemon.log says why', async (t) => {
        await failedXlurmStart(t, { ...fake.env, XLURM_NVML_LIBRARY: '/nonexistent/libnvidia-ml.so.1' }, 'nvidia',
          /xlurm: nv discovery: cannot load library: \/nonexistent\/libnvidia-ml\.so\.1: cannot open shared object file/);
      });

      t.test('stop shuts NVML down once per init', async (t) => {
        const f2 = fakeLibrary(t, 'nvidia', nvGpus(1));
        const d = await startDaemon(t, { backend: 'nvidia', env: f2.env });
        await d.stop();
        const c = f2.calls();
        t.equal(c.filter((x) => x === 'nvmlInit_v2').length, 1);
        t.equal(c.filter((x) => x === 'nvmlShutdown').length, 1);
      });
    },
  },
  {
    // Which DCMI API is used: v2 only where dcmiv2_init accepts; the classic API on other boards
    // and on drivers without v2.
    vendor: 'Ascend', kind: 'ascend', fake: 'ascend', backend: 'ascend', state: CHIPS,
    failures: [
      ...(hostHasDcmi ? [] : [{
        env: () => ({}), what: 'no library: every place searched, in order',
        stderr: `xlurm: asc discovery: cannot load library: ${DCMI_SEARCHED.map((p) => `${missing(p)}; `).join('')}${missing('libdcmi.so')}\n`,
      }]),
      { env: (f) => ({ ...f.env, XLURM_DCMI_LIBRARY: 'libdcmi.so' }), stderr: 'xlurm: asc discovery: XLURM_DCMI_LIBRARY must be an absolute path: libdcmi.so\n' },
      { env: (f) => ({ ...f.env, XLURM_DCMI_LIBRARY: '/nonexistent/libdcmi.so' }),
        stderr: `xlurm: asc discovery: cannot load library: ${missing('/nonexistent/libdcmi.so')}\n` },
      { state: [...CHIPS, 'board 910B', 'fail dcmi_init -8005'],
        stderr: 'xlurm: asc discovery: dcmi_init: inner error (-8005); dcmiv2_init: not supported (-8255)\n' },
      { state: [...CHIPS, 'fail dcmi_get_device_logic_id -8007 1', 'board 910B'],
        stderr: 'xlurm: asc discovery: card 3 chip 1: dcmi_get_device_logic_id: invalid device id (-8007); refusing to guess Ascend logical ids\n' },
      { state: ['mcu 3 0'], stderr: 'xlurm: asc discovery: no compute devices discovered\n' },
    ],
    autoSkips: hostHasDcmi ? [] : [
      { env: () => ({}), othersMayShow: true, logged: /asc discovery: cannot load library: \/usr\/local\/dcmi\/libdcmi\.so: cannot open shared object file/ },
    ],
    extra: async (t, fake) => {
      t.test('xlurm start without a library fails; daemon.log says why', { skip: hostHasDcmi && 'this host has a DCMI library' }, async (t) => {
        await failedXlurmStart(t, {}, 'asc', /xlurm: asc discovery: cannot load library: \/usr\/local\/dcmi\/libdcmi\.so: /);
      });

      t.test('auto finds the fake', async (t) => {
        const d = await startDaemon(t, { backend: 'auto', env: fake.env });
        t.same((await views(d)).filter((v) => v.device.kind === 'ascend').map((v) => v.device), ASCEND_DEVICES);
        const st = await d.request('status', {}) as any;
        t.ok(st.result.backends.includes('ascend'));
      });

      t.test('the classic API where v2 is refused (a 910B board) or absent (an older driver)', async (t) => {
        for (const [name, kind, board] of [
          ['v2 symbols refuse', 'ascend', ['board 910B']],
          ['no v2 symbols', 'ascend-classic', []],
        ] as const) {
          t.test(name, async (t) => {
            const fake = fakeLibrary(t, kind, [...CHIPS, ...board, 'health 0 2']);
            const { d } = await fakeDaemon(t, [fake], { backend: 'ascend' });
            t.same((await views(d)).map((v) => [v.device, v.status]), [[ASCEND_DEVICES[0], 'unhealthy'], [ASCEND_DEVICES[1], 'idle']]);
            const calls = fake.calls();
            t.same(calls.filter((c) => c.startsWith('dcmiv2_')), kind === 'ascend' ? ['dcmiv2_init'] : [], 'v2: at most the refused init');
            for (const c of ['dcmi_init', 'dcmi_get_card_list', 'dcmi_get_device_num_in_card', 'dcmi_get_device_type',
              'dcmi_get_device_logic_id', 'dcmi_get_device_health', 'dcmi_get_device_resource_info']) {
              t.ok(calls.includes(c), `calls ${c}`);
            }
            fake.write([...CHIPS, ...board, 'procs 1 777']);
            await waitFor(async () => (await views(d)).map((v) => v.status).join() === 'idle,busy', { what: 'asc:0 idle, asc:1 busy' });
            fake.write([...CHIPS, ...board]);
            const r = await d.run('xrun', ['-g', '2', '--', 'sh', '-c', SHOW_VISIBILITY]);
            t.equal(r.stdout, 'CUDA=-1 ASC=0,1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=0\n');
            t.notOk(fake.calls().some((c) => c.startsWith('dcmiv2_') && c !== 'dcmiv2_init'), 'never a v2 call after the refusal');
          });
        }
      });
    },
  },
  {
    vendor: 'Moore Threads', kind: 'mthreads', fake: 'mthreads', backend: 'mthreads', state: mtml.gpus(2),
    failures: [
      { env: (f) => ({ ...f.env, XLURM_MTML_LIBRARY: '' }), what: "without the override: the loader's libmtml.so",
        stderr: `xlurm: mtt discovery: cannot load library: ${missing('libmtml.so')}\n` },
      { env: (f) => ({ ...f.env, XLURM_MTML_LIBRARY: '/nonexistent/libmtml.so' }),
        stderr: `xlurm: mtt discovery: cannot load library: ${missing('/nonexistent/libmtml.so')}\n` },
      { env: (f) => ({ ...f.env, XLURM_MTML_LIBRARY: 'libmtml.so' }), backend: 'mtt',
        stderr: 'xlurm: mtt discovery: XLURM_MTML_LIBRARY must be an absolute path: libmtml.so\n' },
      { state: [...mtml.gpus(1), 'fail mtmlLibraryInit 1'], stderr: 'xlurm: mtt discovery: mtmlLibraryInit: Driver not loaded (1)\n' },
      { state: [], stderr: 'xlurm: mtt discovery: no compute devices discovered\n' },
      { state: [...mtml.gpus(1), ...mtml.gpu(1).map((l) => l.replace(mttUuid(1), mttUuid(0)))],
        stderr: 'xlurm: mtt discovery: duplicate device IDs in inventory\n' },
    ],
    leftOut: { state: [...mtml.gpus(2), `fail ${MTT_UUID_CALL} 2 0`], ids: [1], logged: [/mtt discovery: device 0 left out: mtmlDeviceGetUUID: Driver failure \(2\)/] },
    autoSkips: [
      { state: [...mtml.gpus(1), 'fail mtmlLibraryInit 1'], env: (f) => ({ ...NO_VENDOR_LIBRARIES, ...f.env }), logged: /mtt discovery: mtmlLibraryInit: Driver not loaded \(1\)/ },
    ],
    extra: async (t, fake) => {
      t.test('auto uses a working MTML; the library is shut down once per successful init, every device freed', async (t) => {
        const auto = await startDaemon(t, { backend: 'auto', env: { ...NO_VENDOR_LIBRARIES, ...fake.env } });
        t.same(await labels(auto), ['mthreads:0', 'mthreads:1']);
        await auto.stop();
        const calls = fake.calls();
        t.equal(calls.filter((c) => c === 'mtmlLibraryShutDown').length, calls.filter((c) => c === 'mtmlLibraryInit').length - 2,
          'shut down once per successful init (the two failed inits have nothing to shut down)');
        t.equal(calls.filter((c) => c === 'mtmlLibraryInitDeviceByIndex').length, calls.filter((c) => c === 'mtmlLibraryFreeDevice').length,
          'every device object freed');
      });

      // A process table that cannot show every process (XLURM_MTML_PROC_ROOT pointing at one whose
      // PID 2 is not a kernel thread, as in a container's own /proc) makes every GPU unknown.
      t.test('a process table that hides processes (another PID namespace) makes every GPU unknown', async (t) => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-mtt-proc-'));
        t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
        fs.mkdirSync(path.join(root, '2'));
        fs.writeFileSync(path.join(root, '2/stat'), '2 (bash) S 1 2 2 0 -1 4194560 0 0 0 0\n'); // no PF_KTHREAD
        const own = fakeLibrary(t, 'mthreads', mtml.gpus(2));
        const { d } = await fakeDaemon(t, [own], { backend: 'mthreads', env: { XLURM_MTML_PROC_ROOT: root } });
        await waitFor(async () => (await statuses(d)).every((s) => s === 'unknown'), { what: 'all unknown' });
        t.equal((await info(d))[0].monitoring_error, `occupancy unknown: ${root} is not the host's process table ` +
          '(its PID 2 is not a kernel thread): processes in other PID namespaces cannot be seen');
        const r = await d.run('xbatch', ['-g', '1', '--wrap', 'true']);
        const id = Number(r.stdout.trim());
        await afterFullProbe(own, (c) => c === MTT_UUID_CALL, 2);
        t.equal((await d.job(id)).state, 'PENDING', 'nothing is allocated');
      });
    },
  },
  {
    vendor: 'MetaX', kind: 'metax', fake: 'metax', backend: 'metax', state: mxGpus(2),
    failures: [
      { env: () => ({}), what: 'the search list, in order, then the loader',
        stderr: `xlurm: mx discovery: cannot load library: ${[
          '/opt/mxdriver/lib/libmxsml.so', '/opt/maca/lib/libmxsml.so', '/opt/mxn100/lib/libmxsml.so', 'libmxsml.so',
        ].map(missing).join('; ')}\n` },
      { env: (f) => ({ ...f.env, XLURM_MXSML_LIBRARY: '/nonexistent/libmxsml.so' }), what: 'an override disables the search',
        stderr: `xlurm: mx discovery: cannot load library: ${missing('/nonexistent/libmxsml.so')}\n` },
      { env: (f) => ({ ...f.env, XLURM_MXSML_LIBRARY: 'libmxsml.so' }), backend: 'mx',
        stderr: 'xlurm: mx discovery: XLURM_MXSML_LIBRARY must be an absolute path: libmxsml.so\n' },
      { env: (f) => ({ ...f.env, XLURM_MXSML_LIBRARY: NOT_MXSML }),
        stderr: `xlurm: mx discovery: ${NOT_MXSML} does not export mxSmlInit (not an MXSML library?)\n` },
      { state: [...mxGpus(1), 'fail mxSmlInit 26'], stderr: 'xlurm: mx discovery: mxSmlInit: Unknown error (26)\n' },
      { state: [], stderr: 'xlurm: mx discovery: mxSmlInit: No device (2)\n' },
      { state: [`vf 0 ${mxUuid(0)} VF`, `device 1 ${mxUuid(1)} MXC500`, 'fail mxSmlGetDeviceInfo 1 1'],
        what: 'a VF is left out while another device might be physical',
        stderr: [/mx discovery: device 0 left out: a virtual function \(VF\); the physical GPUs are managed\n.*mx discovery: device 1 left out: mxSmlGetDeviceInfo: Failure \(1\)\n/s,
          /\nxlurm: mx discovery: no compute devices discovered\n$/] },
    ],
    leftOut: {
      state: [...mxGpus(2), `vf 2 ${mxUuid(7)} "MXC500 VF"`, `device 3 ${mxUuid(3)} MXC500`, 'fail mxSmlGetDeviceInfo 6 0'], ids: [1, 3],
      logged: [/mx discovery: device 0 left out: mxSmlGetDeviceInfo: Invalid device id \(6\)/,
        /mx discovery: device 2 left out: a virtual function \(VF\); the physical GPUs are managed/],
    },
    autoSkips: [
      { state: [...mxGpus(1), 'fail mxSmlInit 1'], env: (f) => ({ ...NO_VENDOR_LIBRARIES, ...f.env }), logged: /mx discovery: mxSmlInit: Failure \(1\)/ },
    ],
    extra: async (t, fake) => {
      t.test('auto skips a failing vendor (Moore Threads), logs why, and uses MetaX', async (t) => {
        const other = fakeLibrary(t, 'mthreads', ['device 0 5e1ec7ed-0 "MTT S4000"', 'fail mtmlLibraryInit 1']);
        const d = await startDaemon(t, { backend: 'auto', env: { ...NO_VENDOR_LIBRARIES, ...other.env, ...fake.env } });
        t.match(d.output, /mtt discovery: mtmlLibraryInit: Driver not loaded \(1\)/);
        t.same(await labels(d), ['metax:0', 'metax:1']);
        t.same(((await d.request('status', {})) as any).result.backends, ['metax']);
      });
    },
  },
  {
    vendor: 'PPU', kind: 'ppu', fake: 'ppu', backend: 'ppu', state: ppus(2),
    failures: [
      { env: (f) => ({ ...f.env, XLURM_HGML_LIBRARY: '/nonexistent/libhgml.so' }),
        stderr: `xlurm: ppu discovery: cannot load library: ${missing('/nonexistent/libhgml.so')}\n` },
      { env: (f) => ({ ...f.env, XLURM_HGML_LIBRARY: LONELY_HGML }), what: 'libhgml.so without its libuki.so beside it (and none on the loader\'s path)',
        stderr: `xlurm: ppu discovery: cannot load library: ${missing('libuki.so')}\n` },
      { state: [...ppus(1), 'fail hgmlInit 9'], stderr: 'xlurm: ppu discovery: hgmlInit_v2: Driver Not Loaded (9)\n' },
    ],
    leftOut: { state: [...ppus(2), 'fail hgmlDeviceGetUUID 15 0'], ids: [1], logged: [/ppu discovery: device 0 left out: hgmlDeviceGetUUID: GPU is lost \(15\)/] },
    autoSkips: [
      { env: (f) => ({ ...NO_VENDOR_LIBRARIES, ...f.env, XLURM_HGML_LIBRARY: '/nonexistent/libhgml.so' }), logged: /ppu discovery: cannot load library: \/nonexistent\/libhgml\.so/ },
    ],
    extra: async (t, fake) => {
      t.test('auto uses a working HGML', async (t) => {
        const ok = await startDaemon(t, { backend: 'auto', env: { ...NO_VENDOR_LIBRARIES, ...fake.env } });
        t.same(await labels(ok), ['ppu:0', 'ppu:1']);
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
    },
  },
  {
    vendor: 'HCU', kind: 'hcu', fake: 'hcu', backend: 'hcu', state: hcus(2),
    failures: [
      { env: (f) => ({ ...f.env, XLURM_HCU_SMI_LIBRARY: '/nonexistent/librocm_smi64.so' }),
        stderr: `xlurm: hcu discovery: cannot load library: ${missing('/nonexistent/librocm_smi64.so')}\n` },
      { state: [...hcus(2), 'fail rsmi_init 8'], stderr: 'xlurm: hcu discovery: rsmi_init: RSMI_STATUS_INIT_ERROR (8)\n' },
      { env: (f) => ({ ...f.env, XLURM_HCU_HEALTH_TOOL: '/nonexistent/hy-smi' }),
        stderr: 'xlurm: hcu discovery: XLURM_HCU_HEALTH_TOOL is not an executable file: /nonexistent/hy-smi\n' },
      { env: (f) => ({ ...f.env, XLURM_HCU_HEALTH_TOOL: 'hy-smi' }), stderr: 'xlurm: hcu discovery: XLURM_HCU_HEALTH_TOOL must be an absolute path: hy-smi\n' },
      { env: (f) => ({ ...withoutTool(f), PATH: BARE_PATH }),
        stderr: "xlurm: hcu discovery: health tool hy-smi not found (tried /opt/dtk/.hyhal/bin/hy-smi and the daemon's PATH); set XLURM_HCU_HEALTH_TOOL\n" },
    ],
    autoSkips: [
      { env: (f) => ({ ...NO_VENDOR_LIBRARIES, ...withoutTool(f), PATH: BARE_PATH }), logged: /hcu discovery: health tool hy-smi not found/ },
      { env: (f) => ({ ...NO_VENDOR_LIBRARIES, ...f.env, XLURM_HCU_SMI_LIBRARY: '/nonexistent/librocm_smi64.so' }), logged: /hcu discovery: cannot load library: \/nonexistent\/librocm_smi64\.so/ },
    ],
    extra: async (t, fake) => {
      t.test("hy-smi from the daemon's PATH; a job's PATH is never used", async (t) => {
        const dir = toolDir(t);
        const d = await startDaemon(t, { backend: 'hcu', env: { ...withoutTool(fake), PATH: `relative/bin:${dir}:${BARE_PATH}` } });
        t.match(d.output, `hcu: health from ${path.join(dir, 'hy-smi')} --healthcheck`);
        t.same(await statuses(d), ['idle', 'idle']);
        const bad = toolDir(t, true);
        const r = await d.run('xrun', ['-g', '2', '--', 'sh', '-c', 'echo "$ROCR_VISIBLE_DEVICES"'], { env: { PATH: `${bad}:${BARE_PATH}` } });
        t.equal(r.stdout, '0,1\n', r.stderr);
        await afterFullProbe(fake, (c) => c.startsWith('hy-smi '), 1);
        t.same(await statuses(d), ['idle', 'idle'], 'health still from the daemon\'s hy-smi');
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
    },
  },
];

for (const v of VENDORS) {
  t.test(`${v.vendor} start-up`, async (t) => {
    const fake = fakeLibrary(t, v.fake, v.state);

    t.test(`discovery failures stop --backend ${v.backend} with a clear message`, async (t) => {
      for (const f of v.failures) {
        fake.write(f.state ?? v.state);
        await failedStart(t, fake, v.backend, f);
      }
      fake.write(v.state);
    });

    if (v.leftOut) {
      const { state, ids, logged } = v.leftOut;
      t.test('devices that cannot be identified are left out and logged', async (t) => {
        fake.write(state);
        const d = await startDaemon(t, { backend: v.backend, env: fake.env });
        t.same((await info(d)).map((x) => x.device.id), ids);
        for (const re of logged) t.match(d.output, re);
        await d.stop();
        fake.write(v.state);
      });
    }

    t.test(`auto skips a failing ${v.vendor} and logs why`, async (t) => {
      for (const s of v.autoSkips) {
        fake.write(s.state ?? v.state);
        const d = await startDaemon(t, { backend: 'auto', env: s.env(fake) });
        t.match(d.output, s.logged);
        const shown = await info(d);
        t.same(s.othersMayShow ? shown.filter((x) => x.device.kind === v.kind) : shown, [], `no ${v.kind} device`);
        await s.then?.(t, d);
      }
      fake.write(v.state);
    });

    await v.extra?.(t, fake);
  });
}
