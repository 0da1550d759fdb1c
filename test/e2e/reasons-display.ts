// Pending reasons where users see them (docs/behaviour.md §20.4) and the pools (§21.7): the real
// daemon on the fake NVML, through the real CLIs: `xqueue ID`'s Reason line, `xqueue -l`'s REASON
// column, xrun's Pending lines (once per change of code), and `xinfo --pools`.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon } from '../helpers/daemon';
import { waitFor } from '../helpers/wait';
import { fakeLibrary } from '../helpers/fixtures';

const me = os.userInfo().username;
const gpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} GPU-7e57c0de-0000-4000-8000-00000000000${i} "Fake H100 80GB"`);
const waitMarker = (marker: string) => `while [ ! -e ${marker} ]; do sleep 0.02; done`;

t.test('Reason line, REASON column, and xrun printing Pending once per code', async (t) => {
  const fake = fakeLibrary(t, 'nvidia', gpus(1));
  const d = await startDaemon(t, { backend: 'nvidia', env: fake.env, maxRunning: 2 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-reason-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const marker = path.join(dir, 'go');

  const holder = await d.batch(waitMarker(marker), ['-g', '1']);
  await d.waitState(holder, 'RUNNING');

  const child = d.spawnCli('xrun', ['-g', '1', 'echo', 'ran']);
  let err = '';
  let out = '';
  child.stderr!.on('data', (b) => { err += b; });
  child.stdout!.on('data', (b) => { out += b; });
  const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  await waitFor(() => /Pending: Resources/.test(err), { what: "xrun's Pending: Resources line" });
  const lines = () => err.split('\n').filter((l) => l !== '');
  const id = Number(/Job (\d+): Pending/.exec(err)![1]);
  const resources = `needs 1 nv device: nv:0 held by job ${holder} (${me})`;
  t.match(lines()[0], new RegExp(`^\\[xlurm\\] \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC Job ${id}: Waiting for resources\\.\\.\\.$`));
  t.match(lines()[1], new RegExp(`^\\[xlurm\\] \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC Job ${id}: Pending: Resources: ${resources.replace(/[()]/g, '\\$&')}$`));

  const detail = await d.run('xqueue', [String(id)]);
  t.equal(detail.code, 0);
  t.match(detail.stdout, new RegExp(`\\nRun time: -\\nReason: Resources: ${resources.replace(/[()]/g, '\\$&')}\\n$`), 'the Reason line ends the detail');
  const held = await d.run('xqueue', [String(holder)]);
  t.notMatch(held.stdout, /Reason:/, 'a running job has no Reason line');

  const long = (await d.run('xqueue', ['-l'])).stdout.split('\n');
  t.match(long[0], /^JOB +USER +STATE +DEVICES +STARTED \(UTC[^)]*\) +WAIT +RUN +REASON +NAME$/);
  t.match(long.find((l) => l.startsWith(`${holder} `)), /RUNNING .* - +\S+$/);
  t.match(long.find((l) => l.startsWith(`${id} `)), /PENDING .* Resources +echo$/);
  t.equal((await d.run('xqueue', ['--long'])).stdout.split('\n')[0], long[0]);
  t.match((await d.run('xqueue', [])).stdout.split('\n')[0], /^JOB +USER +STATE +DEVICES +STARTED \(UTC[^)]*\) +WAIT +RUN +NAME$/, 'the default table keeps its columns');

  // A CPU job takes the second slot: the code changes to MaxRunning, and xrun says so once.
  const cpuMarker = path.join(dir, 'cpu-go');
  const cpu = await d.batch(waitMarker(cpuMarker), ['-g', '0']);
  await d.waitState(cpu, 'RUNNING');
  await waitFor(() => /Pending: MaxRunning/.test(err), { what: "xrun's Pending: MaxRunning line" });
  t.match(lines()[2], new RegExp(`Job ${id}: Pending: MaxRunning: 2 jobs running \\(limit 2\\)$`));
  t.equal(lines().length, 3, 'nothing else yet');

  // The slot frees up: back to Resources (a new line); the held device's release keeps the code.
  fs.writeFileSync(cpuMarker, '');
  await waitFor(() => lines().length === 4, { what: "xrun's second Pending: Resources line" });
  t.match(lines()[3], new RegExp(`Job ${id}: Pending: Resources: ${resources.replace(/[()]/g, '\\$&')}$`));
  fs.writeFileSync(marker, '');
  t.equal(await exited, 0);
  t.equal(out, 'ran\n');
  t.equal(lines().length, 5, 'one line per change of code, then the start');
  t.match(lines()[4], /Task started\.$/);
  for (const j of [holder, cpu]) await d.waitState(j, 'COMPLETED');
});

t.test('xinfo --pools [--json] with fake GPUs', async (t) => {
  const fake = fakeLibrary(t, 'nvidia', gpus(4));
  const d = await startDaemon(t, { backend: 'nvidia', env: fake.env });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-pools-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const marker = path.join(dir, 'go');
  t.equal((await d.run('xlurm', ['exclude', '3'])).code, 0);
  const holder = await d.batch(waitMarker(marker), ['-g', '1']);
  await d.waitState(holder, 'RUNNING');

  const r = await d.run('xinfo', ['--pools', '--json']);
  t.equal(r.code, 0, r.stderr);
  const pools = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
  t.equal(pools.length, 1);
  t.same(Object.keys(pools[0]!), ['kind', 'label', 'total', 'free', 'excluded', 'unknown', 'groups', 'largest_now', 'largest_ever', 'reservation']);
  t.match(pools[0], { kind: 'nvidia', label: 'nv', total: 4, free: 2, excluded: 1, unknown: 0, reservation: null });
  t.ok(Array.isArray(pools[0]!.groups));
  t.ok((pools[0]!.largest_now as number) <= 2 && (pools[0]!.largest_ever as number) <= 3);

  const text = (await d.run('xinfo', ['--pools'])).stdout.split('\n');
  t.match(text[0], /^POOL +TOTAL +FREE +EXCLUDED +UNKNOWN +LARGEST-NOW +LARGEST-EVER +RESERVATION$/);
  t.match(text[1], /^nv +4 +2 +1 +0 +\d +\d +-$/);
  t.match(text[2], /^nv groups: /);
  t.match((await d.run('xinfo', [])).stdout, /^DEVICE +STATUS +JOB +NAME\n/, 'plain xinfo unchanged');
  const st = await d.run('xlurm', ['status']);
  t.match(st.stdout, /\nScheduler: greedy\nFair share: on\nGroup affinity: \w+\nLimits: [^\n]+\n$/, 'xlurm status names the policy in force');
  fs.writeFileSync(marker, '');
  await d.waitState(holder, 'COMPLETED');
});

t.test('xinfo --pools with declared groups under require; xlurm status names the affinity', async (t) => {
  const fake = fakeLibrary(t, 'nvidia', gpus(8));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-pools-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(file, '[devices]\ngroup_affinity = "require"\n\n[devices.groups]\nnv = "0-3;4-7"\n');
  const d = await startDaemon(t, { backend: 'nvidia', env: fake.env, args: ['--config', file] });
  const marker = path.join(dir, 'go');
  const held: number[] = [];
  for (const id of [0, 5]) held.push(await d.batch(waitMarker(marker), ['-i', String(id)]));
  for (const id of held) await d.waitState(id, 'RUNNING');

  const [p] = JSON.parse((await d.run('xinfo', ['--pools', '--json'])).stdout) as Array<Record<string, unknown>>;
  t.same(p, {
    kind: 'nvidia', label: 'nv', total: 8, free: 6, excluded: 0, unknown: 0,
    groups: [{ devices: [0, 1, 2, 3], free: [1, 2, 3] }, { devices: [4, 5, 6, 7], free: [4, 6, 7] }],
    largest_now: 3, largest_ever: 4, reservation: null,
  });
  const text = (await d.run('xinfo', ['--pools'])).stdout;
  t.match(text, /\nnv +8 +6 +0 +0 +3 +4 +-\nnv groups: 0-3 \(free: 1,2,3\), 4-7 \(free: 4,6,7\)\n$/);
  t.match((await d.run('xlurm', ['status'])).stdout, /\nGroup affinity: require\n/);
  fs.writeFileSync(marker, '');
  for (const id of held) await d.waitState(id, 'COMPLETED');
});
