// Device groups from NVML's topology at discovery (native/src/addon/nvml-shaped.cc): GPUs whose
// common ancestor is at most NVML_TOPOLOGY_MULTIPLE (one PCIe switch hierarchy) form one group;
// a library without the call, or any failed call, leaves the topology unknown (no `group`).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as native from '../../../native/ts/index';
import { fakeLibrary } from '../../helpers/fixtures';
import { groupsOf } from '../../../packages/daemon/src/devices/native-backend';

const built = fs.existsSync(path.resolve(__dirname, '../../../native/build/Release/xlurm_native.node'));
const gpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} GPU-${i} "Fake H100"`);

if (!built) {
  t.plan(0, 'native addon not built (npm run build:native)');
} else {
  const fake = fakeLibrary(t, 'nvidia', gpus(4));
  Object.assign(process.env, fake.env);
  const discover = (state: string[]) => {
    fake.write(state);
    const h = native.deviceOpen('nvidia', [fake.library], 2000);
    try { return native.deviceDiscover(h, 2000); } finally { native.deviceClose(h, 2000); }
  };
  const groupOf = (raws: native.RawDevice[]) => raws.map((r) => r.group);

  t.test('no topology reported: no group on any device', async (t) => {
    const raws = discover(gpus(4));
    t.same(groupOf(raws), [undefined, undefined, undefined, undefined]);
    t.notOk('group' in raws[0]!, 'the entry keeps its shape');
  });

  t.test('one group per PCIe switch hierarchy, numbered in device order', async (t) => {
    // 0,1 on one switch; 2,3 under two switches of one hierarchy; the two halves meet at the CPU.
    t.same(groupOf(discover([...gpus(4), 'topology 10 0 1', 'topology 20 2 3', 'topology 40 0 2'])), [0, 0, 1, 1]);
    t.same(groupOf(discover([...gpus(4), 'topology 0 1 3', 'topology 30 0 2'])), [0, 1, 2, 1], 'HOSTBRIDGE is not a group; INTERNAL is');
    t.same(groupOf(discover([...gpus(4), 'topology 10 0 1 2 3'])), [0, 0, 0, 0]);
    t.same(groupOf(discover([...gpus(3), 'topology 10 0 1', 'topology 10 1 2'])), [0, 0, 0], 'joined transitively');
  });

  t.test('a failed call leaves every group unknown', async (t) => {
    t.same(groupOf(discover([...gpus(3), 'topology 10 0 1', 'fail nvmlDeviceGetTopologyCommonAncestor 999 1'])), [undefined, undefined, undefined]);
  });

  t.test('a device that is left out has no group and does not join others', async (t) => {
    const raws = discover([...gpus(3), 'topology 10 0 1 2', 'fail nvmlDeviceGetUUID 15 1']);
    t.same(groupOf(raws), [0, undefined, 0]);
  });

  t.test('the backend takes groups only when every device has one', async (t) => {
    const dev = (id: number) => ({ kind: 'nvidia' as const, id, name: '', visible: '', npu: null, chip: null });
    const raw = (id: number, group?: number): native.RawDevice => ({ id, uuid: '', name: '', npu: null, chip: null, error: null, ...(group === undefined ? {} : { group }) });
    t.same(groupsOf([raw(0, 1), raw(1, 0), raw(2, 1)], [dev(0), dev(1), dev(2)]), [[1], [0, 2]]);
    t.equal(groupsOf([raw(0, 0), raw(1)], [dev(0), dev(1)]), undefined);
    t.same(groupsOf([raw(0, 0), raw(1)], [dev(0)]), [[0]], 'a device left out of the inventory does not count');
    t.equal(groupsOf([], []), undefined);
  });
}
