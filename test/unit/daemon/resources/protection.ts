// resources/protection.ts: where isolation writes for a job's cgroup, and the cgroup layer's hook
// (docs/behaviour.md §24.8): off runs the job with visibility variables only, except that
// require_cgroup fails a start on a host that cannot carry device rules at all.
import t from 'tap';
import type { Device } from '@xlurm/protocol';
import type { JobCgroup } from '../../../../packages/daemon/src/resources/cgroup';
import { DeviceIsolation } from '../../../../packages/daemon/src/resources/isolation';
import { isolationDirs, isolationHook } from '../../../../packages/daemon/src/resources/protection';

const gpu: Device = { kind: 'nvidia', id: 0, name: 'Fake', visible: 'GPU-0', npu: null, chip: null };
const cg = (over: Partial<JobCgroup> = {}): JobCgroup => ({ id: 7, v1: {}, dirs: [], killFile: null, mem: 0, cpus: [], ...over });

t.test('v1 devices where the job has it, else its cgroup v2 directory', async (t) => {
  t.same(isolationDirs(cg({ unified: '/u/job-7', v1: { devices: '/d/job-7', memory: '/m/job-7' } })), { v1Devices: '/d/job-7' }, 'hybrid: the v1 controller');
  t.same(isolationDirs(cg({ unified: '/u/job-7' })), { v2: '/u/job-7' }, 'v2: the device program');
  t.same(isolationDirs(cg()), {});
});

t.test('the hook: off is logged once; require_cgroup fails a host without device rules', async (t) => {
  const source = { inventory: [gpu], nodesOf: () => ['/dev/nvidia0'] };
  const logs: string[] = [];
  let require = false;
  const noRules = new DeviceIsolation({ enabled: true, source, support: {} });
  const hook = isolationHook(noRules, () => require, (m) => logs.push(m));
  hook(cg(), [gpu]);
  hook(cg(), [gpu]);
  t.same(logs, ['jobs run with visibility variables only: device isolation: off (no devices cgroup controller and no cgroup v2 hierarchy)']);
  require = true;
  t.throws(() => hook(cg(), [gpu]), /^no devices cgroup controller and no cgroup v2 hierarchy$/);
  const disabled = new DeviceIsolation({ enabled: false, source, support: {} });
  t.doesNotThrow(() => isolationHook(disabled, () => true, () => undefined)(cg(), [gpu]), 'disabled on purpose: the job runs');
  const other: Device = { ...gpu, id: 1, visible: 'GPU-1' };
  const two = { inventory: [gpu, other], nodesOf: (d: Device) => (d.id === 1 ? ['/dev/null'] : []) };
  const on = new DeviceIsolation({ enabled: true, source: two, support: { v1Devices: '/sys/fs/cgroup/devices' } });
  t.throws(() => isolationHook(on, () => false, () => undefined)(cg(), [gpu]), /^the job has no devices cgroup$/,
    'rules the cgroup cannot take throw (the layer decides what that means for the job)');
  t.doesNotThrow(() => isolationHook(on, () => false, () => undefined)(cg(), [other]), 'nothing to deny: nothing written');
});
