// A notification's environment and files (runner/notify.ts; docs/behaviour.md §23.7). That it
// runs as the owner through a supervisor is shown end to end (test/e2e/workflows-wait.ts, and
// as root test/multiuser/notify.ts).
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Device } from '@xlurm/protocol';
import { JobFiles } from '../../../../packages/daemon/src/runner/job-files';
import { NOTIFY_LINE, NOTIFY_TIME_LIMIT, notifyEnv, notifyPaths } from '../../../../packages/daemon/src/runner/notify';
import type { StoredJob } from '../../../../packages/daemon/src/store/store';

const gpu: Device = { kind: 'nvidia', id: 1, name: 'Fake', visible: 'GPU-1', npu: null, chip: null };

const job = {
  id: 42, owner: { uid: 1000, gid: 1000, name: 'alice' },
  spec: { command: ['true'], cwd: '/w', env: { KEEP: 'me', CUDA_VISIBLE_DEVICES: 'all' }, name: 'train', count: 1, kind: null, time_limit: null, script: null, notify: 'echo hi' },
  state: 'FAILED', devices: [gpu], submitted_at: 1, started_at: 2, result: { state: 'FAILED', exit_code: 3, finished_at: 5, error: null }, reason: null,
  array: { id: 40, index: 2, count: 3, min: 0, max: 2, throttle: null, params: null },
} as unknown as StoredJob;

const asMap = (env: string[]) => new Map(env.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));

t.test("the job's environment and the outcome's variables, without the job's devices", async (t) => {
  const m = asMap(notifyEnv(job));
  t.equal(m.get('KEEP'), 'me');
  t.equal(m.get('XLURM_JOB_ID'), '42');
  t.equal(m.get('XLURM_JOB_NAME'), 'train');
  t.equal(m.get('XLURM_JOB_STATE'), 'FAILED');
  t.equal(m.get('XLURM_JOB_EXIT_CODE'), '3');
  t.equal(m.get('XLURM_ARRAY_TASK_ID'), '2', "an array task's variables too");
  t.not(m.get('CUDA_VISIBLE_DEVICES'), 'GPU-1', 'the devices are someone else\'s by now');
  t.equal(NOTIFY_TIME_LIMIT, 60);
  t.equal(NOTIFY_LINE, '[xlurm] notify:\n');
});

t.test("its own files beside the job's, removed with the job's", async (t) => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-notify-'));
  t.teardown(() => fs.rmSync(home, { recursive: true, force: true }));
  fs.mkdirSync(path.join(home, 'jobs'));
  const files = new JobFiles(home);
  const p = notifyPaths(files, 42);
  t.same(p, {
    result: path.join(home, 'jobs', '42.notify.result'), cancel: path.join(home, 'jobs', '42.notify.cancel'), lock: path.join(home, 'jobs', '42.notify.lock'),
  });
  t.not(p.cancel, files.paths(42).cancel, "a cancelled job's marker never stops its notification");
  fs.writeFileSync(p.result, '{}');
  files.remove([42]);
  t.notOk(fs.existsSync(p.result));
});
