// The vendor-neutral half of native backends: library paths (docs/behaviour.md §9.2) and row → status (§9.4).
import t from 'tap';
import type { Device } from '@xlurm/protocol';
import type { ProbeRow } from '@xlurm/native';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { libraryPaths, numaOf, statusFromRow } from '../../../../packages/daemon/src/devices/native-backend';

const d: Device = { kind: 'nvidia', id: 3, name: 'Fake', visible: 'GPU-3', npu: null, chip: null };
const row = (r: Partial<ProbeRow>): ProbeRow => ({ id: 3, uuid: 'GPU-3', processes: [], health: null, error: null, ...r });
const v = { libraryEnv: 'XLURM_NVML_LIBRARY', search: ['libnvidia-ml.so.1'] };

t.test('library paths: absolute override from the daemon environment, else the search list', async (t) => {
  t.same(libraryPaths(v, {}), ['libnvidia-ml.so.1']);
  t.same(libraryPaths(v, { XLURM_NVML_LIBRARY: '' }), ['libnvidia-ml.so.1']);
  t.same(libraryPaths(v, { XLURM_NVML_LIBRARY: '/opt/x/libnvidia-ml.so.1' }), ['/opt/x/libnvidia-ml.so.1']);
  t.throws(() => libraryPaths(v, { XLURM_NVML_LIBRARY: 'lib/libnvidia-ml.so.1' }),
    { message: 'XLURM_NVML_LIBRARY must be an absolute path: lib/libnvidia-ml.so.1' });
});

t.test('statuses fail closed', async (t) => {
  t.same(statusFromRow(d, row({})), { status: 'idle' });
  t.same(statusFromRow(d, row({ processes: [42] })), { status: 'busy', pids: [42] });
  t.same(statusFromRow(d, row({ processes: [9001, 42, 42, 7, 300, 12] })), { status: 'busy', pids: [7, 12, 42, 300] },
    'the pids of a busy device: unique, ascending, the first four');
  t.same(statusFromRow(d, row({ health: 'unhealthy', processes: [42] })), { status: 'unhealthy' });
  t.same(statusFromRow(d, row({ error: 'nvmlDeviceGetComputeRunningProcesses: Unknown Error (999)', processes: [] })),
    { status: 'unknown', error: 'nvmlDeviceGetComputeRunningProcesses: Unknown Error (999)' }, 'no idleness from a failed query');
  t.same(statusFromRow(d, row({ uuid: 'GPU-9' })), { status: 'unknown', error: 'device identity changed since discovery: GPU-3 is now GPU-9' });
  t.same(statusFromRow(d, row({ uuid: null })), { status: 'unknown', error: 'device identity not reported' });
  t.same(statusFromRow(d, row({ processes: null })), { status: 'unknown', error: 'compute processes not reported' });
  t.same(statusFromRow(d, undefined), { status: 'unknown', error: 'device missing from the probe answer' });
});

t.test("NUMA nodes from the devices' PCI addresses, read once from the daemon's sysfs (docs/behaviour.md §24.3)", async (t) => {
  const sysfs = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-numa-'));
  t.teardown(() => fs.rmSync(sysfs, { recursive: true, force: true }));
  const node = (bdf: string, text: string) => {
    fs.mkdirSync(path.join(sysfs, 'bus/pci/devices', bdf), { recursive: true });
    fs.writeFileSync(path.join(sysfs, 'bus/pci/devices', bdf, 'numa_node'), text);
  };
  node('0000:3b:00.0', '1\n');
  node('0000:5e:00.0', '-1\n');
  const devs = [0, 1, 2, 3].map((id): Device => ({ ...d, id, visible: `GPU-${id}` }));
  const raws = [
    { id: 0, uuid: 'GPU-0', name: 'a', npu: null, chip: null, error: null, pci: '0000:3b:00.0' },
    { id: 1, uuid: 'GPU-1', name: 'b', npu: null, chip: null, error: null, pci: '0000:5e:00.0' },
    { id: 2, uuid: 'GPU-2', name: 'c', npu: null, chip: null, error: null },
    { id: 3, uuid: 'GPU-3', name: 'd', npu: null, chip: null, error: null, pci: '0000:af:00.0' },
  ];
  t.same([...numaOf(raws, devs, { XLURM_SYSFS_ROOT: sysfs })], [[0, 1]], '-1, no address and no sysfs entry: unknown');
});
