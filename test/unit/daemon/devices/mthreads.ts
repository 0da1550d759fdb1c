// Moore Threads through MTML (devices/mthreads.ts; docs/behaviour.md §9.1, §9.2): the factory on the
// fake MTML (test/fixtures/fake-mtml): id = index, visible = UUID; MTML has no process query, so
// a GPU is busy while a process holds one of its device nodes open (test/helpers/mtml.ts).
import t from 'tap';
import { mthreads } from '../../../../packages/daemon/src/devices/mthreads';
import { mtmlGpus, mttUuid } from '../../../helpers/mtml';
import { fakeLibrary } from '../../../helpers/fixtures';
import { ADDON_BUILT, checkLibraryChoice } from '../../../helpers/backend-library';

const LIBRARY_ENV = 'XLURM_MTML_LIBRARY';
const SEARCH = ['libmtml.so'];

if (!ADDON_BUILT) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  t.test('the library: an absolute XLURM_MTML_LIBRARY, else the search list in order', async (t) => {
    checkLibraryChoice(t, mthreads, LIBRARY_ENV, SEARCH, 'libmtml.so');
  });

  t.test('discovery and probes through the fake MTML', async (t) => {
    const mtml = mtmlGpus(t);
    const fake = fakeLibrary(t, 'mthreads', mtml.gpus(2));
    Object.assign(process.env, fake.env);
    const b = mthreads({ env: fake.env, log: () => undefined });
    t.teardown(() => b.close());
    t.equal(b.kind, 'mthreads');
    t.same(b.devices, [0, 1].map((id) => ({ kind: 'mthreads', id, name: 'MTT S4000', visible: mttUuid(id), npu: null, chip: null })));
    t.same([...(await b.probe([0, 1]))], [[0, { status: 'idle' }], [1, { status: 'idle' }]]);
    const holder = await mtml.hold(mtml.node(1, 'render'));
    t.same([...(await b.probe([0, 1]))], [[0, { status: 'idle' }], [1, { status: 'busy', pids: [holder.pid!] }]], 'a process holds its render node, named by its pid');
    holder.kill('SIGKILL');
  });
}
