import t from 'tap';
import { parseArgv, parseCommand } from '../../../../packages/cli/src/argv';
import run, { runSubmission } from '../../../../packages/cli/src/commands/run';
import { main } from '../../../../packages/cli/src/main';
import { capture } from '../fake-daemon';

const env = () => ({ A: '1' });
const parse = (argv: string[]) => parseArgv(run, argv);
const submit = (argv: string[]) => runSubmission(parse(argv), env);

t.test('everything from the first non-option word is the command, verbatim', async (t) => {
  const tail = ['--help', '--gpus', '3', '--', '-7', '007', '1e3', '-h', '-V', '--name=x', 'help', '', ' spaced '];
  const s = submit(['-g', '0', 'printf', ...tail]);
  t.same(s.command, ['printf', ...tail]);
  t.equal(s.count, 0);
  t.equal(s.name, 'printf');
  t.same(submit(['-g', '0', 'python', '--', 'x']).command, ['python', '--', 'x'], 'a later -- is kept');
});

t.test('a leading -- before the command is dropped (only one)', async (t) => {
  t.same(submit(['-g', '1', '--', 'python', 'x']).command, ['python', 'x']);
  t.same(submit(['--', '--', 'x']).command, ['--', 'x']);
  t.same(submit(['--', '-g', '2']).command, ['-g', '2'], 'after -- even option-like words are the command');
  t.equal(submit(['--', '-g', '2']).count, 1);
});

t.test('option spellings', async (t) => {
  t.equal(submit(['--gpus', '2', 'x']).count, 2);
  t.equal(submit(['--devices', '3', 'x']).count, 3);
  t.equal(submit(['--gpus=4', 'x']).count, 4);
  t.equal(submit(['-g5', 'x']).count, 5);
  t.equal(submit(['x']).count, 1, 'default -g 1');
  const s = submit(['-i', '3,2', '-i', '7', '--device', 'asc', '-n', 'my job', '-t', '60', 'x']);
  t.same(s.device_ids, [3, 2, 7]);
  t.equal(s.count, 3);
  t.equal(s.kind, 'ascend');
  t.equal(s.name, 'my job');
  t.equal(s.time_limit, 60);
  t.equal(s.script, null);
});

t.test('the submission has the reference key order; device_ids only with -i', async (t) => {
  const s = submit(['-g', '0', 'true']);
  t.same(Object.keys(s), ['command', 'cwd', 'env', 'name', 'count', 'kind', 'time_limit', 'script']);
  t.same(s.env, { A: '1' });
  t.equal(s.cwd, process.cwd());
  t.equal(s.kind, null);
  t.equal(s.time_limit, null);
  t.same(Object.keys(submit(['-i', '0', 'true'])), ['command', 'cwd', 'env', 'name', 'count', 'device_ids', 'kind', 'time_limit', 'script']);
});

t.test('client-side validation texts and order', async (t) => {
  t.throws(() => submit(['-t', '0', '-i', '1,1', 'true']), { name: 'CliError', message: 'time-limit must be positive' });
  t.throws(() => submit(['-i', '1,1', 'true']), { name: 'CliError', message: 'device IDs must not contain duplicates' });
  t.throws(() => submit(['-i', '1', '-i', '1', 'true']), { message: 'device IDs must not contain duplicates' });
  t.throws(() => submit(['-g', '2', '-i', '1', 'true']), { name: 'CliError', message: '-g count must match the number of -i device IDs' });
  t.throws(() => submit(['-g', '2', '-i', '1,1', 'true']), { message: 'device IDs must not contain duplicates' });
  t.equal(submit(['-g', '2', '-i', '1,0', 'true']).count, 2);
});

t.test('parse errors are usage errors', async (t) => {
  t.throws(() => submit(['-g', 'abc', 'x']), { name: 'UsageError', message: "invalid value 'abc' for '--gpus <N>': must be a whole number of 0 or more" });
  t.throws(() => submit(['-g', '-1', 'x']), { name: 'UsageError' });
  t.throws(() => submit(['-g', '1', '-g', '2', 'x']), { message: "the argument '--gpus <N>' cannot be used multiple times" });
  t.throws(() => submit(['-i', '1,x', 'x']), { message: "invalid value 'x' for '--device-ids <LIST>': must be a whole number of 0 or more" });
  t.throws(() => submit(['--device', 'cuda', 'x']), { message: /^invalid value 'cuda' for '--device <KIND>'/ });
  t.throws(() => submit(['-t', 'soon', 'x']), { message: "invalid duration 'soon': use seconds, or a number with s, m, h or d" });
  t.throws(() => submit(['--foo', 'x']), { message: "unexpected argument '--foo' found" });
  t.throws(() => submit(['-g', '0']), { name: 'UsageError', message: /required arguments were not provided:\n {2}<COMMAND>/ });
  t.throws(() => submit(['-g', '0', '--']), { name: 'UsageError' });
  t.throws(() => submit([]), { name: 'UsageError' });
});

t.test('help and version are options only before the command', async (t) => {
  t.equal((await parseCommand(run, 'xrun', ['--help'])).kind, 'help');
  t.equal((await parseCommand(run, 'xrun', ['-V'])).kind, 'version');
  t.equal((await parseCommand(run, 'xrun', ['echo', '--help'])).kind, 'args');
  t.equal((await parseCommand(run, 'xrun', ['echo', 'help'])).kind, 'args');
});

t.test('through main: usage errors exit 2, validation errors exit 1, version and help exit 0', async (t) => {
  let r = await capture(() => main('xrun', ['-g', '0']));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: the following required arguments were not provided:\n {2}<COMMAND>\n\nUsage: xrun \[OPTIONS\] <COMMAND> \[ARGS\]\.\.\.\n/);
  t.equal(r.stdout, '');
  r = await capture(() => main('xrun', ['-g', 'x', 'true']));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: invalid value 'x' for '--gpus <N>'/);
  r = await capture(() => main('xrun', ['-i', '0,0', 'true']));
  t.equal(r.value, 1);
  t.equal(r.stderr, 'xlurm: device IDs must not contain duplicates\n');
  r = await capture(() => main('xrun', ['-V']));
  t.same([r.value, r.stdout], [0, 'xrun 0.1.0\n']);
  r = await capture(() => main('xrun', ['--version']));
  t.same([r.value, r.stdout], [0, 'xrun 0.1.0\n']);
  r = await capture(() => main('xrun', ['--help']));
  t.equal(r.value, 0);
  t.match(r.stdout, /Usage: xrun \[OPTIONS\] <COMMAND> \[ARGS\]\.\.\./);
  t.match(r.stdout, /--gpus/);
  r = await capture(() => main('xlurm', ['run', '-g', '0']));
  t.equal(r.value, 2);
  t.match(r.stderr, /Usage: xlurm run \[OPTIONS\]/);
  r = await capture(() => main('xlurm', ['xrun', '-i', '0,0', 'true']));
  t.same([r.value, r.stderr], [1, 'xlurm: device IDs must not contain duplicates\n'], 'xlurm xrun is an alias');
});

t.test('--immediate and --timeout (docs/behaviour.md §21.6)', async (t) => {
  t.equal(submit(['--immediate', 'x']).immediate, true);
  t.notOk('immediate' in submit(['x']), 'absent unless given');
  t.equal(submit(['--timeout', '10m', 'x']).queue_timeout, 600);
  t.same(submit(['--immediate', 'x']).command, ['x']);
});
