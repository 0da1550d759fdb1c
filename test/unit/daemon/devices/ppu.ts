// T-Head PPU through HGML (devices/ppu.ts; docs/behaviour.md §9.1, §9.2): the factory on the fake HGML
// (test/fixtures/fake-hgml, with its libuki.so): id = index, visible = UUID; compute processes
// make a PPU busy.
import t from 'tap';
import { ppu } from '../../../../packages/daemon/src/devices/ppu';
import { fakeLibrary } from '../../../helpers/fixtures';
import { ADDON_BUILT, checkLibraryChoice } from '../../../helpers/backend-library';

const LIBRARY_ENV = 'XLURM_HGML_LIBRARY';
const SEARCH = ['/usr/local/PPU_SDK/lib/libhgml.so', '/usr/local/PPU_SDK/targets/x86_64-linux/lib/libhgml.so', 'libhgml.so'];

if (!ADDON_BUILT) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  t.test('the library: an absolute XLURM_HGML_LIBRARY, else the search list in order', async (t) => {
    checkLibraryChoice(t, ppu, LIBRARY_ENV, SEARCH, 'libhgml.so');
  });

  t.test('discovery and probes through the fake HGML', async (t) => {
    const u = (i: number) => `GPU-019ea108-0000-4000-8000-00000000000${i}`;
    const ppus = [`device 0 ${u(0)} "PPU-ZW810E"`, `device 1 ${u(1)} "PPU-ZW810E"`];
    const fake = fakeLibrary(t, 'ppu', ppus);
    Object.assign(process.env, fake.env);
    const b = ppu({ env: fake.env, log: () => undefined });
    t.teardown(() => b.close());
    t.equal(b.kind, 'ppu');
    t.same(b.devices, [0, 1].map((id) => ({ kind: 'ppu', id, name: 'PPU-ZW810E', visible: u(id), npu: null, chip: null })));
    t.same([...(await b.probe([0, 1]))], [[0, { status: 'idle' }], [1, { status: 'idle' }]]);
    fake.write([...ppus, 'procs 0 4242 4243']);
    t.same([...(await b.probe([0, 1]))], [[0, { status: 'busy', pids: [4242, 4243] }], [1, { status: 'idle' }]]);
  });

  // Samples (docs/behaviour.md §26.2): hgmlDeviceGetUtilizationRates and hgmlDeviceGetMemoryInfo, as NVML's.
  t.test('readings: utilisation and memory where HGML reports them; none without the symbols', async (t) => {
    const u = (i: number) => `GPU-019ea108-0000-4000-8000-00000000000${i}`;
    const ppus = [`device 0 ${u(0)} "PPU-ZW810E"`, `device 1 ${u(1)} "PPU-ZW810E"`];
    const state = [...ppus, 'util 0 81', 'mem 0 98304 3072', 'util 1 7'];
    for (const kind of ['ppu', 'ppu-minimal'] as const) {
      const fake = fakeLibrary(t, kind, state);
      Object.assign(process.env, fake.env);
      const b = ppu({ env: fake.env, log: () => undefined });
      t.teardown(() => b.close());
      await b.probe([0, 1]);
      if (kind === 'ppu') {
        t.same([...b.readings!()], [
          [0, { utilization: 0.81, memoryUsed: 3072 * 2 ** 20, memoryTotal: 98304 * 2 ** 20, memoryFree: 95232 * 2 ** 20 }],
          [1, { utilization: 0.07 }],
        ]);
        fake.write([...ppus, 'fail hgmlDeviceGetUtilizationRates 15 1']);
        t.same([...(await b.probe([0, 1]))], [[0, { status: 'idle' }], [1, { status: 'idle' }]], 'a failed reading is never a device error');
        t.same([...b.readings!()], [], 'and no figure at all, never 0');
      } else {
        t.same([...b.readings!()], [], 'a library without the optional symbols: no readings, never 0');
        t.notOk(fake.calls().some((c) => /Utilization|MemoryInfo/.test(c)));
      }
    }
  });
}
