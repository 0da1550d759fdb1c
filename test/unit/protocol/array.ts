import t from 'tap';
import type { Submission } from '@xlurm/protocol';
import {
  MAX_ARRAY_TASKS, arrayEnv, arraySubmissions, expandArray, jobLabel, parseArraySpec, parseParam, parseParamCsv,
  substituteParams, taskSubmission,
} from '../../../packages/protocol/src/array';

const base: Submission = { command: ['bash', '-c', 'run --lr {lr} {bs} {other}'], cwd: '/w', env: { A: '1' }, name: 'sw', count: 0 };

t.test('parseArraySpec: ranges, lists, steps, throttle', async (t) => {
  t.same(parseArraySpec('0-4'), { indices: [0, 1, 2, 3, 4], throttle: null });
  t.same(parseArraySpec('1,3,5'), { indices: [1, 3, 5], throttle: null });
  t.same(parseArraySpec('0-99:10'), { indices: [0, 10, 20, 30, 40, 50, 60, 70, 80, 90], throttle: null });
  t.same(parseArraySpec('0-9%4'), { indices: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], throttle: 4 });
  t.same(parseArraySpec('5,1-2,2'), { indices: [1, 2, 5], throttle: null }, 'ascending, each once');
  t.same(parseArraySpec('%3'), { indices: null, throttle: 3 });
  t.same(parseArraySpec('7'), { indices: [7], throttle: null });
  for (const bad of ['', '5-1', 'a', '1-', '-1', '0-9:0', '0-9%0', '0-9%x', '1,,2', '0-9%', '%']) {
    const r = parseArraySpec(bad);
    t.ok('code' in r && r.message.startsWith(`invalid array '${bad}': `), bad);
  }
  t.same(parseArraySpec('0-100000'), { code: 'INVALID_ARGUMENT', message: 'array of 100001 tasks: at most 100000 tasks per array' });
  t.same(parseArraySpec('0-2000000000'), { code: 'INVALID_ARGUMENT', message: 'array of 2000000001 tasks: at most 100000 tasks per array' }, 'counted, never built');
  t.equal((parseArraySpec('0-99999') as { indices: number[] }).indices.length, MAX_ARRAY_TASKS);
});

t.test('parseParam and parseParamCsv', async (t) => {
  t.same(parseParam('lr=0.1,0.01'), { name: 'lr', values: ['0.1', '0.01'] });
  t.same(parseParam('x='), { name: 'x', values: [''] });
  t.same(parseParam('cmd=a=b'), { name: 'cmd', values: ['a=b'] });
  for (const bad of ['lr', '=1', '1x=2', 'a-b=1']) t.ok('code' in parseParam(bad), bad);
  t.same(parseParamCsv('lr,bs\n0.1,32\r\n"a, ""b""",\n', 'f.csv'), { names: ['lr', 'bs'], rows: [['0.1', '32'], ['a, "b"', '']] });
  t.same(parseParamCsv('a\n"multi\nline"\n', 'f.csv'), { names: ['a'], rows: [['multi\nline']] });
  t.same(parseParamCsv('a,b\n1\n', 'f.csv'), { code: 'INVALID_ARGUMENT', message: 'f.csv:2: 1 field, the header has 2' });
  t.same(parseParamCsv('a,a\n1,2\n', 'f.csv'), { code: 'INVALID_ARGUMENT', message: 'f.csv:1: a parameter name appears twice' });
  t.same(parseParamCsv('a b\n1\n', 'f.csv'), { code: 'INVALID_ARGUMENT', message: "f.csv:1: invalid parameter name 'a b' (letters, digits and _)" });
  t.same(parseParamCsv('a\n', 'f.csv'), { code: 'INVALID_ARGUMENT', message: 'f.csv: no rows after the header' });
  t.same(parseParamCsv('', 'f.csv'), { code: 'INVALID_ARGUMENT', message: 'f.csv: no header line' });
  t.same(parseParamCsv('a\n"open\n', 'f.csv'), { code: 'INVALID_ARGUMENT', message: 'f.csv:2: unterminated quoted field' });
});

t.test('expandArray: indices, the cartesian product (last fastest), rows', async (t) => {
  t.equal(expandArray({}), null, 'no array');
  const idx = expandArray({ array: '2-6:2%2' });
  t.same(idx, { tasks: [{ index: 2, params: null }, { index: 4, params: null }, { index: 6, params: null }], throttle: 2, min: 2, max: 6 });
  const grid = expandArray({ params: [{ name: 'lr', values: ['a', 'b'] }, { name: 'bs', values: ['1', '2', '3'] }], array: '%4' });
  t.same(grid, {
    tasks: [
      { index: 0, params: { lr: 'a', bs: '1' } }, { index: 1, params: { lr: 'a', bs: '2' } }, { index: 2, params: { lr: 'a', bs: '3' } },
      { index: 3, params: { lr: 'b', bs: '1' } }, { index: 4, params: { lr: 'b', bs: '2' } }, { index: 5, params: { lr: 'b', bs: '3' } },
    ],
    throttle: 4, min: 0, max: 5,
  });
  const rows = expandArray({ param_rows: { names: ['x', 'y'], rows: [['1', '2'], ['3', '4']] } });
  t.same(rows, { tasks: [{ index: 0, params: { x: '1', y: '2' } }, { index: 1, params: { x: '3', y: '4' } }], throttle: null, min: 0, max: 1 });
  const err = (s: Parameters<typeof expandArray>[0]) => (expandArray(s) as { message: string }).message;
  t.equal(err({ array: '0-3', params: [{ name: 'a', values: ['1'] }] }), 'with --param or --param-file, --array takes only a throttle: --array %N');
  t.equal(err({ array: '%2' }), '--array %N needs --param or --param-file (or give indices: --array 0-9%N)');
  t.equal(err({ params: [{ name: 'a', values: ['1'] }], param_rows: { names: ['b'], rows: [['1']] } }), '--param cannot be combined with --param-file');
  t.equal(err({ params: [{ name: 'a', values: ['1'] }, { name: 'a', values: ['2'] }] }), '--param a is given twice');
  t.equal(err({ params: [{ name: 'a', values: [] }] }), '--param a has no values');
  t.equal(err({ params: [{ name: 'a', values: ['x\0'] }] }), 'parameter values must not contain NUL bytes');
  const big = Array.from({ length: 400 }, (_, i) => String(i));
  t.equal(err({ params: [{ name: 'a', values: big }, { name: 'b', values: big }] }), 'array of 160000 tasks: at most 100000 tasks per array');
  t.equal(err({ param_rows: { names: ['a', 'b'], rows: [['1']] } }), '--param-file row 1 has 1 fields, the header has 2');
});

t.test('substitution is verbatim and only for known names', async (t) => {
  t.equal(substituteParams('a {x} {y} {x}{x} {1x} {}', { x: '$(rm -rf /) "q"' }), 'a $(rm -rf /) "q" {y} $(rm -rf /) "q"$(rm -rf /) "q" {1x} {}');
  t.equal(substituteParams('{x}', { x: '{y}', y: 'no' }), '{y}', 'a value is never substituted again');
  t.equal(substituteParams('{x}', null), '{x}');
  t.equal(substituteParams('{__proto__}', {}), '{__proto__}');
});

t.test('taskSubmission and arraySubmissions', async (t) => {
  const s: Submission = { ...base, array: '%1', params: [{ name: 'lr', values: ['0.1'] }] };
  const one = taskSubmission(s, { index: 3, params: { lr: '0.1', bs: '8' } });
  t.same(one, { command: ['bash', '-c', 'run --lr 0.1 8 {other}'], cwd: '/w', env: { A: '1' }, name: 'sw[3]', count: 0 });
  t.equal(one.env, s.env, 'the environment is shared, not copied');
  const script: Submission = { ...base, command: ['--x={lr}'], script: 'echo {lr}' };
  t.same(taskSubmission(script, { index: 0, params: { lr: '1' } }).script, 'echo {lr}', 'never the script itself');
  const plan = expandArray({ array: '0-1%1' });
  if (!plan || 'code' in plan) throw new Error('no plan');
  const { specs, members } = arraySubmissions(base, plan);
  t.same(specs.map((x) => x.name), ['sw[0]', 'sw[1]']);
  t.same(members, [0, 1].map((index) => ({ index, count: 2, min: 0, max: 1, throttle: 1, params: null })));
});

t.test('arrayEnv and jobLabel', async (t) => {
  t.same(arrayEnv({ id: 12, index: 3, count: 10, min: 0, max: 9, throttle: null, params: { lr: '0.1' } }), [
    ['XLURM_ARRAY_JOB_ID', '12'], ['XLURM_ARRAY_TASK_ID', '3'], ['XLURM_ARRAY_TASK_COUNT', '10'], ['XLURM_ARRAY_TASK_MIN', '0'], ['XLURM_ARRAY_TASK_MAX', '9'],
    ['SLURM_ARRAY_JOB_ID', '12'], ['SLURM_ARRAY_TASK_ID', '3'], ['SLURM_ARRAY_TASK_COUNT', '10'], ['SLURM_ARRAY_TASK_MIN', '0'], ['SLURM_ARRAY_TASK_MAX', '9'],
    ['XLURM_PARAM_lr', '0.1'],
  ]);
  t.equal(jobLabel(14, { id: 12, index: 3 }), '12_3');
  t.equal(jobLabel(14, null), '14');
});
