// Pending reasons end to end (docs/behaviour.md §20.4): the real daemon on the fake NVML
// says why a job waits in `xqueue ID --json` and in the queue's summaries, and the tables keep the
// core's columns.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { waitFor } from '../helpers/wait';
import { fakeLibrary } from '../helpers/fixtures';

const me = os.userInfo().username;
const gpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} GPU-7e57c0de-0000-4000-8000-00000000000${i} "Fake H100 80GB"`);
const waitMarker = (marker: string) => `while [ ! -e ${marker} ]; do sleep 0.02; done`;

/** `xqueue ID --json`, through the real CLI. */
async function detail(d: Daemon, id: number): Promise<Record<string, any>> {
  const r = await d.run('xqueue', [String(id), '--json']);
  if (r.code !== 0) throw new Error(`xqueue ${id} --json: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, any>;
}

/** Wait until job `id`'s reason has `code` (polling the cheap `get` op), then return it as xqueue shows it. */
async function reasonOf(d: Daemon, id: number, code: string): Promise<{ code: string; message: string }> {
  await waitFor(async () => (await d.job(id)).reason?.code === code, { what: `job ${id} pending with ${code}` });
  return (await detail(d, id)).reason as { code: string; message: string };
}

t.test('a job waiting behind a held and a busy device: Resources, naming both; DevicesUnavailable once nothing can be given', async (t) => {
  const fake = fakeLibrary(t, 'nvidia', gpus(2));
  const d = await startDaemon(t, { backend: 'nvidia', env: fake.env });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-reason-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const marker = path.join(dir, 'go');

  const holder = await d.batch(waitMarker(marker), ['-g', '1']);
  await d.waitState(holder, 'RUNNING');
  fake.write([...gpus(2), 'procs 1 4242']);
  await waitFor(async () => ((await d.request('info', {})) as { result: Array<{ status: string }> }).result[1]!.status === 'busy', { what: 'nv:1 busy' });

  const waiting = await d.batch('true', ['-g', '2']);
  const r = await reasonOf(d, waiting, 'Resources');
  t.same(r, { code: 'Resources', message: `needs 2 nv devices: nv:0 held by job ${holder} (${me}), nv:1 busy (pid 4242, not started by xlurm)` },
    'the busy device names the foreign process the library reported on it');
  t.equal((await detail(d, holder)).reason, null, 'a running job has no reason');

  const rows = JSON.parse((await d.run('xqueue', ['--json'])).stdout) as Array<Record<string, any>>;
  t.same(rows.find((x) => x.id === waiting)!.reason, r, 'the summary carries the same reason');
  const all = JSON.parse((await d.run('xqueue', ['--all', '--json'])).stdout) as Array<Record<string, any>>;
  t.same(all.find((x) => x.id === waiting)!.reason, r, 'also in the history view (rows read from the store)');
  const table = await d.run('xqueue', []);
  t.match(table.stdout.split('\n')[0], /^JOB +USER +STATE +DEVICES +STARTED \(UTC[^)]*\) +WAIT +RUN +NAME$/, 'the table keeps its columns');

  const pinned = await d.batch('true', ['-i', '1']);
  t.same(await reasonOf(d, pinned, 'Resources'), { code: 'Resources', message: 'needs nv:1: nv:1 busy (pid 4242, not started by xlurm)' });
  fake.write([...gpus(2), 'procs 1 4243 4242']);
  await waitFor(async () => (await d.job(pinned)).reason?.message.includes('pids') === true, { what: 'the reason follows the processes' });
  t.same((await detail(d, pinned)).reason, { code: 'Resources', message: 'needs nv:1: nv:1 busy (pids 4242,4243, not started by xlurm)' },
    'another process on it: both named, ascending');
  fake.write([...gpus(2), 'fail nvmlDeviceGetComputeRunningProcesses 999 1']);
  t.same(await reasonOf(d, pinned, 'DevicesUnavailable'), { code: 'DevicesUnavailable', message: 'needs nv:1: nv:1 state unknown' },
    'its only device went unknown');

  fake.write(gpus(2));
  fs.writeFileSync(marker, '');
  for (const id of [holder, waiting, pinned]) {
    const j = await d.waitState(id, 'COMPLETED');
    t.equal(j.reason, null, `job ${id} finished: no reason`);
  }
});

t.test('with every max_running slot taken, every pending job says MaxRunning', async (t) => {
  const d = await startDaemon(t, { maxRunning: 1 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-reason-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const marker = path.join(dir, 'go');
  const first = await d.batch(waitMarker(marker), ['-g', '0']);
  await d.waitState(first, 'RUNNING');
  const second = await d.batch('true', ['-g', '0']);
  const third = await d.batch('true', ['-g', '0']);
  for (const id of [second, third]) {
    t.same(await reasonOf(d, id, 'MaxRunning'), { code: 'MaxRunning', message: '1 job running (limit 1)' }, `job ${id}`);
  }
  fs.writeFileSync(marker, '');
  for (const id of [first, second, third]) await d.waitState(id, 'COMPLETED');
  t.equal((await detail(d, third)).reason, null);
});
