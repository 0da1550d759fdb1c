// Several vendors at once (docs/behaviour.md §5.1, §5.3, §6.4, §9.1, §9.3, §9.5): one daemon with `--backend auto`
// loads the fake NVML, MXSML, HGML and rocm_smi (+ hy-smi) together. The inventory and allocation
// follow the vendor priority (nvidia, ascend, mthreads, metax, ppu, hcu), a job never mixes
// vendors, `-i` ids present in several vendors need `--device`, and exclusions apply per id in
// every vendor.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SHOW_VISIBILITY, fakeDaemon, info, jobLog, waitMarker } from '../helpers/devices';
import { fakeLibrary } from '../helpers/fixtures';
import { waitFor } from '../helpers/wait';

const nvUuid = (i: number) => `GPU-7e57c0de-0000-4000-8000-00000000000${i}`;
const mxUuid = (i: number) => `GPU-3e7a0000-0000-4000-8000-00000000000${i}`;
const ppuUuid = (i: number) => `GPU-019ea108-0000-4000-8000-00000000000${i}`;
const lines = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i));

const nv = fakeLibrary(t, 'nvidia', lines(2, (i) => `device ${i} ${nvUuid(i)} "Fake H100 80GB"`));
const mx = fakeLibrary(t, 'metax', lines(2, (i) => `device ${i} ${mxUuid(i)} "MXC500"`));
const ppu = fakeLibrary(t, 'ppu', lines(2, (i) => `device ${i} ${ppuUuid(i)} "PPU-ZW810E"`));
const hcu = fakeLibrary(t, 'hcu', lines(3, (i) => `device ${i} 0x5a5e00000000000${i} "Hygon K100_AI"`));
const INVENTORY = ['nv:0', 'nv:1', 'mx:0', 'mx:1', 'ppu:0', 'ppu:1', 'hcu:0', 'hcu:1', 'hcu:2'];

t.test('four vendors under --backend auto', async (t) => {
  const { d, dir } = await fakeDaemon(t, [nv, mx, ppu, hcu], { backend: 'auto' });
  const labels = async () => (await info(d)).map((v) => `${({ nvidia: 'nv', metax: 'mx' } as Record<string, string>)[v.device.kind] ?? v.device.kind}:${v.device.id}`);
  const idle = () => waitFor(async () => (await info(d)).every((v) => v.status === 'idle'), { what: 'every device idle' });

  t.test('xinfo lists every vendor in priority order', async (t) => {
    await idle();
    t.same(await labels(), INVENTORY);
    const r = await d.run('xinfo', []);
    t.same(r.stdout.split('\n').slice(1, -1).map((l) => l.split(' ')[0]), INVENTORY, r.stdout);
    t.same(((await d.request('status', {})) as any).result.backends, ['nvidia', 'metax', 'ppu', 'hcu']);
  });

  t.test('allocation by priority, never mixing vendors; visibility per vendor', async (t) => {
    const m = path.join(dir, 'm1');
    const hold = (args: string[]) => d.batch(`${SHOW_VISIBILITY}; ${waitMarker(m)}`, args);
    const devs = async (id: number) => (await d.waitState(id, 'RUNNING')).devices.map((x: any) => `${x.kind}:${x.id}`);
    const a = await hold(['-g', '1']);
    t.same(await devs(a), ['nvidia:0'], 'the first vendor first');
    const b = await hold(['--device', 'mx', '-g', '2']);
    t.same(await devs(b), ['metax:0', 'metax:1']);
    const c = await hold(['--device', 'ppu', '-g', '2']);
    t.same(await devs(c), ['ppu:0', 'ppu:1']);
    // one NVIDIA GPU and three HCUs are free: two devices come from one vendor, the HCUs
    const e = await hold(['-g', '2']);
    t.same(await devs(e), ['hcu:0', 'hcu:1'], 'not nv:1 + hcu:0');
    // one NVIDIA GPU and one HCU are free: a two-device job waits; a one-device job overtakes it
    const f = await d.batch('echo "$CUDA_VISIBLE_DEVICES"', ['-g', '2']);
    const g = await hold(['-g', '1']);
    t.same(await devs(g), ['nvidia:1']);
    t.equal((await d.job(f)).state, 'PENDING', 'never mixes hcu:2 with another vendor');
    t.match((await d.run('xqueue', [])).stdout, new RegExp(`\\n${f} +\\S+ +PENDING +auto:2 `));

    const show = async (id: number) => waitFor(async () => (await jobLog(d, id)).trim());
    t.equal(await show(a), `CUDA=${nvUuid(0)} ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=unset`);
    t.equal(await show(b), 'CUDA=0,1 ASC=-1 MUSA=-1 MT=-1 MACA=0,1 HIP=-1 ROCR=-1 ADI=unset');
    t.equal(await show(c), `CUDA=${ppuUuid(0)},${ppuUuid(1)} ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=unset`);
    t.equal(await show(e), 'CUDA=0,1 ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=0,1 ROCR=0,1 ADI=unset');
    fs.writeFileSync(m, '');
    const jf = await d.waitState(f, 'COMPLETED');
    t.equal(new Set(jf.devices.map((x: any) => x.kind)).size, 1, 'one vendor');
    for (const id of [a, b, c, e, g]) await d.waitState(id, 'COMPLETED');
  });

  t.test('-i ids present in several vendors need --device', async (t) => {
    let r = await d.run('xbatch', ['-i', '0', '--wrap', 'true']);
    t.equal(r.code, 1);
    t.equal(r.stderr, 'xlurm: device ID 0 exists in several vendors (nv, mx, ppu, hcu); choose one with --device, e.g. --device nv\n');
    r = await d.run('xrun', ['-i', '1,0', 'true']);
    t.equal(r.stderr, 'xlurm: device IDs 1,0 exist in several vendors (nv, mx, ppu, hcu); choose one with --device, e.g. --device nv\n');
    const raw = await d.request('submit', { command: ['true'], cwd: dir, env: {}, name: 'x', count: 1, device_ids: [0] }) as any;
    t.equal(raw.error.code, 'INVALID_ARGUMENT');
    r = await d.run('xrun', ['--device', 'hcu', '-i', '1,0', '--', 'sh', '-c', 'echo "$ROCR_VISIBLE_DEVICES $HIP_VISIBLE_DEVICES"']);
    t.equal(r.stdout, '1,0 0,1\n', r.stderr);
    r = await d.run('xrun', ['-i', '2', '--', 'sh', '-c', 'echo "$ROCR_VISIBLE_DEVICES"']);
    t.equal(r.stdout, '2\n', 'an id only HCU has needs no --device');
    r = await d.run('xrun', ['--device', 'ppu', '-i', '2', 'true']);
    t.equal(r.stderr, 'xlurm: requested 1 device(s), but no matching pool has enough devices\n');
  });

  t.test('exclusions apply per id in every vendor', async (t) => {
    await idle();
    let r = await d.run('xrun', ['-g', '1', '-x', '0,1', '--', 'sh', '-c', 'echo "$ROCR_VISIBLE_DEVICES"']);
    t.equal(r.stdout, '2\n', '-x 0,1 leaves only hcu:2');
    r = await d.run('xrun', ['-g', '2', '-x', '1', '--', 'sh', '-c', 'echo "$ROCR_VISIBLE_DEVICES"']);
    t.equal(r.stdout, '0,2\n', 'no vendor but HCU has two devices besides id 1');

    r = await d.run('xlurm', ['exclude', '0']);
    t.equal(r.code, 0, r.stderr);
    const v = await info(d);
    t.same(v.filter((x) => x.status === 'disabled').map((x) => `${x.device.kind}:${x.device.id}`),
      ['nvidia:0', 'metax:0', 'ppu:0', 'hcu:0']);
    r = await d.run('xrun', ['-g', '1', '--', 'sh', '-c', 'echo "$CUDA_VISIBLE_DEVICES"']);
    t.equal(r.stdout, `${nvUuid(1)}\n`);
    r = await d.run('xbatch', ['--device', 'hcu', '-g', '3', '--wrap', 'true']);
    t.equal(r.stderr, 'xlurm: requested 3 device(s), but no matching pool has enough devices\n');
    r = await d.run('xbatch', ['--device', 'ppu', '-i', '0', '--wrap', 'true']);
    t.equal(r.code, 1, 'an excluded id is refused in the chosen vendor too');
    r = await d.run('xlurm', ['include', '0']);
    t.equal(r.code, 0, r.stderr);
    t.notOk((await info(d)).some((x) => x.status === 'disabled'));
  });
});
