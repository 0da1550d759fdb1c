// Huawei Ascend through DCMI (devices/ascend.ts; docs/behaviour.md §9.1-§9.3): the factory on the fake
// DCMI (test/fixtures/fake-dcmi): one device per compute chip sorted by logical id, visible = the
// logical id, npu = card, chip = chip index; a major alarm is unhealthy, a process busy.
import t from 'tap';
import { ascend } from '../../../../packages/daemon/src/devices/ascend';
import { fakeLibrary } from '../../../helpers/fixtures';
import { ADDON_BUILT, checkLibraryChoice } from '../../../helpers/backend-library';

const LIBRARY_ENV = 'XLURM_DCMI_LIBRARY';
const SEARCH = ['/usr/local/dcmi/libdcmi.so', '/usr/local/Ascend/driver/lib64/driver/libdcmi.so', 'libdcmi.so'];

if (!ADDON_BUILT) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  t.test('the library: an absolute XLURM_DCMI_LIBRARY, else the search list in order', async (t) => {
    checkLibraryChoice(t, ascend, LIBRARY_ENV, SEARCH, 'libdcmi.so');
  });

  t.test('discovery and probes through the fake DCMI', async (t) => {
    const chips = ['chip 3 0 1 Ascend 910B3', 'chip 3 1 0 Ascend 910B3', 'mcu 3 2'];
    const fake = fakeLibrary(t, 'ascend', chips);
    Object.assign(process.env, fake.env);
    const b = ascend({ env: fake.env, log: () => undefined });
    t.teardown(() => b.close());
    t.equal(b.kind, 'ascend');
    t.same(b.devices, [
      { kind: 'ascend', id: 0, name: 'Ascend 910B3', visible: '0', npu: 3, chip: 1 },
      { kind: 'ascend', id: 1, name: 'Ascend 910B3', visible: '1', npu: 3, chip: 0 },
    ], 'the MCU is no device');
    t.same([...(await b.probe([0, 1]))], [[0, { status: 'idle' }], [1, { status: 'idle' }]]);
    fake.write([...chips, 'procs 0 4242', 'health 1 2']);
    t.same([...(await b.probe([0, 1]))], [[0, { status: 'busy', pids: [4242] }], [1, { status: 'unhealthy' }]]);
  });
}
