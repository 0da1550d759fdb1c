// Device nodes from discovery (docs/behaviour.md §24.8): NVML's minor number names /dev/nvidia<N>,
// DCMI's physical id /dev/davinci<N> (classic API only); a library that cannot say leaves the
// device without nodes (the key is then absent, as `group` is).
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as native from '../../../native/ts/index';
import { fakeLibrary } from '../../helpers/fixtures';
import type { Tap } from '../../helpers/tap';

const built = fs.existsSync(path.resolve(__dirname, '../../../native/build/Release/xlurm_native.node'));
if (!built) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  t.test('NVML: nvmlDeviceGetMinorNumber names /dev/nvidia<minor>', async (t) => {
    const fake = fakeLibrary(t, 'nvidia', ['device 0 GPU-0000 a', 'device 1 GPU-0001 b', 'device 2 GPU-0002 c', 'minor 0 4', 'minor 1 0']);
    Object.assign(process.env, fake.env);
    const h = native.deviceOpen('nvidia', [fake.library], 2000);
    t.teardown(() => native.deviceClose(h, 2000));
    const raws = native.deviceDiscover(h, 2000);
    t.same(raws.map((r) => r.nodes), [['/dev/nvidia4'], ['/dev/nvidia0'], undefined], 'GPU 2 answers Not Supported: no nodes');
    t.ok(fake.calls().includes('nvmlDeviceGetMinorNumber'));
  });

  t.test('DCMI: the physical id names /dev/davinci<N> (classic API)', async (t) => {
    const fake = fakeLibrary(t, 'ascend', ['board 910B', 'chip 0 0 0 Ascend 910B3', 'chip 1 0 1 Ascend 910B3', 'phy 0 6', 'phy 1 7']);
    Object.assign(process.env, fake.env);
    const h = native.deviceOpen('ascend', [fake.library], 2000);
    t.teardown(() => native.deviceClose(h, 2000));
    t.same(native.deviceDiscover(h, 2000).map((r) => r.nodes), [['/dev/davinci6'], ['/dev/davinci7']]);
  });

  t.test('DCMI v2: no classic call, so no nodes', async (t) => {
    const fake = fakeLibrary(t, 'ascend', ['chip 0 0 0 Ascend 950', 'phy 0 6']);
    Object.assign(process.env, fake.env);
    const h = native.deviceOpen('ascend', [fake.library], 2000);
    t.teardown(() => native.deviceClose(h, 2000));
    t.same(native.deviceDiscover(h, 2000).map((r) => r.nodes), [undefined]);
    t.notOk(fake.calls().some((c) => c.startsWith('dcmi_')), 'no classic call on a v2 board');
  });
}

// DRM-based vendors: the card/render nodes sysfs lists under the GPU's PCI address
// (XLURM_SYSFS_ROOT points the addon at a tree made here).
if (built) {
  const sysfs = (t: Tap, bdfs: Record<string, string[]>): void => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-sysfs-'));
    for (const [bdf, names] of Object.entries(bdfs)) {
      for (const n of names) fs.mkdirSync(path.join(root, 'bus/pci/devices', bdf, 'drm', n), { recursive: true });
    }
    const before = process.env.XLURM_SYSFS_ROOT;
    process.env.XLURM_SYSFS_ROOT = root;
    t.teardown(() => {
      if (before === undefined) delete process.env.XLURM_SYSFS_ROOT; else process.env.XLURM_SYSFS_ROOT = before;
      fs.rmSync(root, { recursive: true, force: true });
    });
  };

  t.test('MetaX: the DRM nodes of the GPU\'s PCI address (mxSmlGetDeviceInfo bdfId)', async (t) => {
    sysfs(t, { '0000:10:00.0': ['card1', 'renderD128', 'controlD64'], '0000:11:00.0': ['renderD129', 'card2'] });
    const fake = fakeLibrary(t, 'metax', ['device 0 GPU-mx-0 MXC500', 'device 1 GPU-mx-1 MXC500', 'device 2 GPU-mx-2 MXC500']);
    Object.assign(process.env, fake.env);
    const h = native.deviceOpen('metax', [fake.library], 2000);
    t.teardown(() => native.deviceClose(h, 2000));
    t.same(native.deviceDiscover(h, 2000).map((r) => r.nodes),
      [['/dev/dri/card1', '/dev/dri/renderD128'], ['/dev/dri/card2', '/dev/dri/renderD129'], undefined], 'no drm entry: no nodes');
  });

  t.test('Hygon HCU: rsmi_dev_pci_id_get, then sysfs', async (t) => {
    sysfs(t, { '0000:21:00.0': ['card3', 'renderD130'] });
    const fake = fakeLibrary(t, 'hcu', ['device 0 0x1001 HCU K100', 'device 1 0x1002 HCU K100']);
    Object.assign(process.env, fake.env);
    const h = native.deviceOpen('hcu', [fake.library], 2000);
    t.teardown(() => native.deviceClose(h, 2000));
    t.same(native.deviceDiscover(h, 2000).map((r) => r.nodes), [undefined, ['/dev/dri/card3', '/dev/dri/renderD130']]);
  });
}

if (built) {
  t.test('HGML: hgmlDeviceGetMinorNumber names /dev/alixpu_ppu<minor>', async (t) => {
    const fake = fakeLibrary(t, 'ppu', ['device 0 PPU-0000 PPU', 'device 1 PPU-0001 PPU', 'minor 1 3']);
    Object.assign(process.env, fake.env);
    const h = native.deviceOpen('ppu', [fake.library], 2000);
    t.teardown(() => native.deviceClose(h, 2000));
    t.same(native.deviceDiscover(h, 2000).map((r) => r.nodes), [undefined, ['/dev/alixpu_ppu3']]);
  });
}

// The device's PCI address as sysfs names it (`pci`), for its NUMA node (docs/behaviour.md §24.3):
// NVML's nvmlDeviceGetPciInfo, Hygon's rsmi_dev_pci_id_get, MetaX's bdfId; absent where unknown.
if (built) {
  t.test('NVML: nvmlDeviceGetPciInfo gives the PCI address in sysfs form', async (t) => {
    const fake = fakeLibrary(t, 'nvidia', ['device 0 GPU-0000 a', 'device 1 GPU-0001 b', 'pci 0 0000:3B:00.0', 'pci 1 0001:af:1f.0']);
    Object.assign(process.env, fake.env);
    const h = native.deviceOpen('nvidia', [fake.library], 2000);
    t.teardown(() => native.deviceClose(h, 2000));
    const raws = native.deviceDiscover(h, 2000);
    t.same(raws.map((r) => r.pci), ['0000:3b:00.0', '0001:af:1f.0']);
    t.same(raws.map((r) => r.error), [null, null]);
  });

  t.test('NVML: a GPU whose PCI information is not supported has no address, and is no error', async (t) => {
    const fake = fakeLibrary(t, 'nvidia', ['device 0 GPU-0000 a', 'device 1 GPU-0001 b', 'pci 1 0000:04:00.0', 'fail nvmlDeviceGetPciInfo 999 1']);
    Object.assign(process.env, fake.env);
    const h = native.deviceOpen('nvidia', [fake.library], 2000);
    t.teardown(() => native.deviceClose(h, 2000));
    const raws = native.deviceDiscover(h, 2000);
    t.same(raws.map((r) => r.pci), [undefined, undefined]);
    t.same(raws.map((r) => r.error), [null, null]);
    t.notOk('pci' in raws[0]!, 'the key is absent, as nodes is');
  });

  t.test('Hygon HCU: the PCI address from rsmi_dev_pci_id_get', async (t) => {
    const fake = fakeLibrary(t, 'hcu', ['device 0 0x1001 HCU K100', 'device 1 0x1002 HCU K100']);
    Object.assign(process.env, fake.env);
    const h = native.deviceOpen('hcu', [fake.library], 2000);
    t.teardown(() => native.deviceClose(h, 2000));
    const raws = native.deviceDiscover(h, 2000);
    t.equal(raws[1]!.pci, '0000:21:00.0');
  });
}
