// Huawei Ascend through DCMI (devices/ascend.ts; docs/behaviour.md §9.1-§9.3): the factory on the fake
// DCMI (test/fixtures/fake-dcmi): one device per compute chip sorted by logical id, visible = the
// logical id, npu = card, chip = chip index; a major alarm is unhealthy, a process busy.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ascend } from '../../../../packages/daemon/src/devices/ascend';
import { fakeLibrary } from '../../../helpers/fixtures';
import { skip } from '../../../helpers/tap';

const addon = path.resolve(__dirname, '../../../../native/build/Release/xlurm_native.node');
const LIBRARY_ENV = 'XLURM_DCMI_LIBRARY';
const SEARCH = ['/usr/local/dcmi/libdcmi.so', '/usr/local/Ascend/driver/lib64/driver/libdcmi.so', 'libdcmi.so'];
const log = (logs: string[]) => (m: string) => { logs.push(m); };

/** Why opening through the search list failed, or undefined when this host has the vendor's library. */
function searchFailure(): string | undefined {
  if (SEARCH.some((p) => path.isAbsolute(p) && fs.existsSync(p))) return undefined;
  try { ascend({ env: {}, log: () => undefined }).close(); } catch (e) { return (e as Error).message; }
  return undefined;
}

if (!fs.existsSync(addon)) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  t.test('the library: an absolute XLURM_DCMI_LIBRARY, else the search list in order', async (t) => {
    t.throws(() => ascend({ env: { [LIBRARY_ENV]: 'libdcmi.so' }, log: () => undefined }),
      { message: `${LIBRARY_ENV} must be an absolute path: libdcmi.so` });
    t.throws(() => ascend({ env: { [LIBRARY_ENV]: '/nonexistent/libdcmi.so' }, log: () => undefined }),
      { message: /^cannot load library: \/nonexistent\/libdcmi\.so: cannot open shared object file: No such file or directory$/ }, 'the override only: no search');
    const why = searchFailure();
    if (why === undefined) skip(t, 'this host has the vendor library on the search list');
    else t.equal(why, `cannot load library: ${SEARCH.map((p) => `${p}: cannot open shared object file: No such file or directory`).join('; ')}`);
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
