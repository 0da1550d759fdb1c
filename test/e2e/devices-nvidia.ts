// NVIDIA devices end to end (spec 5, 6.4, 9): the real daemon with `--backend nvidia` loads the
// fake NVML (test/fixtures/fake-nvml) through XLURM_NVML_LIBRARY; tests rewrite the fake's state
// file while the daemon runs and drive everything through the real CLIs.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DAEMON_MAIN, baseEnv } from '../helpers/env';
import { Daemon, runProcess, startDaemon, tempHome, type DaemonOpts } from '../helpers/daemon';
import { fakeLibrary, type FakeLibrary } from '../helpers/fixtures';
import { pidAlive, waitFor } from '../helpers/wait';
import { checkResponsive } from '../helpers/devices';

const uuid = (i: number) => `GPU-7e57c0de-0000-4000-8000-00000000000${i}`;
const gpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} ${uuid(i)} "Fake H100 80GB"`);
const PROCS = 'nvmlDeviceGetComputeRunningProcesses_v3';

async function nvDaemon(t: any, state: string[], opts: DaemonOpts = {}): Promise<{ d: Daemon; fake: FakeLibrary; dir: string }> {
  const fake = fakeLibrary(t, 'nvidia', state);
  const d = await startDaemon(t, { backend: 'nvidia', ...opts, env: { ...fake.env, ...(opts.env ?? {}) } });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-nv-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { d, fake, dir };
}

/** A job command that waits until `marker` exists. */
const waitMarker = (marker: string) => `while [ ! -e ${marker} ]; do sleep 0.02; done`;

const info = async (d: Daemon) => JSON.parse((await d.run('xinfo', ['--json'])).stdout) as any[];
const statuses = async (d: Daemon) => (await info(d)).map((v) => v.status as string);

/** Resolve once a whole probe has run (and been acted on) since the call. */
async function afterFullProbe(fake: FakeLibrary, devices: number): Promise<void> {
  const count = () => fake.calls().filter((c) => c === PROCS).length;
  const n = count();
  await waitFor(() => count() >= n + 2 * devices + 1, { timeout: 10000, what: 'a full device poll' });
}

async function log(d: Daemon, id: number): Promise<string> {
  return (await d.run('xqueue', [String(id), '--log'])).stdout;
}

t.test('xinfo lists the fake devices; allocation, visibility and DEVICES column', async (t) => {
  const { d, fake, dir } = await nvDaemon(t, gpus(4));

  t.test('xinfo text and json', async (t) => {
    const r = await d.run('xinfo', []);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, 'DEVICE       STATUS      JOB    NAME\n' +
      [0, 1, 2, 3].map((i) => `nv:${i}         idle        -      Fake H100 80GB\n`).join(''));
    t.same(await info(d), [0, 1, 2, 3].map((i) => ({
      device: { kind: 'nvidia', id: i, name: 'Fake H100 80GB', visible: uuid(i), npu: null, chip: null }, job: null, status: 'idle',
    })));
  });

  t.test('two jobs never share a device; a third waits; visibility variables', async (t) => {
    const m = path.join(dir, 'm1');
    const show = 'echo "CUDA=$CUDA_VISIBLE_DEVICES ASC=$ASCEND_RT_VISIBLE_DEVICES MUSA=$MUSA_VISIBLE_DEVICES MT=$MTHREADS_VISIBLE_DEVICES MACA=$MACA_VISIBLE_DEVICES HIP=$HIP_VISIBLE_DEVICES ROCR=$ROCR_VISIBLE_DEVICES ADI=${ASCEND_DEVICE_ID-unset}"';
    const a = await d.batch(`${show}; ${waitMarker(m)}`, ['-g', '2'], { env: { CUDA_VISIBLE_DEVICES: '7', ASCEND_DEVICE_ID: '3' } });
    const b = await d.batch(`${show}; ${waitMarker(m)}`, ['-g', '2']);
    const c = await d.batch(`${show}`, ['-g', '1']);
    const ja = await d.waitState(a, 'RUNNING');
    const jb = await d.waitState(b, 'RUNNING');
    const used = [...ja.devices, ...jb.devices].map((x: any) => x.id);
    t.same(used.sort(), [0, 1, 2, 3], 'four distinct devices');
    t.equal((await d.job(c)).state, 'PENDING');
    const q = await d.run('xqueue', []);
    t.match(q.stdout, new RegExp(`\\n${c} +\\S+ +PENDING +auto:1 +- `), q.stdout);
    t.match(q.stdout, new RegExp(`\\n${a} +\\S+ +RUNNING +nv:\\[0,1\\] `), q.stdout);
    t.same((await info(d)).map((v) => [v.status, v.job]), [['allocated', a], ['allocated', a], ['allocated', b], ['allocated', b]]);
    const xi = await d.run('xinfo', []);
    t.match(xi.stdout, new RegExp(`\\nnv:2         allocated   ${b} +Fake H100 80GB\\n`));

    const line = await waitFor(async () => (await log(d, a)).trim());
    t.equal(line, `CUDA=${uuid(0)},${uuid(1)} ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=unset`);
    fs.writeFileSync(m, '');
    await d.waitState(a, 'COMPLETED');
    await d.waitState(b, 'COMPLETED');
    const jc = await d.waitState(c, 'COMPLETED');
    t.equal(jc.devices.length, 1);
    t.equal((await log(d, c)).trim(), `CUDA=${uuid(jc.devices[0].id)} ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=unset`);

    const cpu = await d.run('xrun', ['-g', '0', 'sh', '-c', show], { env: { CUDA_VISIBLE_DEVICES: '0' } });
    t.equal(cpu.stdout, 'CUDA=-1 ASC=-1 MUSA=-1 MT=-1 MACA=-1 HIP=-1 ROCR=-1 ADI=unset\n', 'a CPU job sees -1 everywhere');
  });

  t.test('-i keeps the given order (pending DEVICES shows the ids); --device nvidia / nv', async (t) => {
    const m = path.join(dir, 'm3');
    const hold = await d.batch(waitMarker(m), ['-i', '2']);
    await d.waitState(hold, 'RUNNING');
    const id = await d.batch('echo "$CUDA_VISIBLE_DEVICES"', ['-i', '3,2']);
    const q = await d.run('xqueue', []);
    t.match(q.stdout, new RegExp(`\\n${id} +\\S+ +PENDING +auto:\\[3,2\\] `), q.stdout);
    fs.writeFileSync(m, '');
    const j = await d.waitState(id, 'COMPLETED');
    t.same(j.devices.map((x: any) => x.id), [3, 2]);
    t.equal(await log(d, id), `${uuid(3)},${uuid(2)}\n`);
    const all = await d.run('xqueue', ['--all']);
    t.match(all.stdout, new RegExp(`\\n${id} +\\S+ +COMPLETED +nv:\\[3,2\\] `));

    for (const kind of ['nvidia', 'nv']) {
      const r = await d.run('xrun', ['--device', kind, '-g', '1', '--', 'sh', '-c', 'echo "$CUDA_VISIBLE_DEVICES"']);
      t.equal(r.code, 0, r.stderr);
      t.match(r.stdout, /^GPU-7e57c0de-\S+\n$/);
    }
    const pend = await d.batch(waitMarker(path.join(dir, 'never')), ['--device', 'nv', '-g', '4', '-n', 'big']);
    const q2 = await d.run('xqueue', []);
    t.match(q2.stdout, new RegExp(`\\n${pend} +\\S+ +(PENDING +nv:4|RUNNING +nv:\\[0,1,2,3\\]) `), q2.stdout);
    await d.run('xcancel', [String(pend)]);
    await d.waitState(pend, 'CANCELLED');
  });

  t.test('-x: per-job exclusion', async (t) => {
    let r = await d.run('xrun', ['-g', '2', '-x', '0,2', '--', 'sh', '-c', 'echo "$CUDA_VISIBLE_DEVICES"']);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, `${uuid(1)},${uuid(3)}\n`);
    r = await d.run('xrun', ['-g', '1', '--exclude-device-ids', '0', '-x', '1', '--', 'sh', '-c', 'echo "$CUDA_VISIBLE_DEVICES"']);
    t.equal(r.stdout, `${uuid(2)}\n`, 'repeatable');
    const id = await d.batch('true', ['-x', '3']);
    const j = await d.waitState(id, 'COMPLETED');
    t.same(j.spec.exclude_ids, [3]);
    t.notSame(j.devices.map((x: any) => x.id), [3]);
    const plain = await d.job(await d.batch('true', ['-g', '0']));
    t.notOk('exclude_ids' in plain.spec, 'omitted when absent');

    r = await d.run('xrun', ['-g', '4', '-x', '1', 'true']);
    t.equal(r.code, 1);
    t.equal(r.stderr, 'xlurm: requested 4 device(s), but no matching pool has enough devices\n');
    for (const bin of ['xrun', 'xbatch']) {
      r = await d.run(bin, ['-x', '0', '-i', '1', '--wrap', 'true'].filter((a) => bin === 'xbatch' || a !== '--wrap'));
      t.equal(r.code, 1, bin);
      t.equal(r.stderr, 'xlurm: -x cannot be combined with -i\n', bin);
    }
    const raw = await d.request('submit', { command: ['true'], cwd: dir, env: {}, name: 'x', count: 1, device_ids: [1], exclude_ids: [0] }) as any;
    t.equal(raw.ok, false);
    t.match(raw.error.message, '-x cannot be combined with -i');
  });

  t.test('infeasible requests are rejected at submission', async (t) => {
    for (const args of [['-g', '5'], ['--device', 'ascend'], ['--device', 'asc', '-g', '1'], ['-i', '7'], ['-i', '0,7']]) {
      const r = await d.run('xbatch', [...args, '--wrap', 'true']);
      t.equal(r.code, 1, args.join(' '));
      t.match(r.stderr, /^xlurm: requested \d device\(s\), but no matching pool has enough devices\n$/, args.join(' '));
    }
  });

  t.test('an external compute process makes a device busy; a job waits, then starts', async (t) => {
    fake.write([...gpus(4), 'procs 1 4242 4343']);
    await waitFor(async () => (await statuses(d))[1] === 'busy', { what: 'nv:1 busy' });
    t.match((await d.run('xinfo', [])).stdout, /\nnv:1         busy        -      Fake H100 80GB\n/);
    const id = await d.batch('echo "$CUDA_VISIBLE_DEVICES"', ['-i', '1']);
    await afterFullProbe(fake, 4);
    t.equal((await d.job(id)).state, 'PENDING', 'waits while the device is busy');
    fake.write(gpus(4));
    await d.waitState(id, 'COMPLETED', 10000);
    t.equal(await log(d, id), `${uuid(1)}\n`);
  });
});

t.test('query failures, changed identity and hung calls make devices unknown', async (t) => {
  const { d, fake } = await nvDaemon(t, gpus(3));

  t.test('a failing query shows unknown with the error and pauses allocation until recovery', async (t) => {
    fake.write([...gpus(3), 'fail nvmlDeviceGetComputeRunningProcesses 999 1']);
    await waitFor(async () => (await statuses(d))[1] === 'unknown', { what: 'nv:1 unknown' });
    const r = await d.run('xinfo', []);
    t.equal(r.stdout, 'DEVICE       STATUS      JOB    NAME\n' +
      'nv:0         idle        -      Fake H100 80GB\n' +
      'nv:1         unknown     -      Fake H100 80GB\n' +
      '             error: nvmlDeviceGetComputeRunningProcesses: Unknown Error (999)\n' +
      'nv:2         idle        -      Fake H100 80GB\n');
    const v = (await info(d))[1];
    t.same(v, { device: { kind: 'nvidia', id: 1, name: 'Fake H100 80GB', visible: uuid(1), npu: null, chip: null },
      job: null, status: 'unknown', monitoring_error: 'nvmlDeviceGetComputeRunningProcesses: Unknown Error (999)' });
    t.notOk('monitoring_error' in (await info(d))[0]);

    const id = await d.batch('echo "$CUDA_VISIBLE_DEVICES"', ['-i', '1']);
    const other = await d.batch('echo "$CUDA_VISIBLE_DEVICES"', ['-g', '2']);
    await afterFullProbe(fake, 3);
    t.equal((await d.job(id)).state, 'PENDING', 'an unknown device is not allocated');
    const jo = await d.waitState(other, 'COMPLETED');
    t.same(jo.devices.map((x: any) => x.id), [0, 2], 'the others still are');
    fake.write(gpus(3));
    await d.waitState(id, 'COMPLETED', 10000);
    const lines = d.output.split('\n');
    t.equal(lines.filter((l) => l.endsWith('device nv:1 unknown: nvmlDeviceGetComputeRunningProcesses: Unknown Error (999)')).length, 1, 'logged once');
    t.equal(lines.filter((l) => l.endsWith('device nv:1 recovered: idle')).length, 1, 'recovery logged');
  });

  t.test('a changed UUID shows unknown', async (t) => {
    fake.write([...gpus(2), 'device 2 GPU-0ther "Fake H100 80GB"']);
    await waitFor(async () => (await statuses(d))[2] === 'unknown', { what: 'nv:2 unknown' });
    const v = (await info(d))[2];
    t.equal(v.monitoring_error, `device identity changed since discovery: ${uuid(2)} is now GPU-0ther`);
    const r = await d.run('xrun', ['-i', '2', 'true'], { timeout: 3000 }).catch(() => null);
    t.not(r?.code, 0, 'no job runs on it');
    fake.write(gpus(3));
    await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { what: 'all idle again' });
  });

  t.test('a hung call does not delay clients; the devices show unknown; later recovery', async (t) => {
    fake.write([...gpus(3), `hang ${PROCS} 30 0`]);
    await waitFor(async () => (await statuses(d))[0] === 'unknown', { timeout: 10000, what: 'nv:0 unknown' });
    const v = await info(d);
    t.same(v.map((x) => x.status), ['unknown', 'unknown', 'unknown'], 'every device of the library');
    t.equal(v[0].monitoring_error, 'nvmlDeviceGetComputeRunningProcesses timed out after 1500 ms');
    // the call is still hung (30 s): clients are answered at once, over several polls
    await checkResponsive(t, d, 0, 3000);
    t.notOk(fake.calls().some((c) => c.startsWith('CONCURRENT')), 'no second call while one is hung');
    fake.write(gpus(3)); // the fake's call returns
    await waitFor(async () => (await statuses(d)).every((s) => s === 'idle'), { timeout: 10000, what: 'recovery' });
  });
});

t.test('a device freed by an ending job goes to the next job without waiting for the poll', async (t) => {
  // a long poll, so only the immediate re-probe can hand the device over within a second
  const { d, fake, dir } = await nvDaemon(t, gpus(1), { env: { XLURM_POLL_INTERVAL_MS: '4000' } });
  const m = path.join(dir, 'm');
  const a = await d.batch(`${waitMarker(m)}; date +%s.%N`, ['-g', '1']);
  await d.waitState(a, 'RUNNING');
  const b = await d.batch('date +%s.%N', ['-g', '1']);
  // end the first job right after a poll, so the next poll is ~4 s away
  const n = fake.calls().filter((c) => c === PROCS).length;
  await waitFor(() => fake.calls().filter((c) => c === PROCS).length > n, { interval: 5, what: 'a poll' });
  fs.writeFileSync(m, '');
  const ja = await d.waitState(a, 'COMPLETED');
  const jb = await d.waitState(b, 'COMPLETED');
  const ended = Number((await log(d, a)).trim());
  const began = Number((await log(d, b)).trim());
  t.ok(began - ended < 1, `the next job started ${(began - ended).toFixed(3)} s after the previous one ended`);
  t.ok(jb.started_at - ja.result.finished_at <= 1, 'started_at within a second of finished_at');
  t.same(jb.devices.map((x: any) => x.id), [0]);
});

t.test('administrator exclusions', async (t) => {
  const { d, fake, dir } = await nvDaemon(t, gpus(2), { args: ['--exclude-device-ids', '1'] });
  t.match((await d.run('xinfo', [])).stdout, /\nnv:1         disabled    -      Fake H100 80GB\n/);
  let r = await d.run('xbatch', ['-i', '1', '--wrap', 'true']);
  t.equal(r.stderr, 'xlurm: requested 1 device(s), but no matching pool has enough devices\n', 'excluded at start');
  r = await d.run('xlurm', ['include', '1']);
  t.equal(r.code, 0, r.stderr);

  const m = path.join(dir, 'm');
  const hold = await d.batch(waitMarker(m), ['-i', '0']);
  await d.waitState(hold, 'RUNNING');
  const id = await d.batch('echo "$CUDA_VISIBLE_DEVICES"', ['-i', '0']);
  r = await d.run('xlurm', ['exclude', '0']);
  t.equal(r.code, 0, r.stderr);
  t.same((await info(d)).map((v) => [v.status, v.job]), [['disabled', hold], ['idle', null]], 'disabled, still held by the running job');
  t.equal((await d.job(hold)).state, 'RUNNING', 'the running job is not interrupted');
  r = await d.run('xbatch', ['-i', '0', '--wrap', 'true']);
  t.equal(r.code, 1, 'new requests for an excluded device are rejected');
  fs.writeFileSync(m, '');
  await d.waitState(hold, 'COMPLETED');
  await waitFor(async () => (await info(d))[0].job === null, { what: 'released' });
  await afterFullProbe(fake, 2);
  t.equal((await d.job(id)).state, 'PENDING', 'waits while excluded');
  r = await d.run('xlurm', ['include', '0']);
  t.equal(r.code, 0, r.stderr);
  await d.waitState(id, 'COMPLETED');
  t.equal(await log(d, id), `${uuid(0)}\n`);
});

t.test('start-up with --backend nvidia', async (t) => {
  const fake = fakeLibrary(t, 'nvidia', gpus(2));

  t.test('xlurm start with the fake library works', async (t) => {
    const d = new Daemon(t, tempHome(t), { env: fake.env });
    t.teardown(async () => {
      const st = await d.request('status', {}).catch(() => null) as any;
      await d.run('xlurm', ['stop'], { cwd: os.tmpdir() });
      if (st?.ok) await waitFor(() => !pidAlive(st.result.pid), { what: 'daemon exit' });
    });
    const r = await d.run('xlurm', ['start', '--backend', 'nvidia'], { cwd: os.tmpdir() });
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, 'xlurm started\n');
    t.same(await statuses(d), ['idle', 'idle']);
    const st = await d.request('status', {}) as any;
    t.same(st.result.backends, ['nvidia']);
  });

  t.test('a broken library path stops start-up with a clear message', async (t) => {
    const home = tempHome(t);
    const bad = { ...fake.env, XLURM_NVML_LIBRARY: '/nonexistent/libnvidia-ml.so.1' };
    const fg = await runProcess(process.execPath, [DAEMON_MAIN, 'daemon', '--backend', 'nvidia'], { env: baseEnv({ XLURM_HOME: home, ...bad }) });
    t.equal(fg.code, 1);
    t.match(fg.stderr, /^xlurm: nv discovery: cannot load library: \/nonexistent\/libnvidia-ml\.so\.1: cannot open shared object file: No such file or directory\n$/);

    const d = new Daemon(t, tempHome(t), { env: bad });
    const r = await d.run('xlurm', ['start', '--backend', 'nvidia'], { cwd: os.tmpdir() });
    t.equal(r.code, 1);
    t.equal(r.stderr, `xlurm: daemon exited (exit status: 1); see ${path.join(d.home, 'daemon.log')}\n`);
    t.match(fs.readFileSync(path.join(d.home, 'daemon.log'), 'utf8'), /xlurm: nv discovery: cannot load library: \/nonexistent\/libnvidia-ml\.so\.1: cannot open shared object file/);

    const rel = await runProcess(process.execPath, [DAEMON_MAIN, 'daemon', '--backend', 'nv'],
      { env: baseEnv({ XLURM_HOME: tempHome(t), ...fake.env, XLURM_NVML_LIBRARY: 'libnvidia-ml.so.1' }) });
    t.equal(rel.stderr, 'xlurm: nv discovery: XLURM_NVML_LIBRARY must be an absolute path: libnvidia-ml.so.1\n');

    fake.write(['device 0 GPU-x a', 'fail nvmlInit 9']);
    const init = await runProcess(process.execPath, [DAEMON_MAIN, 'daemon', '--backend', 'nvidia'], { env: baseEnv({ XLURM_HOME: tempHome(t), ...fake.env }) });
    t.equal(init.stderr, 'xlurm: nv discovery: nvmlInit_v2: Driver Not Loaded (9)\n');
    fake.write([]);
    const none = await runProcess(process.execPath, [DAEMON_MAIN, 'daemon', '--backend', 'nvidia'], { env: baseEnv({ XLURM_HOME: tempHome(t), ...fake.env }) });
    t.equal(none.stderr, 'xlurm: nv discovery: no compute devices discovered\n');
    fake.write(gpus(2));
  });

  t.test('auto skips a failing NVIDIA library and logs why', async (t) => {
    const d = await startDaemon(t, { backend: 'auto', env: { ...fake.env, XLURM_NVML_LIBRARY: '/nonexistent/libnvidia-ml.so.1' } });
    t.match(d.output, /nv discovery: cannot load library: \/nonexistent\/libnvidia-ml\.so\.1/);
    t.same(await info(d), []);
    const r = await d.run('xbatch', ['--wrap', 'true']);
    t.equal(r.stderr, 'xlurm: requested 1 device(s), but no matching pool has enough devices\n');
  });

  t.test('stop shuts NVML down once per init', async (t) => {
    const f2 = fakeLibrary(t, 'nvidia', gpus(1));
    const d = await startDaemon(t, { backend: 'nvidia', env: f2.env });
    await d.stop();
    const c = f2.calls();
    t.equal(c.filter((x) => x === 'nvmlInit_v2').length, 1);
    t.equal(c.filter((x) => x === 'nvmlShutdown').length, 1);
  });
});
