import t from 'tap';
import {
  flag, jobId, many, noExtra, parseArgv, parseIdList, parseUnsigned, present, single,
} from '../../../packages/cli/src/argv';

t.test('unsigned numbers follow Rust u64::from_str', async (t) => {
  t.equal(parseUnsigned('0', '-g'), 0);
  t.equal(parseUnsigned('007', '-g'), 7);
  t.equal(parseUnsigned('+5', '-g'), 5);
  t.throws(() => parseUnsigned('-1', '--gpus <N>'), { name: 'UsageError', message: "invalid value '-1' for '--gpus <N>': invalid digit found in string" });
  t.throws(() => parseUnsigned('1.5', '-g'), { message: /invalid digit found in string/ });
  t.throws(() => parseUnsigned(' 1', '-g'), { message: /invalid digit found in string/ });
  t.throws(() => parseUnsigned('0x10', '-g'), { message: /invalid digit found in string/ });
  t.throws(() => parseUnsigned('', '-g'), { message: /cannot parse integer from empty string/ });
  t.throws(() => parseUnsigned('4294967296', '-i', 0xffffffff), { message: /number too large to fit in target type/ });
  t.equal(parseUnsigned('4294967295', '-i', 0xffffffff), 4294967295);
  t.throws(() => parseUnsigned('99999999999999999999', '-t'), { message: /number too large/ });
});

t.test('id lists', async (t) => {
  t.same(parseIdList(['0,2', '5'], '-i'), [0, 2, 5]);
  t.throws(() => parseIdList(['0,,1'], '--device-ids <LIST>'), { message: "invalid value '' for '--device-ids <LIST>': cannot parse integer from empty string" });
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
