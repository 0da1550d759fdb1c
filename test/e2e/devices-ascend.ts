// Huawei Ascend devices end to end (spec 5, 6.4, 9): the real daemon with `--backend ascend` loads
// the fake DCMI (test/fixtures/fake-dcmi, as an Ascend 950: the v2 API) through
// XLURM_DCMI_LIBRARY; tests rewrite the fake's state file while the daemon runs and drive
// everything through the real CLIs (polls use the `info` op). The classic API and start-up:
// devices-ascend-startup.ts.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SHOW_VISIBILITY, afterFullProbe, fakeDaemon, jobLog, views, waitMarker } from '../helpers/devices';
import { fakeLibrary, type FakeLibrary } from '../helpers/fixtures';
import { waitFor } from '../helpers/wait';

// Cards 3 and 6 hold two compute chips each (card 3 also an MCU, which is no device); the logical
// ids do not follow the card order, so discovery must sort.
const CHIPS = [
  'chip 3 0 2 Ascend 910B3',
  'chip 3 1 3 Ascend 910B3',
  'mcu 3 2',
  'chip 6 0 0 Ascend 910B3',
  'chip 6 1 1 Ascend 910B3',
];
const CARD_CHIP: Record<number, [number, number]> = { 0: [6, 0], 1: [6, 1], 2: [3, 0], 3: [3, 1] };
const device = (id: number) => ({ kind: 'ascend', id, name: 'Ascend 910B3', visible: String(id), npu: CARD_CHIP[id]![0], chip: CARD_CHIP[id]![1] });
const row = (id: number, status: string, job = '-') => `asc:${id}        ${status.padEnd(11)} ${job.padEnd(6)} Ascend 910B3\n`;
const HEADER = 'DEVICE       STATUS      JOB    NAME\n';
const HEALTH = 'dcmiv2_get_device_health';
const PROCS = 'dcmiv2_get_device_proc_mem_info';
/** Every chip's health is read once per poll (the process query is skipped on unhealthy chips). */
const probes = (fake: FakeLibrary) => afterFullProbe(fake, (c) => c === HEALTH, 4);
const statuses = async (d: Parameters<typeof views>[0]) => (await views(d)).map((v) => v.status as string);
/** SHOW_VISIBILITY's line for Ascend logical ids `asc` (every other variable -1). */
const visible = (asc: string, adi = '0') => `CUDA=-1 ASC=${asc} MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=${adi}\n`;

t.test('Ascend 950 (v2 API): chips, allocation per chip, visibility, health, busy and unknown', async (t) => {
  const fake = fakeLibrary(t, 'ascend', [...CHIPS, 'health 3 3']);
  const { d, dir } = await fakeDaemon(t, [fake], { backend: 'ascend' });
  const calls = fake.calls();
  t.equal(calls.filter((c) => c === 'dcmiv2_init').length, 1);
  t.notOk(calls.some((c) => c.startsWith('dcmi_')), 'no classic call');

  t.test('xinfo: one row per compute chip, sorted by logical id; a critical alarm shows unhealthy', async (t) => {
    const r = await d.run('xinfo', []);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, HEADER + row(0, 'idle') + row(1, 'idle') + row(2, 'idle') + row(3, 'unhealthy'));
    const json = await d.run('xinfo', ['--json']);
    t.same(JSON.parse(json.stdout), [0, 1, 2, 3].map((id) => ({ device: device(id), job: null, status: id === 3 ? 'unhealthy' : 'idle' })));
    t.same(((await d.request('status', {})) as any).result.backends, ['ascend']);
  });

  t.test('logical ids in ASCEND_RT_VISIBLE_DEVICES, ASCEND_DEVICE_ID=0; the chips of one card go to different jobs', async (t) => {
    const m = path.join(dir, 'm1');
    const a = await d.batch(`${SHOW_VISIBILITY}; ${waitMarker(m)}`, ['-i', '0'], { env: { ASCEND_DEVICE_ID: '5', ASCEND_RT_VISIBLE_DEVICES: '7' } });
    const b = await d.batch(`${SHOW_VISIBILITY}; ${waitMarker(m)}`, ['-i', '1']);
    const ja = await d.waitState(a, 'RUNNING');
    const jb = await d.waitState(b, 'RUNNING');
    t.same([ja.devices, jb.devices], [[device(0)], [device(1)]], 'both chips of card 6, one job each');
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'allocated', String(a)) + row(1, 'allocated', String(b)) + row(2, 'idle') + row(3, 'unhealthy'));
    const q = await d.run('xqueue', []);
    t.match(q.stdout, new RegExp(`\\n${a} +\\S+ +RUNNING +asc:\\[0\\] `), q.stdout);
    fs.writeFileSync(m, '');
    await d.waitState(a, 'COMPLETED');
    await d.waitState(b, 'COMPLETED');
    t.equal(await jobLog(d, a), visible('0'), 'the submitted ASCEND_DEVICE_ID and ASCEND_RT_VISIBLE_DEVICES are replaced');
    t.equal(await jobLog(d, b), visible('1'));

    let r = await d.run('xrun', ['--device', 'asc', '-g', '3', '--', 'sh', '-c', SHOW_VISIBILITY]);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, visible('0,1,2'), 'three chips (not the unhealthy one); ASCEND_DEVICE_ID is still 0');
    r = await d.run('xrun', ['-i', '2,0', '--', 'sh', '-c', SHOW_VISIBILITY], { env: { ASCEND_DEVICE_ID: '1' } });
    t.equal(r.stdout, visible('2,0'), 'allocation order');
    r = await d.run('xrun', ['-g', '0', 'sh', '-c', SHOW_VISIBILITY], { env: { ASCEND_DEVICE_ID: '0' } });
    t.equal(r.stdout, visible('-1', 'unset'), 'a CPU job: -1, and no ASCEND_DEVICE_ID');
  });

  t.test('an unhealthy chip is never allocated; it returns when the alarm clears', async (t) => {
    const four = await d.batch('echo "$ASCEND_RT_VISIBLE_DEVICES"', ['-g', '4']);
    const pinned = await d.batch('echo "$ASCEND_RT_VISIBLE_DEVICES"', ['-i', '3']);
    const r = await d.run('xrun', ['-g', '3', '--', 'sh', '-c', 'echo "$ASCEND_RT_VISIBLE_DEVICES"']);
    t.equal(r.stdout, '0,1,2\n', 'a later, smaller job gets the healthy chips');
    await probes(fake);
    t.same([(await d.job(four)).state, (await d.job(pinned)).state], ['PENDING', 'PENDING']);
    fake.write([...CHIPS, 'health 3 1']); // a minor alarm: usable
    await d.waitState(pinned, 'COMPLETED', 10000);
    t.equal(await jobLog(d, pinned), '3\n');
    await d.waitState(four, 'COMPLETED', 10000);
    t.equal(await jobLog(d, four), '0,1,2,3\n');
    fake.write([...CHIPS, 'health 2 2']);
    await waitFor(async () => (await statuses(d))[2] === 'unhealthy', { what: 'asc:2 unhealthy (major alarm)' });
    fake.write(CHIPS);
    await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { what: 'all idle' });
  });

  t.test('a process on a chip makes it busy; a failed or hung query makes it unknown', async (t) => {
    fake.write([...CHIPS, 'procs 2 4242 4343']);
    await waitFor(async () => (await statuses(d))[2] === 'busy', { what: 'asc:2 busy' });
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'idle') + row(1, 'idle') + row(2, 'busy') + row(3, 'idle'));
    const id = await d.batch('echo "$ASCEND_RT_VISIBLE_DEVICES"', ['-i', '2']);
    await probes(fake);
    t.equal((await d.job(id)).state, 'PENDING', 'waits while the chip is busy');

    fake.write([...CHIPS, `fail ${PROCS} -8005 2`]);
    await waitFor(async () => (await statuses(d))[2] === 'unknown', { what: 'asc:2 unknown' });
    const error = `${PROCS}: inner error (-8005)`;
    t.equal((await d.run('xinfo', [])).stdout, HEADER + row(0, 'idle') + row(1, 'idle') + row(2, 'unknown') +
      `             error: ${error}\n` + row(3, 'idle'));
    t.same((await views(d))[2], { device: device(2), job: null, status: 'unknown', monitoring_error: error });
    await probes(fake);
    t.equal((await d.job(id)).state, 'PENDING', 'an unknown chip is not allocated');

    fake.write([...CHIPS, `hang ${HEALTH} 30 0`]);
    await waitFor(async () => (await statuses(d))[0] === 'unknown', { timeout: 10000, what: 'asc:0 unknown' });
    const v = await views(d);
    t.same(v.map((x) => x.status), ['unknown', 'unknown', 'unknown', 'unknown'], 'every chip of the library');
    t.equal(v[0].monitoring_error, `${HEALTH} timed out after 1500 ms`);
    t.equal((await d.run('xqueue', [])).code, 0, 'clients are still answered');

    fake.write(CHIPS);
    await d.waitState(id, 'COMPLETED', 15000);
    t.equal(await jobLog(d, id), '2\n');
    await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { timeout: 10000, what: 'recovery' });
    t.notOk(fake.calls().some((c) => c.startsWith('CONCURRENT')), 'never two calls into the library at once');
    t.equal(d.output.split('\n').filter((l) => l.endsWith(`device asc:2 unknown: ${error}`)).length, 1, 'logged once');
  });
});
