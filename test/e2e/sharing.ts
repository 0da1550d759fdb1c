// Card sharing end to end (docs/behaviour.md §25): the real daemon on the fake NVML and DCMI with
// per-device memory, [sharing] naming the fake sharing library (test/fixtures/fake-preload), whose
// constructor records what each job process saw. Packing, whole vs sliced, foreign memory, the
// exact variables per vendor, the library loaded, private files removed, and the refusals.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fakeDaemon, info, waitMarker } from '../helpers/devices';
import { buildFakePreload, fakeLibrary } from '../helpers/fixtures';
import { waitFor } from '../helpers/wait';
import type { Daemon } from '../helpers/daemon';
import type { Tap } from '../helpers/tap';

const GPUS = [0, 1].map((i) => `device ${i} GPU-5a4ed000-0000-4000-8000-00000000000${i} "Fake L4 16GB"`);
const MEM = ['mem 0 16384 0', 'mem 1 16384 0'];

async function sharingDaemon(t: Tap, kind: 'nvidia' | 'ascend', state: string[], table: string): Promise<{ d: Daemon; dir: string; fake: ReturnType<typeof fakeLibrary> }> {
  const fake = fakeLibrary(t, kind, state);
  const config = path.join(fs.mkdtempSync(path.join(fake.dir, 'cfg-')), 'xlurm.toml');
  fs.writeFileSync(config, table);
  const { d, dir } = await fakeDaemon(t, [fake], { backend: kind, args: ['--config', config] });
  return { d, dir, fake };
}

const nvTable = (lib: string) => `[sharing]\nenabled = true\n[sharing.nvidia]\nlibrary = "${lib}"\n`;
const ids = (j: Record<string, any>) => (j.devices as Array<{ id: number }>).map((x) => x.id);

/** The blocks the fake library appended, one per process that loaded it. */
function records(file: string): Array<Record<string, string> & { opened: string[]; denied: string[] }> {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const out: Array<Record<string, string> & { opened: string[]; denied: string[] }> = [];
  let cur: any;
  for (const line of text.split('\n')) {
    if (line.startsWith('loaded ')) { cur = { loaded: line.slice(7), opened: [], denied: [] }; continue; }
    if (!cur) continue;
    if (line === 'end') { out.push(cur); cur = undefined; continue; }
    if (line.startsWith('opened ')) cur.opened.push(line.slice(7));
    else if (line.startsWith('denied ')) cur.denied.push(line.slice(7));
    else { const i = line.indexOf('='); cur[line.slice(0, i)] = line.slice(i + 1); }
  }
  return out;
}

t.test('two slices packed on one card and a third on the next; xinfo shows them; a whole-card job waits while a card is sliced', async (t) => {
  const lib = buildFakePreload();
  const { d, dir } = await sharingDaemon(t, 'nvidia', [...GPUS, ...MEM], nvTable(lib));
  const marker = path.join(dir, 'go');
  const a = await d.batch(waitMarker(marker), ['--share', '6G,40%']);
  const b = await d.batch(waitMarker(marker), ['--share', '6G,40']);
  const c = await d.batch(waitMarker(marker), ['--share', '6G,40%']);
  t.same(ids(await d.waitState(a, 'RUNNING')), [0]);
  t.same(ids(await d.waitState(b, 'RUNNING')), [0], 'packed beside the first');
  t.same(ids(await d.waitState(c, 'RUNNING')), [1], 'nv:0 has 4G left: the next card');
  const j = await d.job(a);
  t.same(j.share, { mem: 6 * 1024 ** 3, compute: 40 });
  const views = await info(d);
  t.equal(views[0].status, 'shared');
  t.same(views[0].slices, [{ job: a, mem: 6 * 1024 ** 3, compute: 40 }, { job: b, mem: 6 * 1024 ** 3, compute: 40 }]);
  t.equal(views[0].job, null);
  const table = (await d.run('xinfo', [])).stdout;
  t.match(table, new RegExp(`nv:0 +shared +${a},${b} `));
  t.match(table, `slices: job ${a} 6G 40%, job ${b} 6G 40%`);
  t.match((await d.run('xqueue', [String(a)])).stdout, '\nShare: 6G and 40% of each device\n');
  const summary = (await d.jobs()).find((x) => x.id === a)!;
  t.same(summary.share, { mem: 6 * 1024 ** 3, compute: 40 });

  // A whole-card job waits while the cards are sliced, with a reason that says so.
  const whole = await d.batch('true', ['-g', '1']);
  const r = await waitFor(async () => { const x = await d.job(whole); return x.reason?.code === 'Resources' ? x.reason : undefined; }, { what: 'Resources' });
  t.equal(r.message, `needs 1 nv device: nv:0 shared by jobs ${a},${b} (slices), nv:1 shared by job ${c} (slices)`);
  fs.writeFileSync(marker, '');
  for (const id of [a, b, c]) await d.waitState(id, 'COMPLETED');
  t.equal(ids(await d.waitState(whole, 'COMPLETED')).length, 1, 'whole once the slices are gone');
});

t.test('a slice waits while its card is held whole; memory a foreign process holds blocks a slice that does not fit', async (t) => {
  const lib = buildFakePreload();
  const { d, dir, fake } = await sharingDaemon(t, 'nvidia', [GPUS[0]!, MEM[0]!], nvTable(lib));
  const marker = path.join(dir, 'go');
  const whole = await d.batch(waitMarker(marker), ['-g', '1']);
  await d.waitState(whole, 'RUNNING');
  const s = await d.batch('true', ['--share', '2G,10%']);
  const r = await waitFor(async () => { const x = await d.job(s); return x.reason?.code === 'Resources' ? x.reason : undefined; }, { what: 'Resources' });
  t.match(r.message, new RegExp(`^needs a slice of 2G, 10% on 1 nv device: nv:0 held by job ${whole}( \\(\\w+\\))?$`));
  fs.writeFileSync(marker, '');
  await d.waitState(whole, 'COMPLETED');
  await d.waitState(s, 'COMPLETED');

  // 12 GiB taken by a process xlurm did not start: busy for whole jobs, 4G of room for slices.
  fake.write([GPUS[0]!, 'mem 0 16384 12288', 'procs 0 4242']);
  await waitFor(async () => (await info(d))[0].status === 'busy', { what: 'busy' });
  const big = await d.batch('true', ['--share', '6G,10%']);
  const why = await waitFor(async () => { const x = await d.job(big); return x.reason?.code === 'Resources' ? x.reason : undefined; }, { what: 'Resources' });
  t.equal(why.message, 'needs a slice of 6G, 10% on 1 nv device: nv:0 has 4G, 100% left (memory in use by processes not started by xlurm counts)');
  const small = await d.batch('true', ['--share', '3G,10%']);
  await d.waitState(small, 'COMPLETED');
  t.equal((await d.job(big)).state, 'PENDING');
  // The foreign process frees memory but stays: only the memory figure changes, and that wakes the slice.
  fake.write([GPUS[0]!, 'mem 0 16384 4096', 'procs 0 4242']);
  await d.waitState(big, 'COMPLETED');
  t.equal((await info(d))[0].status, 'busy', 'still busy for whole-card jobs');
});

t.test('NVIDIA: the exact variables, LD_PRELOAD appended, the library loaded, its private file the owner\'s and removed at the end', async (t) => {
  const lib = buildFakePreload();
  const { d, dir } = await sharingDaemon(t, 'nvidia', [...GPUS, ...MEM], nvTable(lib));
  const record = path.join(dir, 'record');
  const id = await d.batch('true', ['--share', '1536M,25%', '-g', '2'], { env: { XLURM_FAKE_PRELOAD_RECORD: record, LD_PRELOAD: '' } });
  await d.waitState(id, 'COMPLETED');
  const [first] = records(record);
  t.ok(first, 'the library was loaded into the job');
  const cache = path.join(d.home, 'share', String(id), 'vgpu.cache');
  const { loaded, opened, denied, ...vars } = first!;
  t.same(vars, {
    LD_PRELOAD: lib, XLURM_SHARE_MEM_MB: '1536', XLURM_SHARE_COMPUTE: '25',
    CUDA_DEVICE_MEMORY_LIMIT_0: '1536m', CUDA_DEVICE_SM_LIMIT_0: '25', CUDA_DEVICE_MEMORY_LIMIT_1: '1536m', CUDA_DEVICE_SM_LIMIT_1: '25',
    CUDA_DEVICE_MEMORY_SHARED_CACHE: cache,
    CUDA_VISIBLE_DEVICES: 'GPU-5a4ed000-0000-4000-8000-000000000000,GPU-5a4ed000-0000-4000-8000-000000000001',
    ASCEND_RT_VISIBLE_DEVICES: '-1',
  });
  t.same(opened, [cache], 'the job could open its private file');
  t.same(denied, []);
  t.notOk(fs.existsSync(path.dirname(cache)), 'private files removed once the job ended');

  // A submitted LD_PRELOAD comes first.
  const keep = path.join(dir, 'keep.so');
  fs.copyFileSync(lib, keep);
  const rec2 = path.join(dir, 'record2');
  const id2 = await d.batch('true', ['--share', '1G'], { env: { XLURM_FAKE_PRELOAD_RECORD: rec2, LD_PRELOAD: keep } });
  await d.waitState(id2, 'COMPLETED');
  // (xbatch itself ran with that LD_PRELOAD too: the job's block is the one with the share.)
  t.equal(records(rec2).find((x) => x.XLURM_SHARE_MEM_MB)!.LD_PRELOAD, `${keep}:${lib}`);
});

t.test('Ascend (fake DCMI with HBM): the NPU variables, the card\'s shared region and the private local file', async (t) => {
  const lib = buildFakePreload();
  const region = path.join(fs.mkdtempSync(path.join('/tmp', 'xl-hami-')), 'hami');
  t.teardown(() => fs.rmSync(path.dirname(region), { recursive: true, force: true }));
  const { d, dir } = await sharingDaemon(t, 'ascend', ['chip 3 0 2 910B3 Ascend910B3', 'hbm 2 65536 1024'],
    `[sharing]\nenabled = true\n[sharing.ascend]\nlibrary = "${lib}"\nshared_region_dir = "${region}"\npolicy = "fixed-share"\n`);
  const record = path.join(dir, 'record');
  const id = await d.batch('true', ['--share', '8G,50%'], { env: { XLURM_FAKE_PRELOAD_RECORD: record, LD_PRELOAD: '' } });
  await d.waitState(id, 'COMPLETED');
  const [first] = records(record);
  t.ok(first, 'the library was loaded into the job');
  const local = path.join(d.home, 'share', String(id), 'vnpu.local');
  const global = path.join(region, '3_global_registry');
  const { loaded, opened, denied, ...vars } = first!;
  t.same(vars, {
    LD_PRELOAD: lib, XLURM_SHARE_MEM_MB: '8192', XLURM_SHARE_COMPUTE: '50',
    NPU_MEMORY_LIMIT_MB: '8192', NPU_COMPUTE_LIMIT: '50', NPU_SCHED_POLICY: 'fixed-share',
    NPU_GLOBAL_SHM_PATH: global, NPU_LOCAL_SHM_PATH: local,
    CUDA_VISIBLE_DEVICES: '-1', ASCEND_RT_VISIBLE_DEVICES: '2',
  });
  t.same(opened.sort(), [local, global].sort());
  t.equal(fs.statSync(region).mode & 0o7777, 0o711);
  t.notOk(fs.existsSync(path.dirname(local)), 'private files removed');
});

t.test('refusals: bad values, sharing off, a vendor without a library', async (t) => {
  const off = await sharingDaemon(t, 'nvidia', [...GPUS, ...MEM], '');
  let r = await off.d.run('xbatch', ['--share', '1G', '--wrap', 'true']);
  t.equal(r.stderr, 'xlurm: sharing is not enabled on this host\n');
  t.not(r.code, 0);
  r = await off.d.run('xrun', ['--immediate', '--share', '1G', 'true']);
  t.equal(r.code, 69, 'never fits: --immediate exits 69');
  r = await off.d.run('xbatch', ['--share', '1G,101%', '--wrap', 'true']);
  t.match(r.stderr, 'share compute must be between 1 and 100');
  r = await off.d.run('xbatch', ['--share', 'much', '--wrap', 'true']);
  t.match(r.stderr, "invalid size 'much': use a number with K, M, G or T");
  const other = await sharingDaemon(t, 'nvidia', [...GPUS, ...MEM], '[sharing]\nenabled = true\n[sharing.ascend]\nlibrary = "/usr/local/lib/libvnpu.so"\n');
  r = await other.d.run('xbatch', ['--share', '1G', '--wrap', 'true']);
  t.equal(r.stderr, 'xlurm: sharing is not available for nv devices\n');
  // xlurm config show lists the table in force.
  const shown = JSON.parse((await other.d.run('xlurm', ['config', 'show', '--json'])).stdout) as { config: Record<string, unknown> };
  t.same(shown.config.sharing, { enabled: true, ascend: { library: '/usr/local/lib/libvnpu.so', shared_region_dir: path.join(other.d.home, 'hami'), policy: 'spatial' } });
  t.match((await other.d.run('xlurm', ['config', 'show'])).stdout, 'ascend.library = "/usr/local/lib/libvnpu.so"');
});

t.test('a slice is accounted by its share of the card\'s memory: the device-seconds metric, xlurm stats, the report\'s data', async (t) => {
  const lib = buildFakePreload();
  const { d, dir } = await sharingDaemon(t, 'nvidia', [GPUS[0]!, MEM[0]!], nvTable(lib));
  const marker = path.join(dir, 'go');
  const user = os.userInfo().username;
  const deviceSeconds = async () => {
    const text = (await d.run('xlurm', ['metrics'])).stdout;
    const m = new RegExp(`^xlurm_user_device_seconds_total\\{user="${user}"\\} (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : 0;
  };
  const a = await d.batch(waitMarker(marker), ['--share', '4G']); // 4G of the card's 16G: a quarter of a device
  const started = (await d.waitState(a, 'RUNNING')).started_at as number;
  // While it runs: a quarter of a device-second per second (a whole device would be one per second).
  const running = await waitFor(async () => { const v = await deviceSeconds(); return v > 0 ? v : undefined; }, { what: 'device seconds' });
  t.ok(running <= 0.25 * (Date.now() / 1000 - started + 1), `${running} device-seconds after ${Math.round(Date.now() / 1000 - started)} s`);
  fs.writeFileSync(marker, '');
  const j = await d.waitState(a, 'COMPLETED');
  const run = j.result.finished_at - j.started_at;
  t.equal(await deviceSeconds(), run * 0.25, 'the counter: run time × 1/4');
  const r = await d.run('xlurm', ['stats', '--json']);
  const s = JSON.parse(r.stdout);
  const hours = Math.round((run * 0.25 / 3600) * 1e6) / 1e6;
  t.equal(s.users[0].device_hours, hours, 'xlurm stats: hours × share');
  t.equal(s.host.device_hours, hours);
  const data = (await d.request('report', { days: 1 }) as any).result;
  t.equal(data.jobs.find((x: any) => x.id === a).device_weight, 0.25, 'the report\'s data carries the weight');
});
