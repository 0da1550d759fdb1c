import t from 'tap';
import {
  flag, jobId, many, noExtra, parseArgv, parseIdList, parseUnsigned, present, single,
} from '../../../packages/cli/src/argv';
import { allCommands } from '../../../packages/cli/src/commands';

t.test('unsigned numbers follow Rust u64::from_str', async (t) => {
  t.equal(parseUnsigned('0', '-g'), 0);
  t.equal(parseUnsigned('007', '-g'), 7);
  t.equal(parseUnsigned('+5', '-g'), 5);
  t.throws(() => parseUnsigned('-1', '--gpus <N>'), { name: 'UsageError', message: "invalid value '-1' for '--gpus <N>': must be a whole number of 0 or more" });
  t.throws(() => parseUnsigned('1.5', '-g'), { message: /must be a whole number of 0 or more/ });
  t.throws(() => parseUnsigned(' 1', '-g'), { message: /must be a whole number of 0 or more/ });
  t.throws(() => parseUnsigned('0x10', '-g'), { message: /must be a whole number of 0 or more/ });
  t.throws(() => parseUnsigned('', '-g'), { message: /must be a whole number of 0 or more/ });
  t.throws(() => parseUnsigned('4294967296', '-i', 0xffffffff), { message: /: at most 4294967295$/ });
  t.equal(parseUnsigned('4294967295', '-i', 0xffffffff), 4294967295);
  t.throws(() => parseUnsigned('99999999999999999999', '-t'), { message: /: at most 9007199254740991$/ });
});

t.test('id lists', async (t) => {
  t.same(parseIdList(['0,2', '5'], '-i'), [0, 2, 5]);
  t.throws(() => parseIdList(['0,,1'], '--device-ids <LIST>'), { message: "invalid value '' for '--device-ids <LIST>': must be a whole number of 0 or more" });
  t.throws(() => parseIdList([''], '--device-ids <LIST>'), { message: "a value is required for '--device-ids <LIST>' but none was supplied" });
  t.throws(() => parseIdList(['a'], '-i'), { name: 'UsageError' });
});

t.test('option values', async (t) => {
  t.equal(single(undefined, '-g'), undefined);
  t.equal(single('1', '-g'), '1');
  t.equal(single(['1'], '-g'), '1');
  t.throws(() => single(['1', '2'], '--gpus <N>'), { message: "the argument '--gpus <N>' cannot be used multiple times" });
  t.same(many(undefined), []);
  t.same(many('a'), ['a']);
  t.same(many(['a', 'b']), ['a', 'b']);
  t.equal(flag(true), true);
  t.equal(flag([true, true]), true);
  t.equal(flag(undefined), false);
  t.throws(() => present('', '--name <NAME>'), { message: "a value is required for '--name <NAME>' but none was supplied" });
  t.equal(jobId('12', '<JOB_ID>'), 12);
  t.throws(() => jobId('0', '<JOB_ID>'), { name: 'CliError', message: 'job not found' });
  t.throws(() => jobId('x', '<JOB_ID>'), { name: 'UsageError' });
});

t.test('unknown options are usage errors; positionals stay strings', async (t) => {
  const cmd = { options: { json: { type: 'boolean' as const }, cancel: { type: 'string' as const } } };
  const a = parseArgv(cmd, ['007', '--json', '1e3']);
  t.same(a._, ['007', '1e3']);
  t.equal(a.json, true);
  t.throws(() => parseArgv(cmd, ['--bogus']), { name: 'UsageError', message: "unexpected argument '--bogus' found" });
  t.throws(() => parseArgv(cmd, ['-z']), { message: "unexpected argument '-z' found" });
  t.throws(() => parseArgv(cmd, ['--no-json']), { message: "unexpected argument '--no-json' found" }, 'no boolean negation');
  t.equal(parseArgv(cmd, ['help']).help, undefined, 'the word help is a positional');
  t.same(parseArgv(cmd, ['help'])._, ['help']);
  t.equal(parseArgv(cmd, ['-h']).help, true);
  t.equal(parseArgv(cmd, ['-V']).version, true);
  t.throws(() => noExtra(parseArgv(cmd, ['1', '2']), 1), { message: "unexpected argument '2' found" });
});

// extensions 28.9: the words after the options belong to the job.
t.test('a switch never takes the next word; =VALUE is its only value', async (t) => {
  const halt = {
    haltAtNonOption: true,
    options: { immediate: { type: 'boolean' as const }, hold: { type: 'boolean' as const }, gpus: { alias: 'g', type: 'string' as const } },
  };
  let a = parseArgv(halt, ['-g', '0', '--immediate', 'true']);
  t.equal(a.immediate, true);
  t.same(a._, ['true'], 'xrun -g 0 --immediate true runs true');
  a = parseArgv(halt, ['--hold', 'false.sh']);
  t.equal(a.hold, true);
  t.same(a._, ['false.sh'], 'xbatch --hold false.sh submits false.sh held');
  for (const [v, want] of [['true', true], ['yes', true], ['1', true], ['false', false], ['no', false], ['0', false]] as const) {
    a = parseArgv(halt, [`--hold=${v}`, 'x']);
    t.equal(flag(a.hold), want, `--hold=${v}`);
    t.same(a._, ['x']);
  }
  t.throws(() => parseArgv(halt, ['--hold=maybe', 'x']), { name: 'UsageError', message: "invalid value 'maybe' for '--hold': use true, false, yes, no, 1 or 0" });
  const free = { options: { all: { alias: 'a', type: 'boolean' as const } } };
  a = parseArgv(free, ['--all', 'false', '-a', 'true']);
  t.same(a._, ['false', 'true'], 'not only for xrun and xbatch');
  t.same(a.all, [true, true]);
});

t.test('an option that takes a value never takes an option as it', async (t) => {
  const batch = {
    haltAtNonOption: true,
    options: {
      wrap: { type: 'string' as const }, nice: { type: 'string' as const },
      gpus: { alias: 'g', type: 'string' as const }, name: { alias: 'n', type: 'string' as const },
    },
  };
  t.throws(() => parseArgv(batch, ['--wrap', '--nice', '5']), { name: 'UsageError', message: 'option --wrap needs a value' });
  t.throws(() => parseArgv(batch, ['-g', '0', '--wrap']), { name: 'UsageError', message: 'option --wrap needs a value' });
  t.throws(() => parseArgv(batch, ['-n', '--wrap', 'true']), { message: 'option -n needs a value' });
  t.throws(() => parseArgv(batch, ['-g']), { message: 'option -g needs a value' });
  t.throws(() => parseArgv(batch, ['--name', '-q', 'x']), { message: 'option --name needs a value' }, 'an unknown option-like word neither');
  t.equal(parseArgv(batch, ['--wrap=--nice 5']).wrap, '--nice 5', 'a value that begins with - is given as --option=-value');
  t.equal(parseArgv(batch, ['-n=-x', 'y']).name, '-x');
  t.equal(parseArgv(batch, ['-g', '-1', 'x']).gpus, '-1', 'a negative number is a value (its range is then reported)');
  t.equal(parseArgv(batch, ['-n', '-', 'x']).name, '-', 'a lone - is a value');
  t.equal(parseArgv(batch, ['-n', '', 'x']).name, '', 'an empty word is a value');
  t.same(parseArgv(batch, ['-g0', '-g=1', '--gpus=2', '--gpus', '3', 'x']).gpus, ['0', '1', '2', '3']);
  t.throws(() => parseArgv(batch, ['--g', '1', 'x']), { message: "unexpected argument '--g' found" });
});

t.test('the end of the options', async (t) => {
  const free = { options: { json: { type: 'boolean' as const }, cancel: { type: 'string' as const } } };
  t.same(parseArgv(free, ['3', '-5'])._, ['3', '-5'], 'negative numbers are words');
  t.same(parseArgv(free, ['--', '--json', '-x'])._, ['--json', '-x']);
  t.same(parseArgv(free, ['1', '--json', '2']), { _: ['1', '2'], json: true, $0: '' }, 'options between words elsewhere');
  const halt = { haltAtNonOption: true, options: free.options };
  t.same(parseArgv(halt, ['1', '--json', '2'])._, ['1', '--json', '2'], 'xrun/xbatch: the first word ends them');
  t.same(parseArgv(halt, ['-5', '--json'])._, ['-5', '--json']);
});

t.test('numbers say what is allowed', async (t) => {
  t.throws(() => parseUnsigned('11', '--retry <N>', 10), { message: "invalid value '11' for '--retry <N>': at most 10" });
  t.throws(() => parseUnsigned('-1', '--gpus <N>'), { message: "invalid value '-1' for '--gpus <N>': must be a whole number of 0 or more" });
});

t.test('every command and subcommand parses by the same rules', async (t) => {
  for (const cmd of allCommands()) {
    for (const [key, o] of Object.entries(cmd.options)) {
      const name = `--${key}`;
      if (o.type === 'boolean') {
        const a = parseArgv(cmd, [name, 'true']);
        t.equal(a[key], true, `${cmd.command} ${name}`);
        t.same(a._, ['true'], `${cmd.command} ${name} true: the word is not its value`);
      } else {
        t.throws(() => parseArgv(cmd, [name, '--help']), { name: 'UsageError', message: `option ${name} needs a value` }, `${cmd.command} ${name} --help`);
        t.throws(() => parseArgv(cmd, [name]), { message: `option ${name} needs a value` }, `${cmd.command} ${name} last`);
        t.same(many(parseArgv(cmd, [`${name}=-v`])[key]), ['-v'], `${cmd.command} ${name}=-v`);
      }
    }
  }
});
