// A job's environment and argv (runner/job-env.ts; docs/behaviour.md §6.3): the submitted
// environment, then the variables xlurm sets over it; a batch script runs as `bash -c`.
import t from 'tap';
import type { Device, Job } from '@xlurm/protocol';
import { jobArgv, jobEnv } from '../../../../packages/daemon/src/runner/job-env';

const gpu: Device = { kind: 'nvidia', id: 1, name: 'Fake', visible: 'GPU-1', npu: null, chip: null };

function job(over: Partial<Job['spec']> = {}, devices: Device[] = []): Job {
  return {
    id: 42, owner: { uid: 1000, gid: 1000, name: 'alice' },
    spec: { command: ['python', 'train.py'], cwd: '/home/alice/run', env: {}, name: 'train', count: devices.length, kind: null, time_limit: null, script: null, ...over },
    state: 'RUNNING', devices, submitted_at: 1, started_at: 2, result: null, reason: null,
  } as Job;
}

const asMap = (env: string[]) => new Map(env.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));

t.test('the submitted environment, with USER, LOGNAME, XLURM_JOB_ID, XLURM_SUBMIT_DIR and visibility set over it', async (t) => {
  const env = jobEnv(job({ env: { PATH: '/usr/bin', USER: 'mallory', XLURM_JOB_ID: '7', CUDA_VISIBLE_DEVICES: 'all', EMPTY: '', 'A=B': 'x=y' } }, [gpu]));
  const m = asMap(env);
  t.equal(m.get('PATH'), '/usr/bin');
  t.equal(m.get('EMPTY'), '');
  t.equal(m.get('USER'), 'alice', 'the owner, not what was submitted');
  t.equal(m.get('LOGNAME'), 'alice');
  t.equal(m.get('XLURM_JOB_ID'), '42');
  t.equal(m.get('XLURM_SUBMIT_DIR'), '/home/alice/run');
  t.equal(m.get('CUDA_VISIBLE_DEVICES'), 'GPU-1');
  t.equal(m.get('ROCR_VISIBLE_DEVICES'), '-1');
  t.equal(env.filter((kv) => kv.startsWith('USER=')).length, 1, 'each name once');
  t.ok(env.includes('PATH=/usr/bin'), 'NAME=value strings');
});

t.test('ASCEND_DEVICE_ID is removed unless the job has Ascend devices', async (t) => {
  t.notOk(asMap(jobEnv(job({ env: { ASCEND_DEVICE_ID: '3' } }))).has('ASCEND_DEVICE_ID'));
  const asc: Device = { kind: 'ascend', id: 3, name: 'Ascend', visible: '3', npu: 0, chip: 0 };
  t.equal(asMap(jobEnv(job({ env: { ASCEND_DEVICE_ID: '3' } }, [asc]))).get('ASCEND_DEVICE_ID'), '0');
});

t.test('nothing of the daemon environment leaks in', async (t) => {
  process.env.XLURM_TEST_LEAK = 'daemon';
  t.teardown(() => { delete process.env.XLURM_TEST_LEAK; });
  const env = jobEnv(job());
  t.notOk(env.some((kv) => kv.startsWith('XLURM_TEST_LEAK=')));
  t.notOk(asMap(env).has('PATH'), 'not even PATH');
});

t.test('argv: the command, or bash -c SCRIPT NAME ARGS for a batch script', async (t) => {
  t.same(jobArgv(job()), ['python', 'train.py']);
  t.same(jobArgv(job({ script: 'echo "$0 $1"\n', name: 'run.sh', command: ['a b', '--x'] })), ['bash', '-c', 'echo "$0 $1"\n', 'run.sh', 'a b', '--x']);
  t.same(jobArgv(job({ script: '', name: 'empty.sh', command: [] })), ['bash', '-c', '', 'empty.sh'], 'an empty script is still a script');
});

t.test("an array task's variables and their SLURM twins; a sweep's parameters", async (t) => {
  const job = {
    id: 14, owner: { uid: 1, gid: 1, name: 'alice' }, devices: [], state: 'RUNNING', submitted_at: 0, started_at: 0, result: null, reason: null,
    spec: { command: ['true'], cwd: '/w', env: { SLURM_ARRAY_TASK_ID: 'stale' }, name: 'sw[3]', count: 0 },
    array: { id: 12, index: 3, count: 10, min: 0, max: 9, throttle: null, params: { lr: '0.1' } },
  } as unknown as Job;
  const env = new Map(jobEnv(job).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  for (const p of ['XLURM', 'SLURM']) {
    t.same([env.get(`${p}_ARRAY_JOB_ID`), env.get(`${p}_ARRAY_TASK_ID`), env.get(`${p}_ARRAY_TASK_COUNT`), env.get(`${p}_ARRAY_TASK_MIN`), env.get(`${p}_ARRAY_TASK_MAX`)],
      ['12', '3', '10', '0', '9'], p);
  }
  t.equal(env.get('XLURM_PARAM_lr'), '0.1');
  const plain = new Map(jobEnv({ ...job, array: null } as unknown as Job).map((l) => [l.slice(0, l.indexOf('=')), l]));
  t.notOk(plain.has('XLURM_ARRAY_JOB_ID'), 'none for other jobs');
});
