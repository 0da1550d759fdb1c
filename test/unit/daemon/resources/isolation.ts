// resources/isolation.ts: device isolation (docs/behaviour.md §24.8). Deny lists by device number
// from stand-in nodes (mknod copies of /dev/full 1:7 and /dev/zero 1:5, one per fake device), and,
// as root, both enforcement paths on cgroups this test makes and removes: the v1 devices
// controller's devices.deny, and the cgroup v2 device program on the unified hierarchy.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Device } from '@xlurm/protocol';
import {
  DeviceIsolation, applyDeny, denyList, deviceNumberOf, findMounts, type NodeSource,
} from '../../../../packages/daemon/src/resources/isolation';
import { peerSkip, type Tap } from '../../../helpers/tap';

const root = process.getuid?.() === 0;
const gpu = (id: number): Device => ({ kind: 'nvidia', id, name: 'Fake', visible: `GPU-${id}`, npu: null, chip: null });

function standIns(t: Tap): { dir: string; a: string; b: string; source: NodeSource } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-iso-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const a = path.join(dir, 'nvidia0');
  const b = path.join(dir, 'nvidia1');
  spawnSync('mknod', [a, 'c', '1', '7']);
  spawnSync('mknod', [b, 'c', '1', '5']);
  const nodes = new Map([[0, [a]], [1, [b]], [2, [path.join(dir, 'missing')]]]);
  return { dir, a, b, source: { inventory: [gpu(0), gpu(1), gpu(2)], nodesOf: (d) => nodes.get(d.id) ?? [] } };
}

/** Run `sh -c` moved into the cgroup (`procs` file); what it printed. */
function inCgroup(procs: string, a: string, b: string): string {
  const r = spawnSync('sh', ['-c', `echo $$ > ${procs} || exit 9
    head -c1 ${a} >/dev/null 2>&1 && echo a-ok
    head -c1 ${b} >/dev/null 2>/dev/null || echo b-denied
    exit 0`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout : `exit ${r.status}: ${r.stderr}`;
}

t.test('device numbers and deny lists', { skip: !root && peerSkip('mknod needs root') }, async (t) => {
  const { a, b, source } = standIns(t);
  t.same(deviceNumberOf(a), { type: 'c', major: 1, minor: 7 });
  t.same(deviceNumberOf(b), { type: 'c', major: 1, minor: 5 });
  t.equal(deviceNumberOf('/nonexistent'), undefined);
  t.equal(deviceNumberOf(os.tmpdir()), undefined, 'not a device node');
  t.same(denyList(source, [gpu(0)]), [{ type: 'c', major: 1, minor: 5 }], "the other device's node; a missing node needs no rule");
  t.same(denyList(source, [gpu(1)]), [{ type: 'c', major: 1, minor: 7 }]);
  t.same(denyList(source, [gpu(0), gpu(1)]), []);
  const shared: NodeSource = { inventory: source.inventory, nodesOf: (d) => (d.id === 2 ? [a] : source.nodesOf(d)) };
  t.same(denyList(shared, [gpu(0)]), [{ type: 'c', major: 1, minor: 5 }], 'a node the job\'s own device also names stays allowed');
  t.same(denyList(source, []), [{ type: 'c', major: 1, minor: 7 }, { type: 'c', major: 1, minor: 5 }], 'a CPU job: every accelerator denied');
});

t.test('why isolation is off', async (t) => {
  const source: NodeSource = { inventory: [gpu(0)], nodesOf: () => ['/dev/nvidia0'] };
  const on = { v1Devices: '/sys/fs/cgroup/devices' };
  t.equal(new DeviceIsolation({ enabled: true, source, support: on }).state(), 'on');
  t.equal(new DeviceIsolation({ enabled: false, source, support: on }).state(), 'off (disabled by [resources] device_isolation)');
  t.equal(new DeviceIsolation({ enabled: true, source, support: on, noCgroups: () => 'not running as root' }).state(),
    'off (no job cgroups: not running as root)');
  t.equal(new DeviceIsolation({ enabled: true, source, support: {} }).state(), 'off (no devices cgroup controller and no cgroup v2 hierarchy)');
  t.equal(new DeviceIsolation({ enabled: true, source, support: { v2: '/sys/fs/cgroup' }, bpfSupported: () => 'bpf(BPF_PROG_LOAD): Operation not permitted' }).state(),
    'off (no devices cgroup controller, and cgroup v2 device programs cannot be loaded: bpf(BPF_PROG_LOAD): Operation not permitted)');
  t.equal(new DeviceIsolation({ enabled: true, source, support: { v2: '/sys/fs/cgroup' }, bpfSupported: () => '' }).state(), 'on', 'v2 with the program');
  t.equal(new DeviceIsolation({ enabled: true, source: { inventory: [], nodesOf: () => [] }, support: on }).state(), 'off (no accelerators discovered)');
  t.equal(new DeviceIsolation({ enabled: true, source: { inventory: [gpu(0)], nodesOf: () => [] }, support: on }).state(),
    'off (the device library names no device nodes (nv))');
  t.equal(new DeviceIsolation({ enabled: true, source: { inventory: [gpu(0), gpu(1)], nodesOf: (d) => (d.id === 0 ? ['/dev/nvidia0'] : []) }, support: on }).state(),
    'on', 'some devices name nodes: those are isolated');
  t.equal(new DeviceIsolation({ enabled: false, source, support: on }).apply({}, []), 'off', 'nothing applied when off');
  t.throws(() => applyDeny({}, [{ type: 'c', major: 1, minor: 5 }]), /the job has no devices cgroup/);
  t.equal(applyDeny({}, []), 'none');
});

const mounts = findMounts();
t.test('v1: devices.deny in a devices cgroup', { skip: !root ? peerSkip('needs root') : !mounts.v1Devices && 'no v1 devices controller on this host (a v2-only layout)' }, async (t) => {
  const { a, b, source } = standIns(t);
  const cg = fs.mkdtempSync(path.join(mounts.v1Devices!, 'xlurm-test-iso-'));
  t.teardown(() => { try { fs.rmdirSync(cg); } catch { /* busy: the kernel frees it with its last task */ } });
  const iso = new DeviceIsolation({ enabled: true, source, support: mounts });
  t.equal(iso.apply({ v1Devices: cg }, [gpu(0)]), 'devices.deny');
  t.match(fs.readFileSync(path.join(cg, 'devices.list'), 'utf8'), /^a \*:\* rwm$/m, 'everything else stays allowed');
  t.equal(inCgroup(path.join(cg, 'cgroup.procs'), a, b), 'a-ok\nb-denied\n', 'its own node opens; the other device\'s is refused');
  const err = spawnSync('sh', ['-c', `echo $$ > ${cg}/cgroup.procs; exec head -c1 ${b}`], { encoding: 'utf8' }).stderr;
  t.match(err, /Operation not permitted/, 'EPERM');
});

t.test('v2: the device program on a cgroup of the unified hierarchy', { skip: !root ? peerSkip('needs root') : !mounts.v2 && peerSkip('no cgroup2 mount') }, async (t) => {
  const { a, b, source } = standIns(t);
  const cg = fs.mkdtempSync(path.join(mounts.v2!, 'xlurm-test-iso-'));
  t.teardown(() => { try { fs.rmdirSync(cg); } catch { /* busy */ } });
  const iso = new DeviceIsolation({ enabled: true, source, support: { v2: mounts.v2! } });
  t.equal(iso.state(), 'on');
  t.equal(iso.apply({ v2: cg }, [gpu(1)]), 'bpf');
  t.equal(inCgroup(path.join(cg, 'cgroup.procs'), b, a), 'a-ok\nb-denied\n', 'device 1 gets its node (1:5), not device 0\'s (1:7)');
});
