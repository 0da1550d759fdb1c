// What a slice job gets (docs/behaviour.md §25.3): the exact variables per vendor, LD_PRELOAD appended, safe private files.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Device } from '@xlurm/protocol';
import { JobShares, shareEnv } from '../../../../packages/daemon/src/sharing/job-share';
import { checkShare } from '../../../../packages/daemon/src/sharing/check';
import { sharingSettings } from '../../../../packages/daemon/src/sharing/settings';
import type { StoredJob } from '../../../../packages/daemon/src/store/store';

const G = 1024 ** 3;
const nv = (id: number): Device => ({ kind: 'nvidia', id, name: 'GPU', visible: `GPU-${id}`, npu: null, chip: null });
const asc = (id: number, npu: number): Device => ({ kind: 'ascend', id, name: 'Ascend', visible: String(id), npu, chip: 0 });
const vendor = { library: '/opt/hami/libvgpu.so', sharedRegionDir: null, policy: 'spatial' };
const jobOf = (devices: Device[], env: Record<string, string> = {}, share = { mem: 8 * G, compute: 30 }) => ({
  id: 7, owner: { uid: process.getuid!(), gid: process.getgid!(), name: 'me' }, devices,
  spec: { command: ['true'], cwd: '/', env, name: 'x', count: devices.length, share },
}) as unknown as StoredJob;

t.test('NVIDIA (HAMi-core): a memory and SM limit per device of the job\'s own view, the shared cache, LD_PRELOAD appended', async (t) => {
  const env = shareEnv(jobOf([nv(3), nv(5)], { LD_PRELOAD: '/usr/lib/libmine.so' }), vendor, '/s/7/vgpu.cache', '/s/hami');
  t.same(env, {
    LD_PRELOAD: '/usr/lib/libmine.so:/opt/hami/libvgpu.so', XLURM_SHARE_MEM_MB: '8192', XLURM_SHARE_COMPUTE: '30',
    CUDA_DEVICE_MEMORY_LIMIT_0: '8192m', CUDA_DEVICE_SM_LIMIT_0: '30', CUDA_DEVICE_MEMORY_LIMIT_1: '8192m', CUDA_DEVICE_SM_LIMIT_1: '30',
    CUDA_DEVICE_MEMORY_SHARED_CACHE: '/s/7/vgpu.cache',
  });
});

t.test('Ascend (HAMi-vnpu-core): the NPU variables, the card\'s global registry and the private local file', async (t) => {
  const env = shareEnv(jobOf([asc(4, 2)]), { ...vendor, library: '/opt/hami/libvnpu.so', policy: 'temporal' }, '/s/7/vnpu.local', '/r');
  t.same(env, {
    LD_PRELOAD: '/opt/hami/libvnpu.so', XLURM_SHARE_MEM_MB: '8192', XLURM_SHARE_COMPUTE: '30',
    NPU_MEMORY_LIMIT_MB: '8192', NPU_COMPUTE_LIMIT: '30', NPU_SCHED_POLICY: 'temporal',
    NPU_GLOBAL_SHM_PATH: '/r/2_global_registry', NPU_LOCAL_SHM_PATH: '/s/7/vnpu.local',
  });
});

t.test('the private directory (0700) and file (0600) are made before the start and removed at the end; a stale one is replaced', async (t) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'xlurm-share-'));
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  const settings = sharingSettings({ enabled: true, ascend: { library: '/opt/libvnpu.so', shared_region_dir: path.join(home, 'regions') } });
  const shares = new JobShares(home, () => settings, process.geteuid!(), () => {});
  // Left by an earlier run of the same id: a link to somewhere else must not be followed.
  fs.mkdirSync(path.join(home, 'share', '7'), { recursive: true });
  fs.symlinkSync('/etc/passwd', path.join(home, 'share', '7', 'vnpu.local'));
  const env = shares.setup(jobOf([asc(0, 5)]))!;
  const local = env.NPU_LOCAL_SHM_PATH!;
  t.equal(local, path.join(home, 'share', '7', 'vnpu.local'));
  t.ok(fs.lstatSync(local).isFile());
  t.equal(fs.statSync(local).mode & 0o777, 0o600);
  t.equal(fs.statSync(path.dirname(local)).mode & 0o777, 0o700);
  t.equal(fs.statSync(path.join(home, 'share')).mode & 0o777, 0o711);
  const region = env.NPU_GLOBAL_SHM_PATH!;
  t.equal(region, path.join(home, 'regions', '5_global_registry'));
  t.equal(fs.statSync(region).mode & 0o777, 0o666);
  t.equal(fs.statSync(path.dirname(region)).mode & 0o7777, 0o711);
  shares.remove(7);
  t.notOk(fs.existsSync(path.dirname(local)), 'private files removed');
  t.ok(fs.existsSync(region), "the card's region stays for its other slices");
  t.equal(shares.setup(jobOf([])), null, 'a job without devices has no slice');
});

t.test("a card's region left by someone else (another owner, a hard link, a link, a directory) is replaced by the daemon's own", async (t) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'xlurm-share-'));
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  const regions = path.join(home, 'deep', 'regions');
  const settings = sharingSettings({ enabled: true, ascend: { library: '/opt/libvnpu.so', shared_region_dir: regions } });
  const shares = new JobShares(home, () => settings, process.geteuid!(), () => {});
  fs.mkdirSync(regions, { recursive: true });
  const victim = path.join(home, 'victim');
  fs.writeFileSync(victim, 'secret', { mode: 0o600 });
  fs.linkSync(victim, path.join(regions, '0_global_registry'));          // a hard link to another file
  fs.symlinkSync(victim, path.join(regions, '1_global_registry'));       // a symbolic link
  fs.mkdirSync(path.join(regions, '2_global_registry'));                 // not a file
  fs.writeFileSync(path.join(regions, '3_global_registry'), 'x');
  if (process.geteuid!() === 0) fs.chownSync(path.join(regions, '3_global_registry'), 65534, 65534); // another user's
  const env = shares.setup(jobOf([asc(0, 0), asc(1, 1), asc(2, 2), asc(3, 3)]))!;
  t.equal(env.NPU_GLOBAL_SHM_PATH, path.join(regions, '0_global_registry'));
  for (const card of [0, 1, 2, 3]) {
    const st = fs.lstatSync(path.join(regions, `${card}_global_registry`));
    t.ok(st.isFile(), `card ${card}: a plain file`);
    t.same([st.uid, st.nlink, st.mode & 0o777], [process.geteuid!(), 1, 0o666], `card ${card}: the daemon's own, mode 0666`);
  }
  t.equal(fs.readFileSync(victim, 'utf8'), 'secret', 'the linked file untouched');
  t.equal(fs.statSync(victim).mode & 0o777, 0o600);
  t.equal(fs.statSync(regions).mode & 0o7777, 0o711);
  shares.remove(7);
});

t.test('submission: refused when sharing is off, or the vendor has no library', async (t) => {
  const req = { count: 1, kind: null, timeLimit: null, share: { mem: G, compute: 100 } };
  t.same(checkShare(req, undefined, [nv(0)]), { code: 'INFEASIBLE', message: 'sharing is not enabled on this host' });
  t.same(checkShare(req, sharingSettings({ enabled: false, nvidia: { library: '/x.so' } }), [nv(0)]), { code: 'INFEASIBLE', message: 'sharing is not enabled on this host' });
  t.same(checkShare(req, sharingSettings({ enabled: true, ascend: { library: '/x.so' } }), [nv(0)]), { code: 'INFEASIBLE', message: 'sharing is not available for nv devices' });
  t.equal(checkShare(req, sharingSettings({ enabled: true, nvidia: { library: '/x.so' } }), [nv(0)]), null);
  t.equal(checkShare({ ...req, share: undefined } as never, undefined, [nv(0)]), null, 'whole devices need no sharing');
});

t.test('submission: a slice larger than every card that could hold it is refused (it would wait for ever)', async (t) => {
  const s = sharingSettings({ enabled: true, nvidia: { library: '/x.so' } });
  const cards = [nv(0), nv(1)];
  const sizes = new Map([[0, 16 * G], [1, 24 * G]]);
  const total = (d: { id: number }) => sizes.get(d.id);
  const req = (mem: number, deviceIds?: number[]) => ({ count: 1, kind: null, timeLimit: null, share: { mem, compute: 50 }, ...(deviceIds ? { deviceIds } : {}) });
  t.same(checkShare(req(32 * G), s, cards, total),
    { code: 'INFEASIBLE', message: 'a slice of 32G is larger than any card that could hold it (the largest has 24G)' });
  t.equal(checkShare(req(24 * G), s, cards, total), null, 'as large as the largest card: it can start');
  t.same(checkShare(req(20 * G, [0]), s, cards, total),
    { code: 'INFEASIBLE', message: 'a slice of 20G is larger than any card that could hold it (the largest has 16G)' }, 'only the cards named with -i count');
  t.equal(checkShare(req(32 * G), s, cards, (d) => (d.id === 0 ? 16 * G : undefined)), null, 'a card of unknown size might hold it: not refused');
  t.equal(checkShare(req(32 * G), s, cards), null, 'no sizes known: not refused');
});
