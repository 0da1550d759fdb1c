import t from 'tap';
import type { Submission } from '@xlurm/protocol';
import { arrayFields, dryRunText, resolveJobArg } from '../../../packages/cli/src/array';
import { CliError, UsageError } from '../../../packages/cli/src/errors';

const base: Submission = { command: ['bash', '-c', 'echo {x}'], cwd: '/w', env: {}, name: 'n', count: 0, kind: null, time_limit: null, script: null };

t.test('arrayFields: --array as written, --param parsed, the CSV read and parsed', async (t) => {
  t.same(arrayFields({}), {});
  t.same(arrayFields({ array: '0-3%2' }), { array: '0-3%2' });
  t.same(arrayFields({ param: ['x=1,2', 'y=a'] }), { params: [{ name: 'x', values: ['1', '2'] }, { name: 'y', values: ['a'] }] });
  t.same(arrayFields({ 'param-file': 'g.csv' }, () => 'x,y\n1,2\n'), { param_rows: { names: ['x', 'y'], rows: [['1', '2']] } });
  t.throws(() => arrayFields({ param: 'x' }), UsageError);
  t.throws(() => arrayFields({ 'param-file': 'g.csv' }, () => 'x,y\n1\n'), new CliError('g.csv:2: 1 field, the header has 2'));
  t.throws(() => arrayFields({ array: '' }), UsageError);
});

t.test('dryRunText: one line per task, then the count; the same refusals as the daemon', async (t) => {
  t.equal(dryRunText({ ...base, params: [{ name: 'x', values: ['a b', "it's"] }] }),
    "0  n[0]  x='a b'  bash -c 'echo a b'\n1  n[1]  x='it'\\''s'  bash -c 'echo it'\\''s'\nwould submit 2 tasks; nothing submitted\n");
  t.equal(dryRunText({ ...base, command: ['--k', 'v'], script: 'echo', array: '3' }), '3  n[3]  <script> --k v\nwould submit 1 task; nothing submitted\n');
  t.equal(dryRunText(base), "-  n  bash -c 'echo {x}'\nwould submit 1 task; nothing submitted\n", 'no array: the one job');
  t.throws(() => dryRunText({ ...base, array: '0-100000' }), new CliError('array of 100001 tasks: at most 100000 tasks per array'));
});

t.test('resolveJobArg: a plain id needs no request', async (t) => {
  t.same(await resolveJobArg('12', '<JOB_ID>'), { id: 12, task: false });
  await t.rejects(resolveJobArg('0', '<JOB_ID>'), { message: 'job not found' });
  await t.rejects(resolveJobArg('x_1', '<JOB_ID>'), UsageError);
});

t.test('a bad --array, or one that does not go with --param, is a usage error (exit 2)', async (t) => {
  t.throws(() => arrayFields({ array: '5-1' }), { name: 'UsageError', message: /^invalid array '5-1': / });
  t.throws(() => arrayFields({ array: '%2' }), { name: 'UsageError', message: '--array %N needs --param or --param-file (or give indices: --array 0-9%N)' });
  t.throws(() => arrayFields({ array: '0-3', param: 'x=1,2' }), { name: 'UsageError', message: 'with --param or --param-file, --array takes only a throttle: --array %N' });
  t.throws(() => arrayFields({ param: ['x=1', 'x=2'] }), { name: 'UsageError', message: '--param x is given twice' });
  t.throws(() => arrayFields({ param: 'x=1', 'param-file': 'g.csv' }, () => 'y\n1\n'), { name: 'UsageError', message: '--param cannot be combined with --param-file' });
  t.same(arrayFields({ array: '%2', param: 'x=1,2' }), { array: '%2', params: [{ name: 'x', values: ['1', '2'] }] });
  t.same(arrayFields({ array: '0-100000' }), { array: '0-100000' }, 'past the task limit: the daemon refuses it (exit 1, as a refused submission)');
});
