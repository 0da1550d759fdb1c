// T-Head PPU through HGML (devices/ppu.ts; docs/behaviour.md §9.1, §9.2): the factory on the fake HGML
// (test/fixtures/fake-hgml, with its libuki.so): id = index, visible = UUID; compute processes
// make a PPU busy.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ppu } from '../../../../packages/daemon/src/devices/ppu';
import { fakeLibrary } from '../../../helpers/fixtures';
import { skip } from '../../../helpers/tap';

const addon = path.resolve(__dirname, '../../../../native/build/Release/xlurm_native.node');
const LIBRARY_ENV = 'XLURM_HGML_LIBRARY';
const SEARCH = ['/usr/local/PPU_SDK/lib/libhgml.so', '/usr/local/PPU_SDK/targets/x86_64-linux/lib/libhgml.so', 'libhgml.so'];
const log = (logs: string[]) => (m: string) => { logs.push(m); };

/** Why opening through the search list failed, or undefined when this host has the vendor's library. */
function searchFailure(): string | undefined {
  if (SEARCH.some((p) => path.isAbsolute(p) && fs.existsSync(p))) return undefined;
  try { ppu({ env: {}, log: () => undefined }).close(); } catch (e) { return (e as Error).message; }
  return undefined;
}

if (!fs.existsSync(addon)) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  t.test('the library: an absolute XLURM_HGML_LIBRARY, else the search list in order', async (t) => {
    t.throws(() => ppu({ env: { [LIBRARY_ENV]: 'libhgml.so' }, log: () => undefined }),
      { message: `${LIBRARY_ENV} must be an absolute path: libhgml.so` });
    t.throws(() => ppu({ env: { [LIBRARY_ENV]: '/nonexistent/libhgml.so' }, log: () => undefined }),
      { message: /^cannot load library: \/nonexistent\/libhgml\.so: cannot open shared object file: No such file or directory$/ }, 'the override only: no search');
    const why = searchFailure();
    if (why === undefined) skip(t, 'this host has the vendor library on the search list');
    else t.equal(why, `cannot load library: ${SEARCH.map((p) => `${p}: cannot open shared object file: No such file or directory`).join('; ')}`);
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
}
