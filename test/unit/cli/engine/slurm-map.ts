// The Slurm engine's translations (docs/behaviour.md §27.1): our options to sbatch/srun's, refusals
// by name, Slurm's states, exit statuses and GRES records to ours.
import t from 'tap';
import type { Submission } from '@xlurm/protocol';
import type { ClusterConfig } from '../../../../packages/cli/src/engine/cluster';
import { SUBMIT_OPTIONS } from '../../../../packages/cli/src/submit';
import {
  allocated, exitCodeText, exitStatus, indexList, mapState, requested, slurmBegin, slurmOptions, slurmTime, slurmWrap, summaryOf,
} from '../../../../packages/cli/src/engine/slurm-map';

const cluster: ClusterConfig = { engine: 'slurm', partition: '', gres: { nvidia: 'gpu', ascend: 'npu' }, file: 'f' };
const sub = (extra: Partial<Submission> = {}): Submission => ({ command: ['true'], cwd: '/w', env: {}, name: 'j', count: 0, kind: null, time_limit: null, script: null, ...extra });
const ctx = (args: Record<string, unknown> = {}) => ({ args: { _: [], ...args }, options: { ...SUBMIT_OPTIONS, nice: { type: 'string' as const }, hold: { type: 'boolean' as const } } });

t.test('options', async (t) => {
  t.same(slurmOptions(sub(), ctx(), cluster), ['--job-name=j', '--export=ALL', '--chdir=/w']);
  t.same(slurmOptions(sub({ count: 2, kind: 'ascend', time_limit: 90 }), ctx({ gpus: '2', device: 'asc', 'time-limit': '90' }), { ...cluster, partition: 'p' }),
    ['--partition=p', '--job-name=j', '--gres=npu:2', '--time=0-00:01:30', '--export=ALL', '--chdir=/w']);
  t.same(slurmOptions(sub({ queue_timeout: 60 }), ctx({ timeout: '60', nice: '5', hold: true }), cluster),
    ['--job-name=j', '--deadline=now+60', '--nice=5', '--hold', '--export=ALL', '--chdir=/w']);
  t.throws(() => slurmOptions(sub({ count: 1 }), ctx(), cluster), { message: /--device is required: \[cluster\] gres names several vendors \(nv, asc\)/ });
  t.same(slurmOptions(sub({ count: 1 }), ctx(), { ...cluster, gres: { nvidia: 'gpu' } }).slice(1, 2), ['--gres=gpu:1']);
  t.throws(() => slurmOptions(sub({ count: 1, kind: 'hcu' }), ctx(), cluster), { message: 'no GRES name for hcu in [cluster] gres' });
  t.throws(() => slurmOptions(sub(), ctx({ 'device-ids': ['0'] }), cluster), { message: /^--device-ids \(-i\) cannot be used on a Slurm cluster/ });
  t.throws(() => slurmOptions(sub(), ctx({ 'group-affinity': true }), cluster), { message: /^--group-affinity cannot be used/ });
  t.equal(slurmTime(2 * 86400 + 3 * 3600 + 4 * 60 + 5), '2-03:04:05');
  t.equal(slurmBegin('now+15m'), 'now+900');
  t.equal(slurmBegin('2026-12-01T10:00'), '2026-12-01T10:00');
});

t.test('states', async (t) => {
  const pairs: Array<[string, string]> = [['PD', 'PENDING'], ['R', 'RUNNING'], ['CD', 'COMPLETED'], ['F', 'FAILED'], ['CA', 'CANCELLED'],
    ['TO', 'TIMED_OUT'], ['OOM', 'OUT_OF_MEMORY'], ['PENDING', 'PENDING'], ['TIMEOUT', 'TIMED_OUT'], ['CANCELLED by 0', 'CANCELLED'],
    ['OUT_OF_MEMORY', 'OUT_OF_MEMORY'], ['COMPLETING', 'RUNNING'], ['NODE_FAIL', 'FAILED'], ['DEADLINE', 'EXPIRED']];
  for (const [s, ours] of pairs) t.equal(mapState(s), ours, s);
});

t.test('exit statuses, GRES records', async (t) => {
  t.equal(exitStatus(768), 3);
  t.equal(exitStatus(9), 137);
  t.equal(exitStatus({ status: 'FAILED', return_code: 2 }), 2);
  t.same(indexList('0-2,5'), [0, 1, 2, 5]);
  t.same(requested('gres:npu:2', cluster), { kind: 'ascend', count: 2 });
  t.same(requested('gres/gpu:tesla:1', cluster), { kind: 'nvidia', count: 1 });
  t.same(allocated(['gpu:2(IDX:0-1)', 'npu(CNT:2)'], cluster).map((d) => `${d.kind}:${d.id}`), ['nvidia:0', 'nvidia:1']);
  const row = summaryOf({ job_id: 7, name: 'n', user_id: 0, user_name: 'root', group_id: 0, job_state: 'PENDING', state_reason: 'JobHeldUser',
    submit_time: 100, start_time: 0, end_time: 0, tres_per_node: 'gres:npu:1', cpus: 1, memory_per_node: 2 }, cluster);
  t.match(row, { id: 7, state: 'PENDING', count: 1, kind: 'ascend', started_at: null, finished_at: null, reason: { code: 'Held' }, mem: 2 * 1024 * 1024 });
});

t.test("exitCodeText: sacct's CODE:SIGNAL text", async (t) => {
  t.equal(exitCodeText('3:0'), 3);
  t.equal(exitCodeText('0:0'), 0);
  t.equal(exitCodeText('0:9'), 137, 'a signal is 128 + its number');
  t.equal(exitCodeText(' 1:0\n'), 1);
  t.equal(exitCodeText(''), undefined);
  t.equal(exitCodeText('x:y'), undefined);
});

t.test('xbatch --wrap runs under bash on Slurm too (extensions 28.11)', async (t) => {
  t.equal(slurmWrap(['bash', '-c', 'echo "$BASH_VERSION"; [[ -n x ]]']), `--wrap=bash -c 'echo "$BASH_VERSION"; [[ -n x ]]'`);
  t.equal(slurmWrap(['bash', '-c', "it's"]), `--wrap=bash -c 'it'\\''s'`);
  t.equal(slurmWrap(['bash', '-c', 'true']), '--wrap=bash -c true');
  t.same(slurmOptions(sub(), ctx({ hold: [true, false] }), cluster).includes('--hold'), false, 'the last of a repeated switch counts');
});
