// NVIDIA through NVML (devices/nvidia.ts; docs/behaviour.md §9.1, §9.2): the factory on the fake NVML
// (test/fixtures/fake-nvml): id = NVML index, visible = UUID; compute processes make a GPU busy.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { nvidia } from '../../../../packages/daemon/src/devices/nvidia';
import { fakeLibrary } from '../../../helpers/fixtures';
import { skip } from '../../../helpers/tap';

const addon = path.resolve(__dirname, '../../../../native/build/Release/xlurm_native.node');
const LIBRARY_ENV = 'XLURM_NVML_LIBRARY';
const SEARCH = ['libnvidia-ml.so.1'];
const log = (logs: string[]) => (m: string) => { logs.push(m); };

/** Why opening through the search list failed, or undefined when this host has the vendor's library. */
function searchFailure(): string | undefined {
  if (SEARCH.some((p) => path.isAbsolute(p) && fs.existsSync(p))) return undefined;
  try { nvidia({ env: {}, log: () => undefined }).close(); } catch (e) { return (e as Error).message; }
  return undefined;
}

if (!fs.existsSync(addon)) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  t.test('the library: an absolute XLURM_NVML_LIBRARY, else the search list in order', async (t) => {
    t.throws(() => nvidia({ env: { [LIBRARY_ENV]: 'lib/libnvidia-ml.so.1' }, log: () => undefined }),
      { message: `${LIBRARY_ENV} must be an absolute path: lib/libnvidia-ml.so.1` });
    t.throws(() => nvidia({ env: { [LIBRARY_ENV]: '/nonexistent/libnvidia-ml.so.1' }, log: () => undefined }),
      { message: /^cannot load library: \/nonexistent\/libnvidia-ml\.so\.1: cannot open shared object file: No such file or directory$/ }, 'the override only: no search');
    const why = searchFailure();
    if (why === undefined) skip(t, 'this host has the vendor library on the search list');
    else t.equal(why, `cannot load library: ${SEARCH.map((p) => `${p}: cannot open shared object file: No such file or directory`).join('; ')}`);
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
