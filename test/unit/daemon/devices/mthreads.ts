// Moore Threads through MTML (devices/mthreads.ts; docs/behaviour.md §9.1, §9.2): the factory on the
// fake MTML (test/fixtures/fake-mtml): id = index, visible = UUID; MTML has no process query, so
// a GPU is busy while a process holds one of its device nodes open (test/helpers/mtml.ts).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { mthreads } from '../../../../packages/daemon/src/devices/mthreads';
import { mtmlGpus, mttUuid } from '../../../helpers/mtml';
import { fakeLibrary } from '../../../helpers/fixtures';
import { skip } from '../../../helpers/tap';

const addon = path.resolve(__dirname, '../../../../native/build/Release/xlurm_native.node');
const LIBRARY_ENV = 'XLURM_MTML_LIBRARY';
const SEARCH = ['libmtml.so'];
const log = (logs: string[]) => (m: string) => { logs.push(m); };

/** Why opening through the search list failed, or undefined when this host has the vendor's library. */
function searchFailure(): string | undefined {
  if (SEARCH.some((p) => path.isAbsolute(p) && fs.existsSync(p))) return undefined;
  try { mthreads({ env: {}, log: () => undefined }).close(); } catch (e) { return (e as Error).message; }
  return undefined;
}

if (!fs.existsSync(addon)) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  t.test('the library: an absolute XLURM_MTML_LIBRARY, else the search list in order', async (t) => {
    t.throws(() => mthreads({ env: { [LIBRARY_ENV]: 'libmtml.so' }, log: () => undefined }),
      { message: `${LIBRARY_ENV} must be an absolute path: libmtml.so` });
    t.throws(() => mthreads({ env: { [LIBRARY_ENV]: '/nonexistent/libmtml.so' }, log: () => undefined }),
      { message: /^cannot load library: \/nonexistent\/libmtml\.so: cannot open shared object file: No such file or directory$/ }, 'the override only: no search');
    const why = searchFailure();
    if (why === undefined) skip(t, 'this host has the vendor library on the search list');
    else t.equal(why, `cannot load library: ${SEARCH.map((p) => `${p}: cannot open shared object file: No such file or directory`).join('; ')}`);
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
