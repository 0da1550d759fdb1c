// Scheduling policy end to end (docs/behaviour.md §21.1–§21.4): the real daemon on the fake NVML
// and the real CLIs: larger requests first, the reserve mode (a reservation that holds small jobs
// off and then starts the large one, backfill of a short job, xinfo's `reserved`), size caps, and
// `xlurm reload` switching the mode live.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { info, waitMarker } from '../helpers/devices';
import { fakeLibrary } from '../helpers/fixtures';
import { waitFor } from '../helpers/wait';
import type { Scope as Tap } from '../helpers/tap';

const me = os.userInfo().username;
const gpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} GPU-7e57c0de-0000-4000-8000-00000000000${i} "Fake H100 80GB"`);

/** A daemon on 4 fake GPUs reading `config`, with a scratch directory for markers. */
async function policyDaemon(t: Tap, config: string): Promise<{ d: Daemon; dir: string; file: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-pol-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(file, config);
  const fake = fakeLibrary(t, 'nvidia', gpus(4));
  const d = await startDaemon(t, { backend: 'nvidia', env: fake.env, args: ['--config', file] });
  return { d, dir, file };
}

/** Wait until job `id` is pending with `code`; its reason as `xqueue ID --json` shows it. */
async function reasonOf(d: Daemon, id: number, code: string): Promise<{ code: string; message: string }> {
  await waitFor(async () => (await d.job(id)).reason?.code === code, { what: `job ${id} pending with ${code}` });
  const r = await d.run('xqueue', [String(id), '--json']);
  return (JSON.parse(r.stdout) as { reason: { code: string; message: string } }).reason;
}

const devicesOf = async (d: Daemon, id: number) => (await d.job(id)).devices.map((x: { id: number }) => x.id);

t.test('larger requests first: a later 2-device job gets its devices before earlier 1-device jobs', async (t) => {
  const { d, dir } = await policyDaemon(t, '');
  const marker = path.join(dir, 'go');
  const holder = await d.batch(waitMarker(marker), ['-g', '4']);
  await d.waitState(holder, 'RUNNING');
  const stay = waitMarker(path.join(dir, 'end'));
  const a = await d.batch(stay, ['-g', '1']);
  const b = await d.batch(stay, ['-g', '2']);
  const c = await d.batch(stay, ['-g', '1']);
  for (const id of [a, b, c]) await reasonOf(d, id, 'Resources');
  fs.writeFileSync(marker, '');
  for (const id of [a, b, c]) await d.waitState(id, 'RUNNING');
  t.same(await devicesOf(d, b), [0, 1], 'the 2-device job was placed first');
  t.same(await devicesOf(d, a), [2]);
  t.same(await devicesOf(d, c), [3]);
  fs.writeFileSync(path.join(dir, 'end'), '');
  for (const id of [a, b, c]) await d.waitState(id, 'COMPLETED');
});

t.test('reserve: the large job reserves, small jobs are held off, a short one backfills, then the large one starts', async (t) => {
  const { d, dir } = await policyDaemon(t, '[scheduler]\nmode = "reserve"\n');
  const marker = path.join(dir, 'go');
  const holder = await d.batch(waitMarker(marker), ['-g', '2', '-t', '10m']);
  await d.waitState(holder, 'RUNNING');
  const big = await d.batch('true', ['-g', '4']);
  await waitFor(async () => (await info(d)).filter((v) => v.status === 'reserved').length === 2, { what: 'nv:2,nv:3 reserved' });
  const views = await info(d);
  t.same(views.map((v) => [v.status, v.job, v.reserved_for]), [
    ['allocated', holder, big], ['allocated', holder, big], ['reserved', null, big], ['reserved', null, big],
  ], 'free reserved devices read reserved; held ones stay allocated to their holder');
  const table = (await d.run('xinfo', [])).stdout.split('\n');
  t.match(table[3], new RegExp(`^nv:2 +reserved +${big} `), 'xinfo names the job it is reserved for');
  t.equal((await reasonOf(d, big, 'Resources')).code, 'Resources', 'the reserving job waits for the held devices');
  const pools = JSON.parse((await d.run('xinfo', ['--pools', '--json'])).stdout) as Array<{ reservation: unknown }>;
  const startedAt = (await d.job(holder)).started_at!;
  t.same(pools[0]!.reservation, { job: big, devices: [0, 1, 2, 3], expected_start: startedAt + 600 }, 'xinfo --pools: the reservation and its expected start');

  const small = await d.batch('true', ['-g', '1']);
  t.same(await reasonOf(d, small, 'Reservation'), { code: 'Reservation', message: `nv:0,nv:1,nv:2,nv:3 reserved for job ${big} (${me}, 4 devices)` });
  const short = await d.batch('true', ['-g', '1', '-t', '1m']);
  const done = await d.waitState(short, 'COMPLETED');
  t.same(done.devices.map((x: { id: number }) => x.id), [2], 'it ends before the holder\'s limit: backfilled onto a reserved device');
  t.equal((await d.job(small)).state, 'PENDING', 'the job without a limit still waits');

  fs.writeFileSync(marker, '');
  const started = await d.waitState(big, 'COMPLETED');
  t.same(started.devices.map((x: { id: number }) => x.id), [0, 1, 2, 3]);
  t.ok(started.started_at! <= ((await d.waitState(small, 'COMPLETED')).started_at!), 'the large job started before the small one');
});

t.test('size caps: a second 2-device job waits with SizeLimit while a 1-device job starts', async (t) => {
  const { d, dir } = await policyDaemon(t, '[scheduler]\nmax_running_by_size = { 2 = 1 }\n');
  const marker = path.join(dir, 'go');
  const first = await d.batch(waitMarker(marker), ['-g', '2']);
  await d.waitState(first, 'RUNNING');
  const second = await d.batch('true', ['-g', '2']);
  const one = await d.batch('true', ['-g', '1']);
  t.same(await reasonOf(d, second, 'SizeLimit'), { code: 'SizeLimit', message: '1 job of 2 devices running (limit 1)' });
  await d.waitState(one, 'COMPLETED');
  fs.writeFileSync(marker, '');
  await d.waitState(second, 'COMPLETED');
});

t.test('xlurm reload switches greedy to reserve live', async (t) => {
  const { d, dir, file } = await policyDaemon(t, '[scheduler]\nmode = "greedy"\n');
  const marker = path.join(dir, 'go');
  const holder = await d.batch(waitMarker(marker), ['-g', '2', '-t', '10m']);
  await d.waitState(holder, 'RUNNING');
  const big = await d.batch('true', ['-g', '4']);
  await reasonOf(d, big, 'Resources');
  const greedy = await d.batch('true', ['-g', '1']);
  await d.waitState(greedy, 'COMPLETED');
  t.pass('greedy: a small job overtakes the blocked large one');

  fs.writeFileSync(file, '[scheduler]\nmode = "reserve"\n');
  const r = await d.run('xlurm', ['reload']);
  t.equal(r.code, 0, r.stderr);
  const small = await d.batch('true', ['-g', '1']);
  t.equal((await reasonOf(d, small, 'Reservation')).code, 'Reservation', 'reserve: now held off');
  fs.writeFileSync(marker, '');
  await d.waitState(big, 'COMPLETED');
  await d.waitState(small, 'COMPLETED');
});
