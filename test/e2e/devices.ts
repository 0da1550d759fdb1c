// Every vendor's devices end to end (docs/behaviour.md, Devices; docs/driver-apis.md): the real
// daemon with `--backend <vendor>` on that vendor's fake library (test/fixtures/fake-*, named by
// its XLURM_*_LIBRARY override), one row per vendor. Tests rewrite the fake's state file while the
// daemon runs and drive everything through the real CLIs (polls use the `info` op).
//
// Each row runs the same checks where its vendor has them: xinfo (text, json, the backend in
// `status`); what a job sees (the visibility variables, allocation order, the DEVICES column,
// infeasible sizes); busy devices holding a job back; then, on a second daemon, a failing query
// (unknown with the driver's error, not allocated, logged once, recovery), a changed identity
// and a hung call. Then what only that vendor has. Start-up and discovery: devices-startup.ts;
// several vendors at once: devices-mixed.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Daemon, type DaemonOpts } from '../helpers/daemon';
import {
  SHOW_VISIBILITY, afterFullProbe, checkResponsive, fakeDaemon, info, jobLog, statuses, views, waitMarker, xqueueCost,
} from '../helpers/devices';
import { fakeLibrary, FAKE_HY_SMI, type FakeKind, type FakeLibrary } from '../helpers/fixtures';
import { mtmlGpus, mttUuid } from '../helpers/mtml';
import type { Tap } from '../helpers/tap';
import { pidAlive, waitFor } from '../helpers/wait';

const HEADER = 'DEVICE       STATUS      JOB    NAME\n';
const CPU_LINE = 'CUDA=-1 ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=unset';

/** One daemon of a row, with its fake and a scratch directory for markers. */
interface Ctx { d: Daemon; fake: FakeLibrary; dir: string }

/** A fault written into the fake's state: what the daemon must then show for one device. */
interface Fault { lines: readonly string[]; index: number; error: string }

interface Vendor {
  vendor: string;
  kind: string;
  /** Its label in xinfo and xqueue (`nv:0`, `nv:[0,1]`). */
  label: string;
  /** The values `--device` takes for it. */
  aliases: string[];
  fake: FakeKind;
  /** The fake's state with `n` healthy devices. */
  state(n: number): string[];
  /** Devices on the first daemon, the second, and the state the first one starts from. */
  devices: number;
  faultDevices: number;
  initial?: readonly string[];
  /** The devices' statuses at start (all idle otherwise). */
  initialStatuses?: readonly string[];
  /** Device `i` as `xinfo --json` shows it. */
  device(i: number): Record<string, unknown>;
  /** Device `i`'s node files in `xinfo --json` (docs/behaviour.md §24.8); none unless given. */
  nodes?(i: number): string[];
  /** Device `i`'s xinfo row. */
  row(i: number, status: string, job?: string): string;
  /** SHOW_VISIBILITY's line (and what follows it) for a job on devices `ids`; null: a CPU job. */
  visible(ids: number[] | null): string;
  /** The command a job prints its visibility with. */
  show?: string;
  /** Variables a submission brings that the job must not see (the daemon sets its own). */
  staleEnv?: Record<string, string>;
  /** The calls of one probe: which lines of the fake's log, and how many per device. */
  probe: { isCall: (c: string) => boolean; perDevice: boolean };
  /** Makes devices `ids` busy from outside xlurm; returns how to free them. */
  busy?: { ids: number[]; make(fake: FakeLibrary): Promise<() => void>; check?(t: Tap, ctx: Ctx): void };
  failing?: Fault & { check?(t: Tap, ctx: Ctx): Promise<void> };
  changed?: Fault & { check?(t: Tap, ctx: Ctx): Promise<void> };
  hung?: Omit<Fault, 'index'>;
  /** Checks right after the first daemon answers. */
  atStart?(t: Tap, ctx: Ctx): void;
  /** More on the xinfo of the first daemon. */
  xinfo?(t: Tap, ctx: Ctx): void;
  /** What only this vendor has, on the first daemon, on the second, or on daemons of its own. */
  extra?(t: Tap, ctx: Ctx): void;
  extraFaults?(t: Tap, ctx: Ctx): void;
  extraOwn?(t: Tap): void;
}

const rows = (v: Vendor, statuses: readonly string[]) => statuses.map((s, i) => v.row(i, s)).join('');
const probes = (v: Vendor, fake: FakeLibrary, devices: number) => afterFullProbe(fake, v.probe.isCall, v.probe.perDevice ? devices : 1);
const allIdle = (d: Daemon, timeout = 15000) =>
  waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { timeout, what: 'every device idle again' });
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

// NVIDIA: NVML.
const nvUuid = (i: number) => `GPU-7e57c0de-0000-4000-8000-00000000000${i}`;
const NV_PROCS = 'nvmlDeviceGetComputeRunningProcesses_v3';

// Ascend: DCMI, as an Ascend 950 (the v2 API). Cards 3 and 6 hold two compute chips each (card 3
// also an MCU, which is no device); the logical ids do not follow the card order, so discovery
// must sort. The classic API: devices-startup.ts.
const CHIPS = [
  'chip 3 0 2 Ascend 910B3',
  'chip 3 1 3 Ascend 910B3',
  'mcu 3 2',
  'chip 6 0 0 Ascend 910B3',
  'chip 6 1 1 Ascend 910B3',
];
const CARD_CHIP: Record<number, [number, number]> = { 0: [6, 0], 1: [6, 1], 2: [3, 0], 3: [3, 1] };
const ascDevice = (id: number) => ({ kind: 'ascend', id, name: 'Ascend 910B3', visible: String(id), npu: CARD_CHIP[id]![0], chip: CARD_CHIP[id]![1] });
const ASC_HEALTH = 'dcmiv2_get_device_health';
const ASC_PROCS = 'dcmiv2_get_device_proc_mem_info';
/** SHOW_VISIBILITY's line for Ascend logical ids `asc` (every other variable -1). */
const ascVisible = (asc: string, adi = '0') => `CUDA=-1 ASC=${asc} MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=${adi}`;

// Moore Threads: MTML has no process query: a GPU is busy while some process holds one of its
// device nodes open, so the fake names node files in a scratch directory (test/helpers/mtml.ts)
// and tests hold them open from real processes, which the daemon finds in the real /proc.
const mtml = mtmlGpus(t);
const MTT_UUID_CALL = 'mtmlDeviceGetUUID';

// MetaX: MXSML. The fake's physical gpuIds never equal the indices, so a backend matching
// process rows on the wrong id would see every GPU idle.
const mxUuid = (i: number) => `GPU-3e7a0000-0000-4000-8000-00000000000${i}`;
const MX_PROCS = 'mxSmlGetSingleGpuProcess_v3';

// T-Head PPU: HGML (the fake needs the fake libuki.so beside it).
const ppuUuid = (i: number) => `GPU-019ea108-0000-4000-8000-00000000000${i}`;
const PPU_PROCS = 'hgmlDeviceGetComputeRunningProcesses_v3';

// Hygon HCU: rocm_smi plus the hy-smi tool named by XLURM_HCU_HEALTH_TOOL; both fakes read one state file.
const hcuUid = (i: number) => `0x5a5e00000000000${i}`;
const isHealthRun = (c: string) => c.startsWith('hy-smi ');

const VENDORS: Vendor[] = [
  {
    vendor: 'NVIDIA', kind: 'nvidia', label: 'nv', aliases: ['nvidia', 'nv'], fake: 'nvidia',
    state: (n) => range(n).map((i) => `device ${i} ${nvUuid(i)} "Fake H100 80GB"`),
    devices: 4, faultDevices: 3,
    device: (i) => ({ kind: 'nvidia', id: i, name: 'Fake H100 80GB', visible: nvUuid(i), npu: null, chip: null }),
    row: (i, status, job = '-') => `nv:${i}         ${status.padEnd(11)} ${job.padEnd(6)} Fake H100 80GB\n`,
    visible: (ids) => (ids ? `CUDA=${ids.map(nvUuid).join(',')} ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=unset` : CPU_LINE),
    staleEnv: { CUDA_VISIBLE_DEVICES: '7', ASCEND_DEVICE_ID: '3' },
    probe: { isCall: (c) => c === NV_PROCS, perDevice: true },
    busy: { ids: [1], make: async (fake) => { fake.write([...nvState(4), 'procs 1 4242 4343']); return () => fake.write(nvState(4)); } },
    failing: {
      lines: ['fail nvmlDeviceGetComputeRunningProcesses 999 1'], index: 1, error: 'nvmlDeviceGetComputeRunningProcesses: Unknown Error (999)',
      check: async (t, { d, fake }) => {
        const v = (await info(d))[1];
        t.same(v, { device: { kind: 'nvidia', id: 1, name: 'Fake H100 80GB', visible: nvUuid(1), npu: null, chip: null },
          job: null, status: 'unknown', monitoring_error: 'nvmlDeviceGetComputeRunningProcesses: Unknown Error (999)', nodes: [] });
        t.notOk('monitoring_error' in (await info(d))[0]);
        const other = await d.batch('echo "$CUDA_VISIBLE_DEVICES"', ['-g', '2']);
        await afterFullProbe(fake, (c) => c === NV_PROCS, 3);
        const jo = await d.waitState(other, 'COMPLETED');
        t.same(jo.devices.map((x: any) => x.id), [0, 2], 'the others still are');
      },
    },
    changed: {
      lines: [], index: 2, error: `device identity changed since discovery: ${nvUuid(2)} is now GPU-0ther`,
      check: async (t, { d }) => {
        const r = await d.run('xrun', ['-i', '2', 'true'], { timeout: 3000 }).catch(() => null);
        t.not(r?.code, 0, 'no job runs on it');
      },
    },
    hung: { lines: [`hang ${NV_PROCS} 30 0`], error: 'nvmlDeviceGetComputeRunningProcesses timed out after 1500 ms' },
    extra: (t, ctx) => nvidiaExtra(t, ctx),
    extraOwn: (t) => nvidiaOwn(t),
  },
  {
    vendor: 'Ascend', kind: 'ascend', label: 'asc', aliases: ['ascend', 'asc'], fake: 'ascend',
    state: () => CHIPS, devices: 4, faultDevices: 4,
    initial: [...CHIPS, 'health 3 3'], initialStatuses: ['idle', 'idle', 'idle', 'unhealthy'],
    device: ascDevice,
    row: (id, status, job = '-') => `asc:${id}        ${status.padEnd(11)} ${job.padEnd(6)} Ascend 910B3\n`,
    visible: (ids) => (ids ? ascVisible(ids.join(',')) : ascVisible('-1', 'unset')),
    staleEnv: { ASCEND_DEVICE_ID: '5', ASCEND_RT_VISIBLE_DEVICES: '7' },
    // Every chip's health is read once per poll (the process query is skipped on unhealthy chips).
    probe: { isCall: (c) => c === ASC_HEALTH, perDevice: true },
    atStart: (t, { fake }) => {
      const calls = fake.calls();
      t.equal(calls.filter((c) => c === 'dcmiv2_init').length, 1);
      t.notOk(calls.some((c) => c.startsWith('dcmi_')), 'no classic call');
    },
    extra: (t, ctx) => ascendExtra(t, ctx),
  },
  {
    vendor: 'Moore Threads', kind: 'mthreads', label: 'mtt', aliases: ['mthreads', 'mtt'], fake: 'mthreads',
    state: (n) => mtml.gpus(n), devices: 3, faultDevices: 2,
    device: (i) => ({ kind: 'mthreads', id: i, name: 'MTT S4000', visible: mttUuid(i), npu: null, chip: null }),
    nodes: (i) => [mtml.node(i), mtml.node(i, 'render')],
    row: (i, status) => `mtt:${i}        ${status.padEnd(12)}-      MTT S4000\n`,
    visible: (ids) => (ids ? `CUDA=-1 ASC=-1 MUSA=${ids.join(',')} MT=${ids.map(mttUuid).join(',')} MACA=-1 HIP=-1 ROCR=-1 ADI=unset` : CPU_LINE),
    staleEnv: { MUSA_VISIBLE_DEVICES: '7' },
    probe: { isCall: (c) => c === MTT_UUID_CALL, perDevice: true },
    busy: { ids: [1], make: async () => { const holder = await mtml.hold(mtml.node(1, 'render')); return () => holder.kill('SIGKILL'); } },
    failing: { lines: [`fail ${MTT_UUID_CALL} 2 1`], index: 1, error: 'mtmlDeviceGetUUID: Driver failure (2)' },
    changed: { lines: [], index: 1, error: `device identity changed since discovery: ${mttUuid(1)} is now f00d` },
    hung: { lines: [`hang ${MTT_UUID_CALL} 30 0`], error: 'mtmlDeviceGetUUID timed out after 1500 ms' },
    extra: (t, ctx) => mthreadsExtra(t, ctx),
    extraFaults: (t, ctx) => mthreadsFaults(t, ctx),
  },
  {
    vendor: 'MetaX', kind: 'metax', label: 'mx', aliases: ['metax', 'mx'], fake: 'metax',
    state: (n) => range(n).map((i) => `device ${i} ${mxUuid(i)} "MXC500"`), devices: 3, faultDevices: 2,
    device: (i) => ({ kind: 'metax', id: i, name: 'MXC500', visible: mxUuid(i), npu: null, chip: null }),
    row: (i, status) => `mx:${i}         ${status.padEnd(12)}-      MXC500\n`,
    visible: (ids) => (ids ? `CUDA=${ids.join(',')} ASC=-1 MUSA=-1 MT=-1 MACA=${ids.join(',')} HIP=-1 ROCR=-1 ADI=unset` : CPU_LINE),
    staleEnv: { CUDA_VISIBLE_DEVICES: '7', MACA_VISIBLE_DEVICES: '7' },
    probe: { isCall: (c) => c === MX_PROCS, perDevice: true },
    // Rows matched by index: the fake's gpuIds are not the indices.
    busy: { ids: [0, 2], make: async (fake) => { fake.write([...mxState(3), 'proc 4343 0,2']); return () => fake.write(mxState(3)); } },
    failing: { lines: [`fail ${MX_PROCS} 8 1`], index: 1, error: `${MX_PROCS}: Permission denied (8)` },
    changed: { lines: [], index: 1, error: `device identity changed since discovery: ${mxUuid(1)} is now GPU-0ther` },
    extraFaults: (t, ctx) => metaxFaults(t, ctx),
  },
  {
    vendor: 'PPU', kind: 'ppu', label: 'ppu', aliases: ['ppu'], fake: 'ppu',
    state: (n) => range(n).map((i) => `device ${i} ${ppuUuid(i)} "PPU-ZW810E"`), devices: 3, faultDevices: 2,
    device: (i) => ({ kind: 'ppu', id: i, name: 'PPU-ZW810E', visible: ppuUuid(i), npu: null, chip: null }),
    row: (i, status) => `ppu:${i}        ${status.padEnd(12)}-      PPU-ZW810E\n`,
    // PPU UUIDs in CUDA_VISIBLE_DEVICES, in allocation order; nothing else (no PPU_VISIBLE_DEVICES).
    show: `${SHOW_VISIBILITY}; echo "PPU=\${PPU_VISIBLE_DEVICES-unset}"`,
    visible: (ids) => `${ids ? `CUDA=${ids.map(ppuUuid).join(',')} ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=unset` : CPU_LINE}\nPPU=unset`,
    probe: { isCall: (c) => c === PPU_PROCS, perDevice: true },
    busy: { ids: [1], make: async (fake) => { fake.write([...ppuState(3), 'procs 1 4242 4343']); return () => fake.write(ppuState(3)); } },
    failing: { lines: ['fail hgmlDeviceGetComputeRunningProcesses 15 1'], index: 1, error: 'hgmlDeviceGetComputeRunningProcesses: GPU is lost (15)' },
    changed: { lines: [], index: 1, error: `device identity changed since discovery: ${ppuUuid(1)} is now GPU-0ther` },
    hung: { lines: [`hang ${PPU_PROCS} 30 0`], error: 'hgmlDeviceGetComputeRunningProcesses timed out after 1500 ms' },
    xinfo: (t, { fake }) => { t.ok(fake.calls().includes('hgmlInit_v2'), 'HGML v2 initialisation'); },
    extra: (t, ctx) => ppuExtra(t, ctx),
  },
  {
    vendor: 'HCU', kind: 'hcu', label: 'hcu', aliases: ['hcu'], fake: 'hcu',
    state: (n) => range(n).map((i) => `device ${i} ${hcuUid(i)} "Hygon K100_AI"`), devices: 4, faultDevices: 3,
    device: (i) => ({ kind: 'hcu', id: i, name: 'Hygon K100_AI', visible: hcuUid(i), npu: null, chip: null }),
    row: (i, status) => `hcu:${i}        ${status.padEnd(12)}-      Hygon K100_AI\n`,
    // ROCR_VISIBLE_DEVICES = the ids; HIP and CUDA = 0..N-1.
    visible: (ids) => {
      if (!ids) return CPU_LINE;
      const ordinals = ids.map((_, i) => i).join(',');
      return `CUDA=${ordinals} ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=${ordinals} ROCR=${ids.join(',')} ADI=unset`;
    },
    // One hy-smi run per probe.
    probe: { isCall: isHealthRun, perDevice: false },
    busy: {
      ids: [0, 3, 2], // a foreign process on one or several HCUs (the job asks for the last)
      make: async (fake) => { fake.write([...hcuState(4), 'procs 2 4242', 'procs 0 77', 'procs 3 77']); return () => fake.write(hcuState(4)); },
      check: (t, { fake }) => { t.ok(fake.calls().includes('rsmi_compute_process_info_by_device_get'), 'per-device figures asked for'); },
    },
    failing: { lines: ['procs 1 99', 'fail rsmi_compute_process_info_by_device_get 16 1'], index: 1, error: 'rsmi_compute_process_info_by_device_get: RSMI_STATUS_BUSY (16)' },
    changed: { lines: [], index: 2, error: `device identity changed since discovery: ${hcuUid(2)} is now 0x2` },
    xinfo: (t, { d }) => { t.match(d.output, `hcu: health from ${FAKE_HY_SMI} --healthcheck`); },
    extra: (t, ctx) => hcuExtra(t, ctx),
    extraFaults: (t, ctx) => hcuFaults(t, ctx),
  },
];

/** The rows' own state builders, for the vendor-specific checks below. */
const vendor = (kind: string) => VENDORS.find((v) => v.kind === kind)!;
function nvState(n: number) { return vendor('nvidia').state(n); }
function mxState(n: number) { return vendor('metax').state(n); }
function ppuState(n: number) { return vendor('ppu').state(n); }
function hcuState(n: number) { return vendor('hcu').state(n); }

/** The changed identity of each row: the last device's or device `index`'s id replaced. */
function changedState(v: Vendor, n: number, index: number): string[] {
  switch (v.kind) {
    case 'nvidia': return [...nvState(n - 1), 'device 2 GPU-0ther "Fake H100 80GB"'];
    case 'mthreads': return [...mtml.gpu(0), ...mtml.gpu(1).map((l) => l.replace(mttUuid(1), 'f00d'))];
    case 'metax': return [mxState(2)[0]!, 'device 1 GPU-0ther "MXC500"'];
    case 'ppu': return [ppuState(2)[0]!, 'device 1 GPU-0ther "PPU-ZW810E"'];
    case 'hcu': return [...hcuState(2), 'device 2 0x2 "Hygon K100_AI"'];
    default: throw new Error(`no changed identity for ${v.kind} device ${index}`);
  }
}

async function vendorDaemon(t: Tap, v: Vendor, state: readonly string[], opts: DaemonOpts = {}): Promise<Ctx> {
  const fake = fakeLibrary(t, v.fake, state);
  const { d, dir } = await fakeDaemon(t, [fake], { backend: v.kind, ...opts });
  return { d, fake, dir };
}

for (const v of VENDORS) {
  t.test(v.vendor, async (t) => {
    t.test('discovery, xinfo, allocation, visibility, busy', async (t) => {
      const n = v.devices;
      const start = v.initial ?? v.state(n);
      const initial = v.initialStatuses ?? Array<string>(n).fill('idle');
      const ctx = await vendorDaemon(t, v, start);
      const { d, fake, dir } = ctx;
      v.atStart?.(t, ctx);

      t.test('xinfo text and json; status names the backend', async (t) => {
        const r = await d.run('xinfo', []);
        t.equal(r.code, 0, r.stderr);
        t.equal(r.stdout, HEADER + rows(v, initial));
        t.same(await info(d), range(n).map((i) => ({ device: v.device(i), job: null, status: initial[i], nodes: v.nodes?.(i) ?? [] })));
        t.same(((await d.request('status', {})) as any).result.backends, [v.kind]);
        v.xinfo?.(t, ctx);
      });

      t.test('a job sees its devices and nothing else; allocation order; infeasible sizes', async (t) => {
        const show = v.show ?? SHOW_VISIBILITY;
        const m = path.join(dir, 'm-visible');
        const a = await d.batch(`${show}; ${waitMarker(m)}`, ['-g', '2'], { env: v.staleEnv ?? {} });
        const ja = await d.waitState(a, 'RUNNING');
        t.same(ja.devices.map((x: any) => [x.kind, x.id]), [[v.kind, 0], [v.kind, 1]]);
        t.same((await info(d)).map((x) => [x.status, x.job]), initial.map((s, i) => (i < 2 ? ['allocated', a] : [s, null])));
        const q = await d.run('xqueue', []);
        t.match(q.stdout, new RegExp(`\\n${a} +\\S+ +RUNNING +${v.label}:\\[0,1\\] `), q.stdout);
        const line = await waitFor(async () => (await jobLog(d, a)).trim());
        t.equal(line, v.visible([0, 1]), 'the submitted visibility variables are replaced');
        fs.writeFileSync(m, '');
        await d.waitState(a, 'COMPLETED');

        for (const kind of v.aliases) {
          const b = await d.batch(show, ['-i', '2,0', '--device', kind]);
          await d.waitState(b, 'COMPLETED');
          t.equal(await jobLog(d, b), `${v.visible([2, 0])}\n`, `allocation order (--device ${kind})`);
        }
        const cpu = await d.run('xrun', ['-g', '0', 'sh', '-c', show], { env: v.staleEnv ?? {} });
        t.equal(cpu.stdout, `${v.visible(null)}\n`, 'a CPU job sees -1 everywhere');
        const r = await d.run('xbatch', ['-g', String(n + 1), '--wrap', 'true']);
        t.equal(r.stderr, `xlurm: requested ${n + 1} device(s), but no matching pool has enough devices\n`);
      });

      if (v.busy) {
        const busy = v.busy;
        t.test('busy while a process outside xlurm uses it; a job waits, then starts', async (t) => {
          const free = await busy.make(fake);
          const want = initial.map((s, i) => (busy.ids.includes(i) ? 'busy' : s));
          await waitFor(async () => (await statuses(d)).join() === want.join(), { what: `${busy.ids.map((i) => `${v.label}:${i}`).join(', ')} busy` });
          t.equal((await d.run('xinfo', [])).stdout, HEADER + rows(v, want));
          busy.check?.(t, ctx);
          const id = busy.ids[busy.ids.length - 1]!;
          const job = await d.batch(v.show ?? SHOW_VISIBILITY, ['-i', String(id)]);
          await probes(v, fake, n);
          t.equal((await d.job(job)).state, 'PENDING', 'waits while the device is busy');
          free();
          await d.waitState(job, 'COMPLETED', 10000);
          t.equal(await jobLog(d, job), `${v.visible([id])}\n`);
          await allIdle(d);
        });
      }

      v.extra?.(t, ctx);
    });

    if (v.failing || v.changed || v.hung || v.extraFaults) {
      t.test('failed queries, changed identity and hung calls make devices unknown', async (t) => {
        const n = v.faultDevices;
        const ctx = await vendorDaemon(t, v, v.state(n));
        const { d, fake } = ctx;
        const unknownRows = (f: Fault) => range(n).map((i) => v.row(i, i === f.index ? 'unknown' : 'idle') +
          (i === f.index ? `             error: ${f.error}\n` : '')).join('');

        if (v.failing) {
          const f = v.failing;
          t.test('a failing query: unknown with the driver error, no allocation, logged once, recovery', async (t) => {
            fake.write([...v.state(n), ...f.lines]);
            await waitFor(async () => (await statuses(d))[f.index] === 'unknown', { what: `${v.label}:${f.index} unknown` });
            t.equal((await d.run('xinfo', [])).stdout, HEADER + unknownRows(f));
            const id = await d.batch('true', ['-i', String(f.index)]);
            await probes(v, fake, n);
            t.equal((await d.job(id)).state, 'PENDING', 'an unknown device is not allocated');
            await f.check?.(t, ctx);
            fake.write(v.state(n));
            await d.waitState(id, 'COMPLETED', 10000);
            const lines = d.output.split('\n');
            t.equal(lines.filter((l) => l.endsWith(`device ${v.label}:${f.index} unknown: ${f.error}`)).length, 1, 'logged once');
            t.equal(lines.filter((l) => l.endsWith(`device ${v.label}:${f.index} recovered: idle`)).length, 1, 'recovery logged');
            await allIdle(d);
          });
        }

        if (v.changed) {
          const f = v.changed;
          t.test('a changed identity is unknown', async (t) => {
            fake.write(changedState(v, n, f.index));
            await waitFor(async () => (await statuses(d))[f.index] === 'unknown', { what: `${v.label}:${f.index} unknown` });
            t.equal((await info(d))[f.index].monitoring_error, f.error);
            await f.check?.(t, ctx);
            fake.write(v.state(n));
            await allIdle(d);
          });
        }

        if (v.hung) {
          const f = v.hung;
          t.test('a hung call: every device unknown, clients answered at once, recovery', async (t) => {
            fake.write([...v.state(n), ...f.lines]);
            await waitFor(async () => (await statuses(d))[0] === 'unknown', { timeout: 10000, what: `${v.label}:0 unknown` });
            const all = await info(d);
            t.same(all.map((x) => x.status), Array(n).fill('unknown'), 'every device of the library');
            t.equal(all[0].monitoring_error, f.error);
            // The call is still hung (30 s): clients are answered at once, over several polls.
            await checkResponsive(t, d, 0, 3000);
            t.notOk(fake.calls().some((c) => c.startsWith('CONCURRENT')), 'no second call while one is hung');
            fake.write(v.state(n)); // the fake's call returns
            await allIdle(d, 10000);
          });
        }

        v.extraFaults?.(t, ctx);
      });
    }

    v.extraOwn?.(t);
  });
}

// ---- What only one vendor has ----

function nvidiaExtra(t: Tap, { d, dir }: Ctx): void {
  const log = (id: number) => jobLog(d, id);

  t.test('two jobs never share a device; a third waits; visibility variables', async (t) => {
    const m = path.join(dir, 'm1');
    const show = SHOW_VISIBILITY;
    const a = await d.batch(`${show}; ${waitMarker(m)}`, ['-g', '2'], { env: { CUDA_VISIBLE_DEVICES: '7', ASCEND_DEVICE_ID: '3' } });
    const b = await d.batch(`${show}; ${waitMarker(m)}`, ['-g', '2']);
    const c = await d.batch(`${show}`, ['-g', '1']);
    const ja = await d.waitState(a, 'RUNNING');
    const jb = await d.waitState(b, 'RUNNING');
    const used = [...ja.devices, ...jb.devices].map((x: any) => x.id);
    t.same(used.sort(), [0, 1, 2, 3], 'four distinct devices');
    t.equal((await d.job(c)).state, 'PENDING');
    const q = await d.run('xqueue', []);
    t.match(q.stdout, new RegExp(`\\n${c} +\\S+ +PENDING +auto:1 +- `), q.stdout);
    t.match(q.stdout, new RegExp(`\\n${a} +\\S+ +RUNNING +nv:\\[0,1\\] `), q.stdout);
    t.same((await info(d)).map((v) => [v.status, v.job]), [['allocated', a], ['allocated', a], ['allocated', b], ['allocated', b]]);
    const xi = await d.run('xinfo', []);
    t.match(xi.stdout, new RegExp(`\\nnv:2         allocated   ${b} +Fake H100 80GB\\n`));

    const line = await waitFor(async () => (await log(a)).trim());
    t.equal(line, `CUDA=${nvUuid(0)},${nvUuid(1)} ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=unset`);
    fs.writeFileSync(m, '');
    await d.waitState(a, 'COMPLETED');
    await d.waitState(b, 'COMPLETED');
    const jc = await d.waitState(c, 'COMPLETED');
    t.equal(jc.devices.length, 1);
    t.equal((await log(c)).trim(), `CUDA=${nvUuid(jc.devices[0].id)} ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=unset`);

    const cpu = await d.run('xrun', ['-g', '0', 'sh', '-c', show], { env: { CUDA_VISIBLE_DEVICES: '0' } });
    t.equal(cpu.stdout, `${CPU_LINE}\n`, 'a CPU job sees -1 everywhere');
  });

  t.test('-i keeps the given order (pending DEVICES shows the ids); --device nvidia / nv', async (t) => {
    const m = path.join(dir, 'm3');
    const hold = await d.batch(waitMarker(m), ['-i', '2']);
    await d.waitState(hold, 'RUNNING');
    const id = await d.batch('echo "$CUDA_VISIBLE_DEVICES"', ['-i', '3,2']);
    const q = await d.run('xqueue', []);
    t.match(q.stdout, new RegExp(`\\n${id} +\\S+ +PENDING +auto:\\[3,2\\] `), q.stdout);
    fs.writeFileSync(m, '');
    const j = await d.waitState(id, 'COMPLETED');
    t.same(j.devices.map((x: any) => x.id), [3, 2]);
    t.equal(await log(id), `${nvUuid(3)},${nvUuid(2)}\n`);
    const all = await d.run('xqueue', ['--all']);
    t.match(all.stdout, new RegExp(`\\n${id} +\\S+ +COMPLETED +nv:\\[3,2\\] `));

    for (const kind of ['nvidia', 'nv']) {
      const r = await d.run('xrun', ['--device', kind, '-g', '1', '--', 'sh', '-c', 'echo "$CUDA_VISIBLE_DEVICES"']);
      t.equal(r.code, 0, r.stderr);
      t.match(r.stdout, /^GPU-7e57c0de-\S+\n$/);
    }
    const pend = await d.batch(waitMarker(path.join(dir, 'never')), ['--device', 'nv', '-g', '4', '-n', 'big']);
    const q2 = await d.run('xqueue', []);
    t.match(q2.stdout, new RegExp(`\\n${pend} +\\S+ +(PENDING +nv:4|RUNNING +nv:\\[0,1,2,3\\]) `), q2.stdout);
    await d.run('xcancel', [String(pend)]);
    await d.waitState(pend, 'CANCELLED');
  });

  t.test('-x: per-job exclusion', async (t) => {
    let r = await d.run('xrun', ['-g', '2', '-x', '0,2', '--', 'sh', '-c', 'echo "$CUDA_VISIBLE_DEVICES"']);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, `${nvUuid(1)},${nvUuid(3)}\n`);
    r = await d.run('xrun', ['-g', '1', '--exclude-device-ids', '0', '-x', '1', '--', 'sh', '-c', 'echo "$CUDA_VISIBLE_DEVICES"']);
    t.equal(r.stdout, `${nvUuid(2)}\n`, 'repeatable');
    const id = await d.batch('true', ['-x', '3']);
    const j = await d.waitState(id, 'COMPLETED');
    t.same(j.spec.exclude_ids, [3]);
    t.notSame(j.devices.map((x: any) => x.id), [3]);
    const plain = await d.job(await d.batch('true', ['-g', '0']));
    t.notOk('exclude_ids' in plain.spec, 'omitted when absent');

    r = await d.run('xrun', ['-g', '4', '-x', '1', 'true']);
    t.equal(r.code, 1);
    t.equal(r.stderr, 'xlurm: requested 4 device(s), but no matching pool has enough devices\n');
    for (const bin of ['xrun', 'xbatch']) {
      r = await d.run(bin, ['-x', '0', '-i', '1', '--wrap', 'true'].filter((a) => bin === 'xbatch' || a !== '--wrap'));
      t.equal(r.code, 1, bin);
      t.equal(r.stderr, 'xlurm: -x cannot be combined with -i\n', bin);
    }
    const raw = await d.request('submit', { command: ['true'], cwd: dir, env: {}, name: 'x', count: 1, device_ids: [1], exclude_ids: [0] }) as any;
    t.equal(raw.ok, false);
    t.match(raw.error.message, '-x cannot be combined with -i');
  });

  t.test('infeasible requests are rejected at submission', async (t) => {
    for (const args of [['-g', '5'], ['--device', 'ascend'], ['--device', 'asc', '-g', '1'], ['-i', '7'], ['-i', '0,7']]) {
      const r = await d.run('xbatch', [...args, '--wrap', 'true']);
      t.equal(r.code, 1, args.join(' '));
      t.match(r.stderr, /^xlurm: requested \d device\(s\), but no matching pool has enough devices\n$/, args.join(' '));
    }
  });
}

function nvidiaOwn(t: Tap): void {
  const v = vendor('nvidia');

  t.test('a device freed by an ending job goes to the next job without waiting for the poll', async (t) => {
    // a long poll, so only the immediate re-probe can hand the device over within a second
    const { d, fake, dir } = await vendorDaemon(t, v, nvState(1), { env: { XLURM_POLL_INTERVAL_MS: '4000' } });
    const m = path.join(dir, 'm');
    const a = await d.batch(`${waitMarker(m)}; date +%s.%N`, ['-g', '1']);
    await d.waitState(a, 'RUNNING');
    const b = await d.batch('date +%s.%N', ['-g', '1']);
    // end the first job right after a poll, so the next poll is ~4 s away
    const n = fake.calls().filter((c) => c === NV_PROCS).length;
    await waitFor(() => fake.calls().filter((c) => c === NV_PROCS).length > n, { interval: 5, what: 'a poll' });
    fs.writeFileSync(m, '');
    const ja = await d.waitState(a, 'COMPLETED');
    const jb = await d.waitState(b, 'COMPLETED');
    const ended = Number((await jobLog(d, a)).trim());
    const began = Number((await jobLog(d, b)).trim());
    t.ok(began - ended < 1, `the next job started ${(began - ended).toFixed(3)} s after the previous one ended`);
    t.ok(jb.started_at - ja.result.finished_at <= 1, 'started_at within a second of finished_at');
    t.same(jb.devices.map((x: any) => x.id), [0]);
  });

  t.test('administrator exclusions', async (t) => {
    const { d, fake, dir } = await vendorDaemon(t, v, nvState(2), { args: ['--exclude-device-ids', '1'] });
    t.match((await d.run('xinfo', [])).stdout, /\nnv:1         disabled    -      Fake H100 80GB\n/);
    let r = await d.run('xbatch', ['-i', '1', '--wrap', 'true']);
    t.equal(r.stderr, 'xlurm: requested 1 device(s), but no matching pool has enough devices\n', 'excluded at start');
    r = await d.run('xlurm', ['include', '1']);
    t.equal(r.code, 0, r.stderr);

    const m = path.join(dir, 'm');
    const hold = await d.batch(waitMarker(m), ['-i', '0']);
    await d.waitState(hold, 'RUNNING');
    const id = await d.batch('echo "$CUDA_VISIBLE_DEVICES"', ['-i', '0']);
    r = await d.run('xlurm', ['exclude', '0']);
    t.equal(r.code, 0, r.stderr);
    t.same((await info(d)).map((x) => [x.status, x.job]), [['disabled', hold], ['idle', null]], 'disabled, still held by the running job');
    t.equal((await d.job(hold)).state, 'RUNNING', 'the running job is not interrupted');
    r = await d.run('xbatch', ['-i', '0', '--wrap', 'true']);
    t.equal(r.code, 1, 'new requests for an excluded device are rejected');
    fs.writeFileSync(m, '');
    await d.waitState(hold, 'COMPLETED');
    await waitFor(async () => (await info(d))[0].job === null, { what: 'released' });
    await afterFullProbe(fake, (c) => c === NV_PROCS, 2);
    t.equal((await d.job(id)).state, 'PENDING', 'waits while excluded');
    r = await d.run('xlurm', ['include', '0']);
    t.equal(r.code, 0, r.stderr);
    await d.waitState(id, 'COMPLETED');
    t.equal(await jobLog(d, id), `${nvUuid(0)}\n`);
  });
}

function ascendExtra(t: Tap, { d, fake, dir }: Ctx): void {
  const row = vendor('ascend').row;
  const probes = () => afterFullProbe(fake, (c) => c === ASC_HEALTH, 4);
  const ascStatuses = async () => (await views(d)).map((v) => v.status as string);

  t.test('logical ids in ASCEND_RT_VISIBLE_DEVICES, ASCEND_DEVICE_ID=0; the chips of one card go to different jobs', async (t) => {
    const m = path.join(dir, 'm1');
    const a = await d.batch(`${SHOW_VISIBILITY}; ${waitMarker(m)}`, ['-i', '0'], { env: { ASCEND_DEVICE_ID: '5', ASCEND_RT_VISIBLE_DEVICES: '7' } });
    const b = await d.batch(`${SHOW_VISIBILITY}; ${waitMarker(m)}`, ['-i', '1']);
    const ja = await d.waitState(a, 'RUNNING');
    const jb = await d.waitState(b, 'RUNNING');
    t.same([ja.devices, jb.devices], [[ascDevice(0)], [ascDevice(1)]], 'both chips of card 6, one job each');
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'allocated', String(a)) + row(1, 'allocated', String(b)) + row(2, 'idle') + row(3, 'unhealthy'));
    const q = await d.run('xqueue', []);
    t.match(q.stdout, new RegExp(`\\n${a} +\\S+ +RUNNING +asc:\\[0\\] `), q.stdout);
    fs.writeFileSync(m, '');
    await d.waitState(a, 'COMPLETED');
    await d.waitState(b, 'COMPLETED');
    t.equal(await jobLog(d, a), `${ascVisible('0')}\n`, 'the submitted ASCEND_DEVICE_ID and ASCEND_RT_VISIBLE_DEVICES are replaced');
    t.equal(await jobLog(d, b), `${ascVisible('1')}\n`);

    let r = await d.run('xrun', ['--device', 'asc', '-g', '3', '--', 'sh', '-c', SHOW_VISIBILITY]);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, `${ascVisible('0,1,2')}\n`, 'three chips (not the unhealthy one); ASCEND_DEVICE_ID is still 0');
    r = await d.run('xrun', ['-i', '2,0', '--', 'sh', '-c', SHOW_VISIBILITY], { env: { ASCEND_DEVICE_ID: '1' } });
    t.equal(r.stdout, `${ascVisible('2,0')}\n`, 'allocation order');
    r = await d.run('xrun', ['-g', '0', 'sh', '-c', SHOW_VISIBILITY], { env: { ASCEND_DEVICE_ID: '0' } });
    t.equal(r.stdout, `${ascVisible('-1', 'unset')}\n`, 'a CPU job: -1, and no ASCEND_DEVICE_ID');
  });

  t.test('an unhealthy chip is never allocated; it returns when the alarm clears', async (t) => {
    const four = await d.batch('echo "$ASCEND_RT_VISIBLE_DEVICES"', ['-g', '4']);
    const pinned = await d.batch('echo "$ASCEND_RT_VISIBLE_DEVICES"', ['-i', '3']);
    const r = await d.run('xrun', ['-g', '3', '--', 'sh', '-c', 'echo "$ASCEND_RT_VISIBLE_DEVICES"']);
    t.equal(r.stdout, '0,1,2\n', 'a later, smaller job gets the healthy chips');
    await probes();
    t.same([(await d.job(four)).state, (await d.job(pinned)).state], ['PENDING', 'PENDING']);
    fake.write([...CHIPS, 'health 3 1']); // a minor alarm: usable
    await d.waitState(pinned, 'COMPLETED', 10000);
    t.equal(await jobLog(d, pinned), '3\n');
    await d.waitState(four, 'COMPLETED', 10000);
    t.equal(await jobLog(d, four), '0,1,2,3\n');
    fake.write([...CHIPS, 'health 2 2']);
    await waitFor(async () => (await ascStatuses())[2] === 'unhealthy', { what: 'asc:2 unhealthy (major alarm)' });
    fake.write(CHIPS);
    await waitFor(async () => (await ascStatuses()).every((s) => s === 'idle'), { what: 'all idle' });
  });

  t.test('a process on a chip makes it busy; a failed or hung query makes it unknown', async (t) => {
    fake.write([...CHIPS, 'procs 2 4242 4343']);
    await waitFor(async () => (await ascStatuses())[2] === 'busy', { what: 'asc:2 busy' });
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'idle') + row(1, 'idle') + row(2, 'busy') + row(3, 'idle'));
    const id = await d.batch('echo "$ASCEND_RT_VISIBLE_DEVICES"', ['-i', '2']);
    await probes();
    t.equal((await d.job(id)).state, 'PENDING', 'waits while the chip is busy');

    fake.write([...CHIPS, `fail ${ASC_PROCS} -8005 2`]);
    await waitFor(async () => (await ascStatuses())[2] === 'unknown', { what: 'asc:2 unknown' });
    const error = `${ASC_PROCS}: inner error (-8005)`;
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'idle') + row(1, 'idle') + row(2, 'unknown') +
      `             error: ${error}\n` + row(3, 'idle'));
    t.same((await views(d))[2], { device: ascDevice(2), job: null, status: 'unknown', monitoring_error: error, nodes: [] });
    await probes();
    t.equal((await d.job(id)).state, 'PENDING', 'an unknown chip is not allocated');

    fake.write([...CHIPS, `hang ${ASC_HEALTH} 30 0`]);
    await waitFor(async () => (await ascStatuses())[0] === 'unknown', { timeout: 10000, what: 'asc:0 unknown' });
    const v = await views(d);
    t.same(v.map((x) => x.status), ['unknown', 'unknown', 'unknown', 'unknown'], 'every chip of the library');
    t.equal(v[0].monitoring_error, `${ASC_HEALTH} timed out after 1500 ms`);
    t.equal((await d.run('xqueue', [])).code, 0, 'clients are still answered');

    fake.write(CHIPS);
    await d.waitState(id, 'COMPLETED', 15000);
    t.equal(await jobLog(d, id), '2\n');
    await waitFor(async () => (await ascStatuses()).every((s) => s === 'idle'), { timeout: 10000, what: 'recovery' });
    t.notOk(fake.calls().some((c) => c.startsWith('CONCURRENT')), 'never two calls into the library at once');
    t.equal(d.output.split('\n').filter((l) => l.endsWith(`device asc:2 unknown: ${error}`)).length, 1, 'logged once');
  });
}

function mthreadsExtra(t: Tap, { d, dir }: Ctx): void {
  t.test('the --device values of another vendor are infeasible', async (t) => {
    const r = await d.run('xbatch', ['--device', 'nv', '--wrap', 'true']);
    t.equal(r.stderr, 'xlurm: requested 1 device(s), but no matching pool has enough devices\n', '--device nv');
  });

  t.test("a job's own use of the nodes does not keep the GPU from the next job", async (t) => {
    const m = path.join(dir, 'm2');
    const a = await d.batch(`exec 3<${mtml.node(2)}; ${waitMarker(m)}`, ['-i', '2']);
    await d.waitState(a, 'RUNNING');
    const b = await d.batch('true', ['-i', '2']);
    fs.writeFileSync(m, '');
    await d.waitState(a, 'COMPLETED');
    await d.waitState(b, 'COMPLETED', 10000);
  });
}

function mthreadsFaults(t: Tap, { d, fake }: Ctx): void {
  t.test('no node to watch, or a node missing on the host: unknown, never idle', async (t) => {
    fake.write([...mtml.gpu(0), `device 1 ${mttUuid(1)} "MTT S4000"`]);
    await waitFor(async () => (await statuses(d))[1] === 'unknown', { what: 'mtt:1 unknown' });
    t.equal((await info(d))[1].monitoring_error,
      'occupancy unknown: MTML has no process query and reports no device node to watch (mtmlDeviceGetGpuPath: Not supported (4))');
    const gone = path.join(path.dirname(mtml.node(0)), 'gone');
    fake.write([...mtml.gpu(0), `device 1 ${mttUuid(1)} "MTT S4000"`, `node 1 gpu ${gone}`]);
    await waitFor(async () => /cannot stat/.test((await info(d))[1].monitoring_error ?? ''), { what: 'missing node' });
    t.equal((await info(d))[1].monitoring_error, `occupancy unknown: cannot stat ${gone}: No such file or directory`);
    t.equal((await statuses(d))[0], 'idle');
    fake.write(mtml.gpus(2));
    await allIdle(d);
  });
}

function metaxFaults(t: Tap, { d, fake }: Ctx): void {
  const row = vendor('metax').row;

  t.test('an unavailable GPU is unhealthy and not allocated until it is available again', async (t) => {
    fake.write([...mxState(2), 'unavailable 1 3 "PCIe link down"']);
    await waitFor(async () => (await statuses(d))[1] === 'unhealthy', { what: 'mx:1 unhealthy' });
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'idle') + row(1, 'unhealthy'));
    const id = await d.batch('true', ['-i', '1']);
    await afterFullProbe(fake, (c) => c === MX_PROCS, 1);
    t.equal((await d.job(id)).state, 'PENDING', 'an unhealthy GPU is not allocated');
    fake.write([...mxState(2), 'state 1 0']);
    await afterFullProbe(fake, (c) => c === MX_PROCS, 1);
    t.equal((await statuses(d))[1], 'unhealthy', 'mxSmlGetDeviceState 0 is unavailable too');
    fake.write(mxState(2));
    await d.waitState(id, 'COMPLETED', 10000);
    t.equal(d.output.split('\n').filter((l) => l.endsWith('device mx:1 unhealthy')).length, 1, 'logged once');
  });

  t.test('an invalid process answer is unknown, never idle', async (t) => {
    fake.write([...mxState(2), 'proc 0 0']);
    await waitFor(async () => (await statuses(d))[0] === 'unknown', { what: 'mx:0 unknown' });
    t.equal((await info(d))[0].monitoring_error, `${MX_PROCS}: invalid answer (row 0 has PID 0)`);
    fake.write(mxState(2));
    await waitFor(async () => (await statuses(d))[0] === 'idle', { what: 'mx:0 idle again' });
  });
}

function ppuExtra(t: Tap, { d, fake }: Ctx): void {
  t.test('process rows are decoded whatever their size (16/24/32 bytes); a corrupt answer is unknown', async (t) => {
    for (const stride of [32, 16]) {
      fake.write([...ppuState(3), `stride ${stride}`, 'procs 2 77 78']);
      await waitFor(async () => (await statuses(d))[2] === 'busy', { what: `ppu:2 busy (stride ${stride})` });
      fake.write([...ppuState(3), `stride ${stride}`]);
      await waitFor(async () => (await statuses(d))[2] === 'idle', { what: `ppu:2 idle (stride ${stride})` });
    }
    fake.write([...ppuState(3), 'procs 2 0']);
    await waitFor(async () => (await statuses(d))[2] === 'unknown', { what: 'ppu:2 unknown' });
    t.equal((await info(d))[2].monitoring_error, 'hgmlDeviceGetComputeRunningProcesses: invalid answer (the rows match no known layout)');
    fake.write(ppuState(3));
    await waitFor(async () => (await statuses(d))[2] === 'idle', { what: 'ppu:2 idle again' });
  });
}

function hcuExtra(t: Tap, { d, fake, dir }: Ctx): void {
  const row = vendor('hcu').row;

  t.test('ROCR_VISIBLE_DEVICES follows -i while other HCUs are taken', async (t) => {
    const m = path.join(dir, 'm-hcu');
    const a = await d.batch(waitMarker(m), ['-g', '2']);
    await d.waitState(a, 'RUNNING');
    const b = await d.batch(SHOW_VISIBILITY, ['-i', '3,2']);
    await d.waitState(b, 'COMPLETED');
    t.equal(await jobLog(d, b), 'CUDA=0,1 ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=0,1 ROCR=3,2 ADI=unset\n');
    fs.writeFileSync(m, '');
    await d.waitState(a, 'COMPLETED');
  });

  t.test('unhealthy by hy-smi: not allocated until healthy again; logged', async (t) => {
    fake.write([...hcuState(4), 'health 1 Unhealthy']);
    await waitFor(async () => (await statuses(d))[1] === 'unhealthy', { what: 'hcu:1 unhealthy' });
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'idle') + row(1, 'unhealthy') + row(2, 'idle') + row(3, 'idle'));
    t.notOk('monitoring_error' in (await info(d))[1]);
    const id = await d.batch('true', ['-i', '1']);
    const other = await d.batch('echo "$ROCR_VISIBLE_DEVICES"', ['-g', '3']);
    await d.waitState(other, 'COMPLETED');
    t.equal(await jobLog(d, other), '0,2,3\n', 'the healthy ones still are allocated');
    await afterFullProbe(fake, isHealthRun, 1);
    t.equal((await d.job(id)).state, 'PENDING', 'an unhealthy HCU is not allocated');
    fake.write([...hcuState(4), 'health 1 healthy']);
    await d.waitState(id, 'COMPLETED', 10000);
    t.equal(d.output.split('\n').filter((l) => l.endsWith('device hcu:1 unhealthy')).length, 1, 'logged once');
  });
}

function hcuFaults(t: Tap, { d, fake }: Ctx): void {
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
    t.test(`health tool and query failures: ${lines.join('; ')}`, async (t) => {
      fake.write([...hcuState(3), ...lines]);
      const shown = await waitFor(async () => {
        const v = await info(d);
        return v.map((x) => x.status).join() === want.join() && v.every((x, i) => x.monitoring_error === errors[i]) ? v : undefined;
      }, { what: `statuses ${want.join()}` });
      t.same(shown.map((x) => x.monitoring_error), errors);
      fake.write(hcuState(3));
      await allIdle(d);
    });
  }

  t.test('a hung health tool: unknown at its deadline, killed, clients answered at once, recovery', async (t) => {
    const baseline = await xqueueCost(d);
    const before = fake.calls().filter(isHealthRun).length;
    fake.write([...hcuState(3), 'hysmi hang 30']);
    await waitFor(async () => (await statuses(d)).every((s) => s === 'unknown'), { timeout: 15000, what: 'all unknown' });
    t.same((await info(d)).map((v) => v.monitoring_error), Array(3).fill('hy-smi --healthcheck timed out after 3000 ms'));
    const hung = fake.calls().filter(isHealthRun).slice(before).map((c) => Number(c.split(' ')[1]));
    t.ok(hung.length >= 1, 'the tool ran');
    await waitFor(() => !pidAlive(hung[0]!), { what: `hung hy-smi ${hung[0]} killed` });
    await checkResponsive(t, d, baseline, 3000);
    fake.write(hcuState(3));
    await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { timeout: 15000, what: 'recovery' });
    t.ok(d.output.includes('device hcu:0 unknown: hy-smi --healthcheck timed out after 3000 ms'));
    t.ok(d.output.includes('device hcu:0 recovered: idle'));
  });
}
