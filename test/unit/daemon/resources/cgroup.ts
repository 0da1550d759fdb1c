// The cgroup layers (resources/cgroup.ts, layout.ts) against a fake cgroup file tree in a
// temporary directory: the v2-only layout, which the test machines do not have, and the
// hybrid one's file names. The fake kernel makes each new directory's control files (onMkdir).
import t from 'tap';
import type { Test } from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Cgroups, oomError, pickCpus } from '../../../../packages/daemon/src/resources/cgroup';
import { cgroupBases, instanceName, ownCgroups, parseMountinfo, type CgroupLayout } from '../../../../packages/daemon/src/resources/layout';
import { fakeV2Tree } from '../../../helpers/cgroups';

function fakeV2(t: Test): { root: string; cg: Cgroups; home: string } {
  const root = t.testdir();
  const { layout, onMkdir } = fakeV2Tree(root);
  const home = '/var/lib/xlurm-test';
  return { root, home, cg: new Cgroups({ layout, bases: cgroupBases(layout, home), onMkdir }) };
}

const read = (...p: string[]) => fs.readFileSync(path.join(...p), 'utf8');

t.test('layouts from mountinfo: v2, v1, hybrid', async (t) => {
  const v2 = '29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n';
  t.same(parseMountinfo(v2, () => ['cpu', 'memory']), { kind: 'v2', unified: '/sys/fs/cgroup', v1: {} });
  const hybrid = [
    '32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct',
    '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
    '40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd',
    '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
  ].join('\n');
  t.same(parseMountinfo(hybrid, () => []), {
    kind: 'hybrid', unified: '/sys/fs/cgroup/unified',
    v1: { cpu: '/sys/fs/cgroup/cpu,cpuacct', cpuacct: '/sys/fs/cgroup/cpu,cpuacct', memory: '/sys/fs/cgroup/memory' },
  });
  t.same(parseMountinfo(hybrid.split('\n').slice(0, 2).join('\n')).kind, 'v1');
  t.same(parseMountinfo('').kind, 'none');
  t.same([...ownCgroups('0::/system.slice/xlurm.service\n4:memory:/x\n2:cpu,cpuacct:/y\n')],
    [['', '/system.slice/xlurm.service'], ['memory', '/x'], ['cpu', '/y'], ['cpuacct', '/y']]);
});

t.test('bases: <mount>/xlurm/<instance>; under systemd inside the unit (delegated); a root override', async (t) => {
  const layout: CgroupLayout = { kind: 'v2', unified: '/sys/fs/cgroup', v1: {} };
  const inst = instanceName('/var/lib/xlurm');
  t.match(inst, /^[0-9a-f]{12}$/);
  t.same(cgroupBases(layout, '/var/lib/xlurm'), { unified: `/sys/fs/cgroup/xlurm/${inst}`, v1: {} });
  t.same(cgroupBases(layout, '/var/lib/xlurm', { systemd: true, own: new Map([['', '/system.slice/xlurm.service']]) }), {
    unified: `/sys/fs/cgroup/system.slice/xlurm.service/xlurm/${inst}`, v1: {}, delegated: '/sys/fs/cgroup/system.slice/xlurm.service',
  });
  const hybrid: CgroupLayout = { kind: 'hybrid', unified: '/sys/fs/cgroup/unified', v1: { memory: '/sys/fs/cgroup/memory' } };
  t.same(cgroupBases(hybrid, '/var/lib/xlurm', { root: '/tmp/cg' }), { unified: `/tmp/cg/unified/xlurm/${inst}`, v1: { memory: `/tmp/cg/memory/xlurm/${inst}` } });
  t.not(instanceName('/a'), instanceName('/b'), "two daemons' jobs never meet");
});

t.test('v2: a job\'s cgroup gets cpu.max, cpuset.cpus, memory.max/high/swap.max, oom.group, pids.max', async (t) => {
  const { root, home, cg } = fakeV2(t);
  const job = cg.create(7, { cpus: 2, cpuset: [2, 3], mem: 1024 ** 3, memoryHighRatio: 0.85, swap: false, pidsMax: 512 });
  const dir = path.join(root, 'xlurm', instanceName(home), 'job-7');
  t.same(job.dirs, [dir], 'one directory: the unified hierarchy holds everything');
  t.equal(job.killFile, path.join(dir, 'cgroup.kill'));
  t.equal(read(dir, 'cpu.max'), '200000 100000');
  t.equal(read(dir, 'cpuset.cpus'), '2-3');
  t.equal(read(dir, 'memory.max'), String(1024 ** 3));
  t.equal(read(dir, 'memory.high'), String(Math.floor(0.85 * 1024 ** 3)));
  t.equal(read(dir, 'memory.swap.max'), '0');
  t.equal(read(dir, 'memory.oom.group'), '1');
  t.equal(read(dir, 'pids.max'), '512');
  // The controllers are enabled from the mount down to the daemon's subtree.
  t.equal(read(root, 'cgroup.subtree_control'), '+cpu +cpuset +memory +pids');
  t.equal(read(root, 'xlurm', 'cgroup.subtree_control'), '+cpu +cpuset +memory +pids');
  t.equal(read(root, 'xlurm', instanceName(home), 'cgroup.subtree_control'), '+cpu +cpuset +memory +pids');
  t.same([...cg.takenCpus()], [2, 3]);
});

t.test('v2: a job without requests gets a cgroup without limits; swap allowed leaves swap.max alone', async (t) => {
  const { root, home, cg } = fakeV2(t);
  cg.create(1, { cpus: 0, cpuset: null, mem: 0, memoryHighRatio: 0.85, swap: false, pidsMax: 0 });
  const dir = path.join(root, 'xlurm', instanceName(home), 'job-1');
  for (const f of ['cpu.max', 'cpuset.cpus', 'memory.max', 'memory.high', 'pids.max']) t.equal(read(dir, f), '', `${f} untouched`);
  cg.create(2, { cpus: 0, cpuset: null, mem: 512 * 1024 ** 2, memoryHighRatio: 0.5, swap: true, pidsMax: 0 });
  const two = path.join(root, 'xlurm', instanceName(home), 'job-2');
  t.equal(read(two, 'memory.high'), String(256 * 1024 ** 2));
  t.equal(read(two, 'memory.swap.max'), '', 'swap = true');
});

t.test('v2: usage is read before removal; an OOM kill is seen in memory.events', async (t) => {
  const { root, home, cg } = fakeV2(t);
  cg.create(3, { cpus: 0, cpuset: null, mem: 16 * 1024 ** 3, memoryHighRatio: 0.85, swap: false, pidsMax: 0 });
  const dir = path.join(root, 'xlurm', instanceName(home), 'job-3');
  fs.writeFileSync(path.join(dir, 'memory.peak'), `${16 * 1024 ** 3}\n`);
  fs.writeFileSync(path.join(dir, 'cpu.stat'), 'usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n');
  t.same(cg.usage(3), { peakMemory: 16 * 1024 ** 3, cpuSeconds: 2.5, oomKilled: false });
  fs.writeFileSync(path.join(dir, 'memory.events'), 'low 0\nhigh 3\nmax 9\noom 1\noom_kill 1\n');
  t.equal(cg.usage(3)!.oomKilled, true);
  t.equal(oomError(16 * 1024 ** 3, 16 * 1024 ** 3), 'out of memory: the job exceeded its memory limit of 16G (peak 16.0G)');
  cg.remove(3);
  t.notOk(fs.existsSync(dir), 'removed');
  t.equal(cg.usage(3), null, 'forgotten');
  t.same([...cg.takenCpus()], []);
});

t.test('adoption after a restart: CPUs stay taken, the limit is known; the sweep removes the cgroups of ended jobs', async (t) => {
  const { root, home, cg } = fakeV2(t);
  cg.create(4, { cpus: 1, cpuset: [5], mem: 64 * 1024 ** 2, memoryHighRatio: 0.85, swap: false, pidsMax: 0 });
  cg.create(5, { cpus: 0, cpuset: null, mem: 0, memoryHighRatio: 0.85, swap: false, pidsMax: 0 });
  const layout: CgroupLayout = { kind: 'v2', unified: root, v1: {} };
  const again = new Cgroups({ layout, bases: cgroupBases(layout, home) });
  again.adopt([4]);
  t.same([...again.takenCpus()], [5]);
  t.equal(again.get(4)!.mem, 64 * 1024 ** 2);
  again.sweep(new Set([4]));
  const base = path.join(root, 'xlurm', instanceName(home));
  t.ok(fs.existsSync(path.join(base, 'job-4')), 'the running job keeps its cgroup');
  t.notOk(fs.existsSync(path.join(base, 'job-5')), 'the ended one is gone');
});

t.test('fail closed: a cgroup that cannot be made is an EnforceError, and nothing is left behind', async (t) => {
  const layout: CgroupLayout = { kind: 'v2', unified: '/proc/xlurm-no-such', v1: {} };
  const cg = new Cgroups({ layout, bases: { unified: '/proc/xlurm-no-such/xlurm/x', v1: {} } });
  t.throws(() => cg.create(1, { cpus: 1, cpuset: [0], mem: 0, memoryHighRatio: 0.85, swap: false, pidsMax: 0 }), { name: 'EnforceError', message: /^cannot set cgroup.subtree_control/ });
  t.throws(() => new Cgroups({ layout: { kind: 'none', v1: {} }, bases: { v1: {} } }).create(1, { cpus: 0, cpuset: null, mem: 0, memoryHighRatio: 1, swap: false, pidsMax: 0 }),
    { message: 'no cgroup hierarchy is mounted on this host' });
  const { root, home, cg: ok } = fakeV2(t);
  ok.isolation = () => { throw new Error('no BPF'); };
  t.throws(() => ok.create(9, { cpus: 0, cpuset: null, mem: 0, memoryHighRatio: 1, swap: false, pidsMax: 0 }), { message: "cannot isolate the job's devices: no BPF" });
  t.notOk(fs.existsSync(path.join(root, 'xlurm', instanceName(home), 'job-9')), 'the half-made cgroup is removed');
});

t.test('CPU sets: distinct CPUs where the counts allow, else the least shared', async (t) => {
  t.same(pickCpus(2, [0, 1, 2, 3], new Set([0])), [1, 2]);
  t.same(pickCpus(0, [0, 1], new Set()), []);
  t.same(pickCpus(3, [0, 1, 2, 3], new Set([0, 1, 2])), [0, 1, 3]);
  t.same(pickCpus(8, [0, 1], new Set()), [0, 1]);
});

t.test("CPU sets: the devices' NUMA node first, never at the cost of distinct CPUs (docs/behaviour.md §24.3)", async (t) => {
  const node1 = new Set([4, 5, 6, 7]);
  t.same(pickCpus(2, [0, 1, 2, 3, 4, 5, 6, 7], new Set(), node1), [4, 5], 'free CPUs of the node');
  t.same(pickCpus(2, [0, 1, 2, 3, 4, 5, 6, 7], new Set([4, 5]), node1), [6, 7], 'the node\'s other free CPUs');
  t.same(pickCpus(3, [0, 1, 2, 3, 4, 5, 6, 7], new Set([4, 5]), node1), [0, 6, 7], 'the node\'s free CPUs, then any free one');
  t.same(pickCpus(2, [0, 1, 2, 3, 4, 5, 6, 7], new Set([4, 5, 6, 7]), node1), [0, 1], 'a full node: free CPUs elsewhere, not shared ones');
  t.same(pickCpus(2, [0, 1, 4], new Set([0, 1, 4]), node1), [0, 4], 'all taken: the node\'s shared CPU first');
  t.same(pickCpus(2, [0, 1, 2, 3], new Set(), node1), [0, 1], 'the node has none of the allowed CPUs: as without it');
  t.same(pickCpus(1, [0, 1], new Set(), new Set([1])), [1]);
  t.same(pickCpus(2, [0, 1, 2, 3], new Set([0])), [1, 2], 'no node known: as before');
});
