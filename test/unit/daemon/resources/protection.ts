// resources/protection.ts: where isolation writes for a job's cgroup, and the cgroup layer's hook
// (docs/behaviour.md §24.8): off runs the job with visibility variables only, except that
// require_cgroup fails a start on a host that cannot carry device rules at all.
import t from 'tap';
import type { Device } from '@xlurm/protocol';
import type { JobCgroup } from '../../../../packages/daemon/src/resources/cgroup';
import { DeviceIsolation } from '../../../../packages/daemon/src/resources/isolation';
import { isolationDirs, isolationHook, isolationNotice } from '../../../../packages/daemon/src/resources/protection';

const gpu: Device = { kind: 'nvidia', id: 0, name: 'Fake', visible: 'GPU-0', npu: null, chip: null };
const cg = (over: Partial<JobCgroup> = {}): JobCgroup => ({ id: 7, role: 'job', v1: {}, dirs: [], killFile: null, mem: 0, cpus: [], ...over });

t.test('v1 devices where the job has it, else its cgroup v2 directory', async (t) => {
  t.same(isolationDirs(cg({ unified: '/u/job-7', v1: { devices: '/d/job-7', memory: '/m/job-7' } })), { v1Devices: '/d/job-7' }, 'hybrid: the v1 controller');
  t.same(isolationDirs(cg({ unified: '/u/job-7' })), { v2: '/u/job-7' }, 'v2: the device program');
  t.same(isolationDirs(cg()), {});
});

t.test('the notice: said at start-up, then not again by the hook until the state changes', async (t) => {
  const source = { inventory: [gpu], nodesOf: () => ['/dev/nvidia0'] };
  const logs: string[] = [];
  let enabled = true;
  const iso = new DeviceIsolation({ get enabled() { return enabled; }, source, support: {} });
  const notice = isolationNotice(iso, () => false, (m) => logs.push(m));
  const hook = isolationHook(iso, () => false, (m) => logs.push(m), notice);
  notice();
  hook(cg(), [gpu]);
  t.same(logs, ['jobs run with visibility variables only: device isolation: off (no devices cgroup controller and no cgroup v2 hierarchy)'],
    'the start-up line only: a job start much later (the first line after a full disk) adds nothing');
  enabled = false;
  hook(cg(), [gpu]);
  t.equal(logs[1], 'jobs run with visibility variables only: device isolation: off (disabled by [resources] device_isolation)', 'a reload that changes it: said at the next start');
  const on = new DeviceIsolation({ enabled: true, source, support: { v1Devices: '/sys/fs/cgroup/devices' } });
  const quiet: string[] = [];
  isolationNotice(on, () => false, (m) => quiet.push(m))();
  const failsClosed: string[] = [];
  isolationNotice(new DeviceIsolation({ enabled: true, source, support: {} }), () => true, (m) => failsClosed.push(m))();
  t.same([quiet, failsClosed], [[], []], 'nothing where isolation is on, nor where require_cgroup fails such starts');
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
