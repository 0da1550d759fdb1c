// NVIDIA through NVML (devices/nvidia.ts; docs/behaviour.md §9.1, §9.2): the factory on the fake NVML
// (test/fixtures/fake-nvml): id = NVML index, visible = UUID; compute processes make a GPU busy.
import t from 'tap';
import { nvidia } from '../../../../packages/daemon/src/devices/nvidia';
import { fakeLibrary } from '../../../helpers/fixtures';
import { ADDON_BUILT, checkLibraryChoice } from '../../../helpers/backend-library';

const LIBRARY_ENV = 'XLURM_NVML_LIBRARY';
const SEARCH = ['libnvidia-ml.so.1'];
const log = (logs: string[]) => (m: string) => { logs.push(m); };

if (!ADDON_BUILT) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  t.test('the library: an absolute XLURM_NVML_LIBRARY, else the search list in order', async (t) => {
    checkLibraryChoice(t, nvidia, LIBRARY_ENV, SEARCH, 'lib/libnvidia-ml.so.1');
  });

  t.test('discovery and probes through the fake NVML', async (t) => {
    const u = (i: number) => `GPU-7e57c0de-0000-4000-8000-00000000000${i}`;
    const gpus = [`device 0 ${u(0)} "Fake H100 80GB"`, `device 1 ${u(1)} "Fake H100 80GB"`];
    const fake = fakeLibrary(t, 'nvidia', gpus);
    Object.assign(process.env, fake.env);
    const logs: string[] = [];
    const b = nvidia({ env: fake.env, log: log(logs) });
    t.teardown(() => b.close());
    t.equal(b.kind, 'nvidia');
    t.same(b.devices, [0, 1].map((id) => ({ kind: 'nvidia', id, name: 'Fake H100 80GB', visible: u(id), npu: null, chip: null })));
    t.same([...(await b.probe([0, 1]))], [[0, { status: 'idle' }], [1, { status: 'idle' }]]);
    fake.write([...gpus, 'procs 1 4242']);
    t.same([...(await b.probe([0, 1]))], [[0, { status: 'idle' }], [1, { status: 'busy', pids: [4242] }]]);
    fake.write([`device 0 ${u(0)} "Fake H100 80GB"`, `device 1 ${u(2)} "Fake H100 80GB"`]);
    t.match((await b.probe([1])).get(1), { status: 'unknown', error: /identity changed/ }, 'another GPU at the same index');
    t.same(logs, []);
  });
}
