// NUMA facts from sysfs (docs/behaviour.md §24.3): a PCI device's node, a node's CPUs, the CPUs
// near a job's devices; against a fake sysfs tree (XLURM_SYSFS_ROOT's form).
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cpusNear, nodeCpus, pciNumaNode, sysfsRoot } from '../../../../packages/daemon/src/resources/numa';

function fakeSysfs(t: { teardown(fn: () => void): void }): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-numa-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const put = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  put('bus/pci/devices/0000:3b:00.0/numa_node', '1\n');
  put('bus/pci/devices/0000:18:00.0/numa_node', '0\n');
  put('bus/pci/devices/0000:5e:00.0/numa_node', '-1\n');
  put('bus/pci/devices/0000:60:00.0/numa_node', 'garbage\n');
  put('devices/system/node/node0/cpulist', '0-3,8-11\n');
  put('devices/system/node/node1/cpulist', '4-7,12-15\n');
  put('devices/system/node/node2/cpulist', '\n');
  return root;
}

t.test('the sysfs root: /sys unless the daemon names an absolute one', async (t) => {
  t.equal(sysfsRoot({}), '/sys');
  t.equal(sysfsRoot({ XLURM_SYSFS_ROOT: '' }), '/sys');
  t.equal(sysfsRoot({ XLURM_SYSFS_ROOT: 'rel/sys' }), '/sys');
  t.equal(sysfsRoot({ XLURM_SYSFS_ROOT: '/tmp/sys' }), '/tmp/sys');
});

t.test("a PCI device's NUMA node; -1, garbage, a missing device or a malformed address: unknown", async (t) => {
  const root = fakeSysfs(t);
  t.equal(pciNumaNode('0000:3b:00.0', root), 1);
  t.equal(pciNumaNode('0000:18:00.0', root), 0);
  t.equal(pciNumaNode('0000:5e:00.0', root), null);
  t.equal(pciNumaNode('0000:60:00.0', root), null);
  t.equal(pciNumaNode('0000:af:00.0', root), null);
  t.equal(pciNumaNode('../../../etc', root), null, 'never a path outside the device directory');
  t.equal(pciNumaNode('', root), null);
});

t.test("a node's CPUs, and the CPUs near a set of nodes", async (t) => {
  const root = fakeSysfs(t);
  t.same(nodeCpus(0, root), [0, 1, 2, 3, 8, 9, 10, 11]);
  t.same(nodeCpus(2, root), [], 'a node without CPUs');
  t.equal(nodeCpus(3, root), null, 'no such node');
  t.equal(nodeCpus(-1, root), null);
  t.same([...cpusNear([1], root)].sort((a, b) => a - b), [4, 5, 6, 7, 12, 13, 14, 15]);
  t.same([...cpusNear([1, null, 1], root)].sort((a, b) => a - b), [4, 5, 6, 7, 12, 13, 14, 15], 'unknown nodes add nothing');
  t.same([...cpusNear([0, 1], root)].length, 16, 'devices on two nodes: both');
  t.same([...cpusNear([null], root)], [], 'nothing known: no preference');
  t.same([...cpusNear([3], root)], []);
});
