import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon } from '../helpers/daemon';
import { waitFor } from '../helpers/wait';

t.test('xrun runs a command in the foreground and returns its exit code', async (t) => {
  const d = await startDaemon(t);

  t.test('argv is passed verbatim, never through a shell', async (t) => {
    const args = ['--help', '--gpus', '--', '-7', '$(echo hi)', 'a b', "'q'", '*'];
    const r = await d.run('xrun', ['-g', '0', 'printf', '%s\\n', ...args]);
    t.equal(r.code, 0, r.stderr);
    t.same(r.stdout.split('\n').slice(0, -1), args);
  });

  t.test('a leading -- before the command is dropped', async (t) => {
    const r = await d.run('xrun', ['-g', '0', '--', 'echo', '--', 'x']);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, '-- x\n');
  });

  t.test('missing command is a usage error (exit 2)', async (t) => {
    const r = await d.run('xrun', ['-g', '0']);
    t.equal(r.code, 2);
    t.match(r.stderr, /^error:/);
  });

  t.test('environment and working directory are captured', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-cwd-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const r = await d.run('xrun', ['-g', '0', 'sh', '-c',
      'echo "$FOO|$EMPTY|$USER|$XLURM_SUBMIT_DIR|$CUDA_VISIBLE_DEVICES|$ROCR_VISIBLE_DEVICES|${ASCEND_DEVICE_ID-unset}"; pwd; echo "$XLURM_JOB_ID"'],
    { cwd: dir, env: { FOO: 'bar baz=1', EMPTY: '', ASCEND_DEVICE_ID: '5' } });
    t.equal(r.code, 0, r.stderr);
    const [vars, cwd, id] = r.stdout.split('\n');
    t.equal(vars, `bar baz=1||${os.userInfo().username}|${dir}|-1|-1|unset`);
    t.equal(cwd, dir);
    t.match(id, /^\d+$/);
  });

  t.test('the job gets the submitted environment exactly (plus xlurm variables)', async (t) => {
    const r = await d.run('xrun', ['-g', '0', '/usr/bin/env', '-0'], { env: { ONLY_HERE: 'yes', WITH_NL: 'a\nb' } });
    t.equal(r.code, 0, r.stderr);
    const got = new Map<string, string>();
    for (const line of r.stdout.split('\0').filter(Boolean)) {
      const i = line.indexOf('=');
      if (i > 0) got.set(line.slice(0, i), line.slice(i + 1));
    }
    const id = Number(got.get('XLURM_JOB_ID'));
    const submitted = (await d.job(id)).spec.env as Record<string, string>;
    t.equal(submitted.ONLY_HERE, 'yes');
    t.equal(submitted.WITH_NL, 'a\nb');
    const expected: Record<string, string> = { ...submitted };
    const user = require('node:os').userInfo().username;
    Object.assign(expected, {
      USER: user, LOGNAME: user, XLURM_JOB_ID: String(id), XLURM_SUBMIT_DIR: path.dirname(d.home),
      CUDA_VISIBLE_DEVICES: '-1', ASCEND_RT_VISIBLE_DEVICES: '-1', MUSA_VISIBLE_DEVICES: '-1', MTHREADS_VISIBLE_DEVICES: '-1',
      MACA_VISIBLE_DEVICES: '-1', HIP_VISIBLE_DEVICES: '-1', ROCR_VISIBLE_DEVICES: '-1',
    });
    t.same(Object.fromEntries([...got].sort()), Object.fromEntries(Object.entries(expected).sort()));
  });

  t.test('exit codes', async (t) => {
    const cases: Array<[string[], number]> = [
      [['true'], 0],
      [['sh', '-c', 'exit 7'], 7],
      [['sh', '-c', 'kill -TERM $$'], 128 + 15],
      [['sh', '-c', 'kill -KILL $$'], 128 + 9],
    ];
    for (const [cmd, code] of cases) {
      const r = await d.run('xrun', ['-g', '0', ...cmd]);
      t.equal(r.code, code, `${cmd.join(' ')}: ${r.stderr}`);
    }
  });

  t.test('a program that cannot be executed exits 1 with the error', async (t) => {
    const r = await d.run('xrun', ['-g', '0', 'no-such-program-xl']);
    t.equal(r.code, 1);
    t.match(r.stderr, /xlurm: cannot execute no-such-program-xl: No such file or directory/);
  });

  t.test('stdout and stderr of the job are merged on xrun stdout; status lines on stderr', async (t) => {
    const r = await d.run('xrun', ['-g', '0', 'sh', '-c', 'echo out; echo err >&2']);
    t.equal(r.code, 0);
    t.equal(r.stdout, 'out\nerr\n');
    t.match(r.stderr, /^\[xlurm\] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC Job \d+: Task started\.\n$/);
  });

  t.test('time limit: exit 124', async (t) => {
    const r = await d.run('xrun', ['-g', '0', '-t', '1', 'sleep', '30']);
    t.equal(r.code, 124, r.stderr);
  });

  t.test('-g 1 on a CPU-only daemon is rejected', async (t) => {
    const r = await d.run('xrun', ['true']);
    t.equal(r.code, 1);
    t.equal(r.stderr, 'xlurm: requested 1 device(s), but no matching pool has enough devices\n');
  });

  t.test('client-side validation', async (t) => {
    let r = await d.run('xrun', ['-g', '0', '-t', '0', 'true']);
    t.equal(r.stderr, 'xlurm: time-limit must be positive\n');
    r = await d.run('xrun', ['-i', '1,1', 'true']);
    t.equal(r.stderr, 'xlurm: device IDs must not contain duplicates\n');
    r = await d.run('xrun', ['-g', '2', '-i', '1', 'true']);
    t.equal(r.stderr, 'xlurm: -g count must match the number of -i device IDs\n');
    t.equal(r.code, 1);
  });

  t.test('a missing working directory is refused by the daemon', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-gone-'));
    fs.rmdirSync(dir);
    // The client's cwd cannot be removed under it portably; submit raw.
    const r = await d.request('submit', { command: ['true'], cwd: dir, env: {}, name: 'x', count: 0 }) as any;
    t.equal(r.ok, false);
    t.equal(r.error.message, 'working directory does not exist');
  });

  t.test('Ctrl-C cancels the job and exits 130', async (t) => {
    const child = d.spawnCli('xrun', ['-g', '0', 'sh', '-c', 'echo started; sleep 60']);
    let out = '';
    child.stdout!.on('data', (b) => { out += b; });
    await waitFor(() => out.includes('started'), { what: 'job output' });
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    child.kill('SIGINT');
    t.equal(await exited, 130);
  });
});
