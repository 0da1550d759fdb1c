// Jobs inside limits (docs/behaviour.md §28.5-§28.7, §28.12) against a fake cgroup v2 tree (the
// test machines have the hybrid layout): what JobLimits gives a job without requests and its
// notification, the daemon's subtree limited to [resources] memory, the defaults and refusals
// of [resources], the holders named in Resources reasons, and isolation's failing state.
import t from 'tap';
import type { Test } from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Device, Submission } from '@xlurm/protocol';
import { Cgroups } from '../../../../packages/daemon/src/resources/cgroup';
import { cgroupBases, instanceName } from '../../../../packages/daemon/src/resources/layout';
import { fakeV2Tree } from '../../../helpers/cgroups';
import { EnforceError, JobLimits } from '../../../../packages/daemon/src/resources/job-limits';
import { DeviceIsolation } from '../../../../packages/daemon/src/resources/isolation';
import { resourcesSettings, type ResourcesSettings } from '../../../../packages/daemon/src/resources/settings';
import { withResources } from '../../../../packages/daemon/src/resources/requests';
import { hostRoom } from '../../../../packages/daemon/src/resources/room';
import { explainHost, takeHost } from '../../../../packages/daemon/src/scheduler/host-fit';
import type { PendingJob } from '../../../../packages/daemon/src/scheduler/pending-job';
import type { StoredJob } from '../../../../packages/daemon/src/store/store';

const G = 1024 ** 3;
const M = 1024 ** 2;
const host = { cpus: [0, 1, 2, 3], memTotal: 24 * G, root: true };
const pending = (o: Partial<PendingJob> & { id: number }): PendingJob => ({ count: 0, kind: null, timeLimit: null, ...o } as PendingJob);
const gpu = (id: number): Device => ({ kind: 'nvidia', id, name: 'Fake', visible: `GPU-${id}`, npu: null, chip: null });

function fakeV2(t: Test): { root: string; base: string; cg: Cgroups } {
  const root = t.testdir();
  const { layout, onMkdir } = fakeV2Tree(root);
  const home = '/var/lib/xlurm-limits-test';
  return { root, base: path.join(root, 'xlurm', instanceName(home)), cg: new Cgroups({ layout, bases: cgroupBases(layout, home), onMkdir }) };
}

const read = (...p: string[]) => fs.readFileSync(path.join(...p), 'utf8');
const settings = (over: Record<string, unknown> = {}) => resourcesSettings({ memory: '16G', ...over }, host) as ResourcesSettings;
const job = (id: number, spec: Partial<Submission> = {}, devices: Device[] = []): StoredJob => ({
  id, devices, spec: { command: ['true'], cwd: '/', env: {}, name: 'x', count: devices.length, ...spec },
} as unknown as StoredJob);

t.test('[resources]: pids_max 4096 by default (0: unlimited), private_tmp off, its size, MemTotal kept', async (t) => {
  const d = resourcesSettings(undefined, host) as ResourcesSettings;
  t.same([d.pidsMax, d.privateTmp, d.privateTmpSize, d.memTotal], [4096, false, 4 * G, 24 * G]);
  t.equal((resourcesSettings({ pids_max: 0 }, host) as ResourcesSettings).pidsMax, 0);
  t.same((resourcesSettings({ private_tmp: true, private_tmp_size: '1G' }, host) as ResourcesSettings).privateTmpSize, G);
  t.same(resourcesSettings({ private_tmp: true }, { ...host, root: false }),
    { key: 'resources.private_tmp', problem: "needs a daemon running as root (a job's private /tmp is a mount namespace of its own)" }, 'a non-root daemon refuses the key');
  t.same(resourcesSettings({ private_tmp: true, private_tmp_size: 0 }, host), { key: 'resources.private_tmp_size', problem: 'must be more than 0 while private_tmp is on' });
  t.ok(resourcesSettings({ private_tmp: false }, { ...host, root: false }), 'off is fine for anyone');
});

t.test('submission: a --mem that admission can never start is INFEASIBLE, with the bound it uses', async (t) => {
  const r = resourcesSettings({ memory: '20G', min_available: '8G' }, host) as ResourcesSettings;
  t.throws(() => withResources({ command: ['true'], cwd: '/', env: {}, name: 'x', count: 0, mem: Math.round(17.6 * G) }, r),
    { code: 'INFEASIBLE', message: 'needs 17.6G memory; at most 16G can ever be given here (min_available 8G)' });
  t.throws(() => withResources({ command: ['true'], cwd: '/', env: {}, name: 'x', count: 0, mem: 21 * G }, r),
    { code: 'INFEASIBLE', message: 'requested 21G memory, but the host gives jobs at most 20G' }, "24.1's message first");
  t.match(withResources({ command: ['true'], cwd: '/', env: {}, name: 'x', count: 0, mem: 16 * G }, r), { mem: 16 * G }, 'exactly the bound is fine');
});

t.test('Resources reasons name the holders: largest first, at most three, 1 CPU in the singular', async (t) => {
  const running = [
    { id: 3, owner: { name: 'alice' }, spec: { cpus: 1, mem: 160 * M } },
    { id: 4, owner: { name: 'bob' }, spec: { cpus: 2 } },
    { id: 5, owner: { name: 'carol' }, spec: {} },
  ] as never;
  const r = resourcesSettings({ cpus: '0-3', memory: '256M', min_available: '0' }, host) as ResourcesSettings;
  const h = hostRoom(r, running, () => null);
  t.same(explainHost(pending({ id: 9, cpus: 2 }), h), { code: 'Resources', message: 'needs 2 CPUs: 1 of 4 free (job 4 bob 2, job 3 alice 1)' },
    'a job without requests holds nothing');
  t.same(explainHost(pending({ id: 9, mem: 160 * M }), h), { code: 'Resources', message: 'needs 160M memory: 96M of 256M free (job 3 alice 160M)' });
  takeHost(pending({ id: 6, owner: 'dave', cpus: 1 }), h);
  t.same(explainHost(pending({ id: 9, cpus: 1 }), h), { code: 'Resources', message: 'needs 1 CPU: 0 of 4 free (job 4 bob 2, job 3 alice 1, job 6 dave 1)' },
    "this pass's starts are holders too");
  const many = hostRoom(r, [1, 2, 3, 4].map((i) => ({ id: i, owner: { name: `u${i}` }, spec: { cpus: 1 } })) as never, () => null);
  t.equal(explainHost(pending({ id: 9, cpus: 1 }), many)!.message, 'needs 1 CPU: 0 of 4 free (job 1 u1 1, job 2 u2 1, job 3 u3 1)', 'at most three; ties: the older job');
});

t.test('v2: a job without --mem gets [resources] memory, memory.high at the ratio, no swap, pids_max; the parent is limited too', async (t) => {
  const { base, cg } = fakeV2(t);
  const limits = new JobLimits(cg, () => settings(), () => undefined);
  const spec = limits.setup(job(1));
  t.same(spec.dirs, [path.join(base, 'job-1')]);
  t.equal(read(base, 'job-1', 'memory.max'), String(16 * G));
  t.equal(read(base, 'job-1', 'memory.high'), String(Math.floor(0.85 * 16 * G)));
  t.equal(read(base, 'job-1', 'memory.swap.max'), '0');
  t.equal(read(base, 'job-1', 'pids.max'), '4096');
  t.equal(read(base, 'job-1', 'cpu.max'), '', 'no -c: no quota (equal weight)');
  t.equal(read(base, 'memory.max'), String(16 * G), "the daemon's subtree holds all jobs to [resources] memory");
  limits.setup(job(2, { mem: 64 * M }));
  t.equal(read(base, 'job-2', 'memory.max'), String(64 * M), 'its own --mem wins');
  // A total the kernel refuses (v1: EBUSY below the jobs' usage after a reload) is logged; jobs still start.
  const refused = fakeV2(t);
  const logs: string[] = [];
  fs.mkdirSync(refused.base, { recursive: true });
  fs.mkdirSync(path.join(refused.base, 'memory.max'));
  const l3 = new JobLimits(refused.cg, () => settings(), (m) => logs.push(m));
  t.same(l3.setup(job(9, { mem: 64 * M })).dirs, [path.join(refused.base, 'job-9')], 'the job gets its cgroup');
  l3.setup(job(10));
  t.equal(logs.length, 1, 'said once');
  t.match(logs[0], /^cannot limit the jobs' memory in all to \d+ bytes: cannot set memory.max/);
  const unlimited = new JobLimits(fakeV2(t).cg, () => settings({ pids_max: 0 }), () => undefined);
  const u = unlimited.setup(job(3));
  t.equal(read(u.dirs[0]!, 'pids.max'), '', 'pids_max = 0: unlimited');
});

t.test("v2: the notification's own cgroup: the job's memory and pids limits, every device node denied, removed at its end", async (t) => {
  const { base, cg } = fakeV2(t);
  const given: Device[][] = [];
  cg.isolation = (_cg, devs) => { given.push([...devs]); };
  const limits = new JobLimits(cg, () => settings({ private_tmp: true, private_tmp_size: '256M' }), () => undefined);
  const n = limits.setupNotify(job(7, { mem: 128 * M, cpus: 2 }, [gpu(0)]));
  const dir = path.join(base, 'notify-7');
  t.same(n, { dirs: [dir], killFile: path.join(dir, 'cgroup.kill'), privateTmp: 256 * M });
  t.equal(read(dir, 'memory.max'), String(128 * M));
  t.equal(read(dir, 'pids.max'), '4096');
  t.equal(read(dir, 'cpu.max'), '', 'no CPU quota');
  t.same(given, [[]], 'no device of its own, not even the job\'s: isolation denies every accelerator');
  t.equal(cg.get(7), undefined, "the job's own cgroup is another");
  limits.finishNotify(7);
  t.notOk(fs.existsSync(dir), 'removed');
  // A notification's cgroup left by a daemon that stopped goes at the next start's sweep.
  limits.setupNotify(job(8));
  new Cgroups({ layout: cg.layout, bases: { unified: base, v1: {} } }).sweep(new Set([8]));
  t.notOk(fs.existsSync(path.join(base, 'notify-8')), 'swept although job 8 counts as running: notifications are never adopted');
});

t.test('fail closed (§28.7): isolation on and a device job\'s cgroup will not take it: refused, counted until one succeeds', async (t) => {
  const { base, cg } = fakeV2(t);
  let broken = true;
  cg.isolation = (_cg, devs) => { if (broken && devs.length) throw new Error('devices.deny: Invalid argument'); };
  const iso = new DeviceIsolation({ enabled: true, source: { inventory: [gpu(0), gpu(1)], nodesOf: () => ['/dev/nvidia0'] }, support: { v1Devices: '/sys/fs/cgroup/devices' } });
  const logs: string[] = [];
  const limits = new JobLimits(cg, () => settings(), (m) => logs.push(m));
  limits.isolation = iso;
  t.throws(() => limits.setup(job(1, {}, [gpu(0)])), new EnforceError("cannot isolate the job's devices: devices.deny: Invalid argument"));
  t.notOk(fs.existsSync(path.join(base, 'job-1')), 'nothing left behind');
  t.throws(() => limits.setup(job(2, {}, [gpu(1)])), EnforceError);
  t.match(iso.state(), /^failing \(cannot isolate the job's devices: devices\.deny: Invalid argument; 2 job\(s\) refused since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)$/);
  t.same(limits.setup(job(3)).dirs, [path.join(base, 'job-3')], 'a CPU-only job is not affected');
  t.match(iso.state(), /^failing /, 'nor does it end the failing state');
  broken = false;
  limits.setup(job(4, {}, [gpu(0)]));
  t.equal(iso.state(), 'on', "a device job's isolation applied again: on");
  // Where isolation is off (device_isolation = false), a device job runs without it as before.
  const off = new DeviceIsolation({ enabled: false, source: { inventory: [gpu(0)], nodesOf: () => [] }, support: {} });
  const { cg: cg2 } = fakeV2(t);
  cg2.isolation = () => { throw new Error('never applied'); };
  const l2 = new JobLimits(cg2, () => settings(), () => undefined);
  l2.isolation = off;
  t.same(l2.setup(job(5, {}, [gpu(0)])).dirs, [], 'runs without a cgroup (logged), not refused');
  t.equal(off.state(), 'off (disabled by [resources] device_isolation)');
});
