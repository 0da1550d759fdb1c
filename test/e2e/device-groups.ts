// Device groups and affinity end to end (docs/behaviour.md §21.5): the real daemon on the fake
// NVML with 8 GPUs and [devices.groups] nv = "0-3;4-7": prefer (best fit), require (Topology,
// the submission refusals), off, the per-job flags, unknown topology, and the config checks.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { waitFor } from '../helpers/wait';
import { waitMarker } from '../helpers/devices';
import { fakeLibrary } from '../helpers/fixtures';
import type { Scope as Tap } from '../helpers/tap';

const gpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} GPU-7e57c0de-0000-4000-8000-00000000000${i} "Fake H100 80GB"`);

async function groupsDaemon(t: Tap, config: string, extra: string[] = []): Promise<{ d: Daemon; dir: string; file: string; marker: string }> {
  const fake = fakeLibrary(t, 'nvidia', [...gpus(8), ...extra]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-groups-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(file, config);
  const d = await startDaemon(t, { backend: 'nvidia', env: fake.env, args: ['--config', file] });
  return { d, dir, file, marker: path.join(dir, 'go') };
}

/** Jobs holding exactly these devices until the marker exists. */
async function hold(d: Daemon, marker: string, ...ids: number[]): Promise<number[]> {
  const held: number[] = [];
  for (const id of ids) held.push(await d.batch(waitMarker(marker), ['-i', String(id)]));
  for (const id of held) await d.waitState(id, 'RUNNING');
  return held;
}

const deviceIds = (j: Record<string, any>) => (j.devices as Array<{ id: number }>).map((x) => x.id);

t.test('prefer (the default): one group when one can hold the job, the best fit; --ignore-group-affinity: first fit', async (t) => {
  const { d, marker } = await groupsDaemon(t, '[devices.groups]\nnv = "0-3;4-7"\n');
  const held = await hold(d, marker, 0, 1, 2);
  // Free: 3 | 4,5,6,7. First fit would take 3,4 across the groups.
  const two = await d.batch(waitMarker(marker), ['-g', '2']);
  t.same(deviceIds(await d.waitState(two, 'RUNNING')), [4, 5], 'group 4-7');
  const first = await d.batch(waitMarker(marker), ['-g', '2', '--ignore-group-affinity']);
  t.same(deviceIds(await d.waitState(first, 'RUNNING')), [3, 6], 'first fit');
  fs.writeFileSync(marker, '');
  for (const id of [...held, two, first]) await d.waitState(id, 'COMPLETED');
  fs.rmSync(marker);
  // Free: all. Group 0-3 keeps 3 free, 4-7 keeps 4 free: a 2-device job goes where it leaves the larger block.
  const h2 = await hold(d, marker, 0);
  const fit = await d.batch('true', ['-g', '2']);
  t.same(deviceIds(await d.waitState(fit, 'COMPLETED')), [1, 2], 'best fit: the group with fewer free devices');
  const spread = await d.batch('true', ['-g', '5']);
  t.same(deviceIds(await d.waitState(spread, 'COMPLETED')), [1, 2, 3, 4, 5], 'no group can: any devices');
  fs.writeFileSync(marker, '');
  await d.waitState(h2[0]!, 'COMPLETED');
});

t.test('require: Topology while no group can hold the job; the submission refusals name the groups', async (t) => {
  const { d, marker } = await groupsDaemon(t, '[devices]\ngroup_affinity = "require"\n\n[devices.groups]\nnv = "0-3;4-7"\n');
  let r = await d.run('xrun', ['-i', '3,4', 'true']);
  t.not(r.code, 0);
  t.equal(r.stderr, 'xlurm: device ids 3,4 span groups 0-3 and 4-7 (group affinity is required)\n');
  r = await d.run('xbatch', ['-g', '5', '--wrap', 'true']);
  t.not(r.code, 0);
  t.equal(r.stderr, 'xlurm: requested 5 devices within one group, but the largest group of nv (0-3) has 4 devices (group affinity is required)\n');
  r = await d.run('xrun', ['-g', '5', '--ignore-group-affinity', 'sh', '-c', ':']);
  t.equal(r.code, 0, `the job's own flag: ${r.stderr}`);

  const held = await hold(d, marker, 0, 1, 4);
  // Free: 2,3 | 5,6,7: 4 devices are free, but no group has 4... a 3-device job fits 5-7.
  const three = await d.batch('true', ['-g', '3']);
  t.same(deviceIds(await d.waitState(three, 'COMPLETED')), [5, 6, 7]);
  const four = await d.batch('true', ['-g', '4']);
  await waitFor(async () => (await d.job(four)).reason?.code === 'Topology', { what: 'Topology' });
  const shown = JSON.parse((await d.run('xqueue', [String(four), '--json'])).stdout) as Record<string, any>;
  t.same(shown.reason, {
    code: 'Topology', message: 'needs 4 nv devices within one group: group 0-3 has nv:2,nv:3 free, group 4-7 has nv:5,nv:6,nv:7 free',
  });
  fs.writeFileSync(marker, '');
  const got = deviceIds(await d.waitState(four, 'COMPLETED'));
  t.ok([[0, 1, 2, 3], [4, 5, 6, 7]].some((g) => JSON.stringify(g) === JSON.stringify(got)), `starts once a group is free: ${got}`);
  for (const id of held) await d.waitState(id, 'COMPLETED');
});

t.test('off: first fit; --group-affinity: require for one job', async (t) => {
  const { d, marker } = await groupsDaemon(t, '[devices]\ngroup_affinity = "off"\ngroups.nv = "0-3;4-7"\n');
  const held = await hold(d, marker, 0, 1, 2);
  const first = await d.batch('true', ['-g', '2']);
  t.same(deviceIds(await d.waitState(first, 'COMPLETED')), [3, 4]);
  const grouped = await d.batch('true', ['-g', '2', '--group-affinity']);
  t.same(deviceIds(await d.waitState(grouped, 'COMPLETED')), [4, 5]);
  const r = await d.run('xrun', ['--group-affinity', '-i', '3,4', 'true']);
  t.equal(r.stderr, 'xlurm: device ids 3,4 span groups 0-3 and 4-7 (group affinity is required)\n');
  fs.writeFileSync(marker, '');
  for (const id of held) await d.waitState(id, 'COMPLETED');
});

t.test('unknown topology is not fully connected: multi-device requests under require are refused', async (t) => {
  const { d } = await groupsDaemon(t, '[devices]\ngroup_affinity = "require"\n');
  const msg = 'device topology of nv is unknown; the administrator must declare [devices.groups]';
  let r = await d.run('xrun', ['-g', '2', 'true']);
  t.equal(r.stderr, `xlurm: ${msg}\n`);
  r = await d.run('xrun', ['-g', '1', 'true']);
  t.equal(r.code, 0, 'one device needs no group');
  r = await d.run('xrun', ['-g', '2', '--ignore-group-affinity', 'sh', '-c', ':']);
  t.equal(r.code, 0, r.stderr);
});

t.test('unknown topology under prefer: first fit; --group-affinity is refused', async (t) => {
  const { d } = await groupsDaemon(t, '');
  const r = await d.run('xrun', ['--group-affinity', '-g', '2', 'true']);
  t.equal(r.stderr, 'xlurm: device topology of nv is unknown; the administrator must declare [devices.groups]\n');
  const j = await d.batch('true', ['-g', '2']);
  t.same(deviceIds(await d.waitState(j, 'COMPLETED')), [0, 1]);
});

t.test('the groups are checked: syntax and ids in two groups by config check, unknown ids on reload', async (t) => {
  const { d, dir, file } = await groupsDaemon(t, '[devices.groups]\nnv = "0-3;4-7"\n');
  const bad = path.join(dir, 'bad.toml');
  fs.writeFileSync(bad, '[devices]\ngroup_affinity = "prefer"\n[devices.groups]\nnv = "0-3;3-7"\n');
  let r = await d.run('xlurm', ['config', 'check', bad]);
  t.same([r.code, r.stderr], [1, `xlurm: ${bad}:4: devices.groups.nv: device id 3 is in two groups (1 and 2)\n`]);
  fs.writeFileSync(file, '\n[devices.groups]\nnv = "0-3;4-9"\n');
  r = await d.run('xlurm', ['reload']);
  t.not(r.code, 0);
  t.match(r.stderr, `${file}:3: devices.groups.nv: unknown nv device IDs 8, 9`);
  fs.writeFileSync(file, '[devices]\ngroup_affinity = "require"\n[devices.groups]\nnv = "0-1;2-7"\n');
  r = await d.run('xlurm', ['reload']);
  t.equal(r.code, 0, r.stderr);
  r = await d.run('xrun', ['-g', '3', '-i', '1,2,3', 'true']);
  t.equal(r.stderr, 'xlurm: device ids 1,2,3 span groups 0-1 and 2-7 (group affinity is required)\n', 'the reloaded groups apply');
});

t.test('discovered topology: NVML groups GPUs that share a PCIe switch hierarchy; declared groups win', async (t) => {
  // Pairs in 0-2 and in 3-7 share switches; the two halves meet only at the CPU.
  const topology = ['topology 10 0 1 2', 'topology 20 3 4 5 6 7', 'topology 40 0 3'];
  const { d, file } = await groupsDaemon(t, '[devices]\ngroup_affinity = "require"\n', topology);
  let r = await d.run('xrun', ['-g', '6', 'true']);
  t.equal(r.stderr, 'xlurm: requested 6 devices within one group, but the largest group of nv (3-7) has 5 devices (group affinity is required)\n');
  r = await d.run('xrun', ['-i', '2,3', 'true']);
  t.equal(r.stderr, 'xlurm: device ids 2,3 span groups 0-2 and 3-7 (group affinity is required)\n');
  const j = await d.batch('true', ['-g', '3']);
  t.same(deviceIds(await d.waitState(j, 'COMPLETED')), [0, 1, 2], 'best fit: the smaller group');
  const pools = JSON.parse((await d.run('xinfo', ['--pools', '--json'])).stdout) as Array<Record<string, any>>;
  t.same(pools[0]!.groups.map((g: { devices: number[] }) => g.devices), [[0, 1, 2], [3, 4, 5, 6, 7]], 'xinfo --pools shows the discovered groups');
  fs.writeFileSync(file, '[devices]\ngroup_affinity = "require"\ngroups.nv = "0-7"\n');
  r = await d.run('xlurm', ['reload']);
  t.equal(r.code, 0, r.stderr);
  const all = await d.batch('true', ['-g', '8']);
  t.equal(deviceIds(await d.waitState(all, 'COMPLETED')).length, 8, 'the declared group replaces the discovered ones');
});

t.test('discovered topology on Ascend: DCMI HCCS planes are groups', async (t) => {
  const chips = Array.from({ length: 4 }, (_, i) => `chip ${1 + (i >> 1)} ${i & 1} ${i} Ascend 910B3`);
  const fake = fakeLibrary(t, 'ascend', [...chips, 'board 910B', 'topo 3 0 1', 'topo 3 2 3']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-groups-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(file, '[devices]\ngroup_affinity = "require"\n');
  const d = await startDaemon(t, { backend: 'ascend', env: fake.env, args: ['--config', file] });
  const r = await d.run('xrun', ['-g', '3', 'true']);
  t.equal(r.stderr, 'xlurm: requested 3 devices within one group, but the largest group of asc (0-1) has 2 devices (group affinity is required)\n');
  const j = await d.batch('true', ['-g', '2']);
  t.same(deviceIds(await d.waitState(j, 'COMPLETED')), [0, 1]);
});
