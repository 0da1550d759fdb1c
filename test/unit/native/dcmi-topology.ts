// Device groups from DCMI's topology at discovery (native/src/addon/dcmi.cc): chips joined by
// HCCS, SIO or an HCCS switch form one group, through the v2 call on a 950 board and the classic
// call elsewhere; a missing symbol or any failed call leaves the topology unknown (no `group`).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as native from '../../../native/ts/index';
import { fakeLibrary } from '../../helpers/fixtures';

const built = fs.existsSync(path.resolve(__dirname, '../../../native/build/Release/xlurm_native.node'));
// Four 910B chips on cards 1 and 2 (two per card), logical ids 0-3.
const CHIPS = ['chip 1 0 0 Ascend 910B3', 'chip 1 1 1 Ascend 910B3', 'chip 2 0 2 Ascend 910B3', 'chip 2 1 3 Ascend 910B3'];

if (!built) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  const fake = fakeLibrary(t, 'ascend', CHIPS);
  Object.assign(process.env, fake.env);
  const discover = (state: string[]) => {
    fake.write(state);
    const h = native.deviceOpen('ascend', [fake.library], 2000);
    try { return native.deviceDiscover(h, 2000).map((r) => r.group); } finally { native.deviceClose(h, 2000); }
  };

  for (const board of ['950', '910B']) {
    const api = board === '950' ? 'v2' : 'classic';
    t.test(`${api} API: HCCS planes become groups`, async (t) => {
      const b = [...CHIPS, `board ${board}`];
      t.same(discover(b), [undefined, undefined, undefined, undefined], 'no topology reported');
      t.same(discover([...b, 'topo 3 0 1', 'topo 3 2 3', 'topo 2 0 2']), [0, 0, 1, 1], 'HCCS within a card, PHB across');
      t.same(discover([...b, 'topo 7 0 1 2 3']), [0, 0, 0, 0], 'an HCCS switch joins all');
      t.same(discover([...b, 'topo 6 1 2']), [0, 1, 1, 2], 'SIO joins; SYS does not');
      t.same(discover([...b, 'topo 3 0 1', `fail ${api === 'v2' ? 'dcmiv2' : 'dcmi'}_get_topo_info_by_device_id -8005 2`]),
        [undefined, undefined, undefined, undefined], 'a failed call: unknown');
    });
  }
}
