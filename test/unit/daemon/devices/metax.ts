// MetaX through MXSML (devices/metax.ts; docs/behaviour.md §9.1-§9.3): the factory on the fake MXSML
// (test/fixtures/fake-mxsml): id = index, visible = UUID; a compute process makes a GPU busy,
// an unavailable one is unhealthy.
import t from 'tap';
import { metax } from '../../../../packages/daemon/src/devices/metax';
import { fakeLibrary } from '../../../helpers/fixtures';
import { ADDON_BUILT, checkLibraryChoice } from '../../../helpers/backend-library';

const LIBRARY_ENV = 'XLURM_MXSML_LIBRARY';
const SEARCH = ['/opt/mxdriver/lib/libmxsml.so', '/opt/maca/lib/libmxsml.so', '/opt/mxn100/lib/libmxsml.so', 'libmxsml.so'];

if (!ADDON_BUILT) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  t.test('the library: an absolute XLURM_MXSML_LIBRARY, else the search list in order', async (t) => {
    checkLibraryChoice(t, metax, LIBRARY_ENV, SEARCH, 'libmxsml.so');
  });

  t.test('discovery and probes through the fake MXSML', async (t) => {
    const u = (i: number) => `GPU-3e7a0000-0000-4000-8000-00000000000${i}`;
    const gpus = [`device 0 ${u(0)} "MXC500"`, `device 1 ${u(1)} "MXC500"`, `device 2 ${u(2)} "MXC500"`];
    const fake = fakeLibrary(t, 'metax', gpus);
    Object.assign(process.env, fake.env);
    const b = metax({ env: fake.env, log: () => undefined });
    t.teardown(() => b.close());
    t.equal(b.kind, 'metax');
    t.same(b.devices, [0, 1, 2].map((id) => ({ kind: 'metax', id, name: 'MXC500', visible: u(id), npu: null, chip: null })));
    t.same([...(await b.probe([0, 1, 2]))], [[0, { status: 'idle' }], [1, { status: 'idle' }], [2, { status: 'idle' }]]);
    fake.write([...gpus, 'proc 4242 1', 'unavailable 2 1 ecc error']);
    t.same([...(await b.probe([0, 1, 2]))], [[0, { status: 'idle' }], [1, { status: 'busy', pids: [4242] }], [2, { status: 'unhealthy' }]]);
  });
}
