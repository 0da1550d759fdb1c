// Device nodes from discovery (docs/behaviour.md §24.8): NVML's minor number names /dev/nvidia<N>,
// DCMI's physical id /dev/davinci<N> (classic API only); a library that cannot say leaves the
// device without nodes (the key is then absent, as `group` is).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as native from '../../../native/ts/index';
import { fakeLibrary } from '../../helpers/fixtures';

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
