import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgv } from '../../../../packages/cli/src/argv';
import batch, { batchSubmission, readScript } from '../../../../packages/cli/src/commands/batch';
import { main } from '../../../../packages/cli/src/main';
import { capture, fakeDaemon, tempDir, withHome } from '../fake-daemon';

const env = () => ({ E: '1' });

t.test('SCRIPT ARGS: the script text is sent, ARGS verbatim, named after the file', async (t) => {
  const dir = tempDir(t);
  const script = path.join(dir, 'script with spaces.sh');
  fs.writeFileSync(script, 'echo "$0 $#"\n');
  const s = batchSubmission(parseArgv(batch, ['-g', '0', script, '-x', '--gpus', 'a b', '--', '--wrap', 'x']), env);
  t.same(s.command, ['-x', '--gpus', 'a b', '--', '--wrap', 'x']);
  t.equal(s.script, 'echo "$0 $#"\n');
  t.equal(s.name, 'script with spaces.sh');
  t.equal(s.count, 0);
  t.same(Object.keys(s), ['command', 'cwd', 'env', 'name', 'count', 'kind', 'time_limit', 'script']);
  t.equal(batchSubmission(parseArgv(batch, ['-n', 'named', script]), env).name, 'named');
});

t.test('--wrap CMD becomes bash -c CMD, named bash', async (t) => {
  const s = batchSubmission(parseArgv(batch, ['-g', '0', '--wrap', 'echo hi; exit 3']), env);
  t.same(s.command, ['bash', '-c', 'echo hi; exit 3']);
  t.equal(s.script, null);
  t.equal(s.name, 'bash');
});

t.test('exactly one of SCRIPT and --wrap', async (t) => {
  t.throws(() => batchSubmission(parseArgv(batch, ['-g', '0']), env), { name: 'UsageError', message: /<SCRIPT\|--wrap <CMD>>/ });
  t.throws(() => batchSubmission(parseArgv(batch, ['--wrap', 'x', 'script.sh']), env),
    { name: 'UsageError', message: "the argument '--wrap <CMD>' cannot be used with '[SCRIPT]'" });
});

t.test('the script is read first: cannot read <path> wins over validation', async (t) => {
  const dir = tempDir(t);
  const missing = path.join(dir, 'missing.sh');
  t.throws(() => batchSubmission(parseArgv(batch, ['-t', '0', '-i', '1,1', missing]), env), { name: 'CliError', message: `cannot read ${missing}` });
  t.throws(() => readScript(dir), { message: `cannot read ${dir}` }, 'a directory');
  const latin1 = path.join(dir, 'latin1.sh');
  fs.writeFileSync(latin1, Buffer.from([0x65, 0x63, 0x68, 0x6f, 0x20, 0xe9, 0x0a]));
  t.throws(() => readScript(latin1), { message: `cannot read ${latin1}` }, 'not UTF-8');
  const ok = path.join(dir, 'ok.sh');
  fs.writeFileSync(ok, 'true\n');
  t.throws(() => batchSubmission(parseArgv(batch, ['-t', '0', ok]), env), { message: 'time-limit must be positive' });
});

t.test('prints only the id', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply({ id: 17, state: 'PENDING' }));
  const r = await withHome(d.home, () => capture(() => main('xbatch', ['-g', '0', '--wrap', 'true'])));
  t.same([r.value, r.stdout, r.stderr], [0, '17\n', '']);
  t.equal(d.requests[0]!.op, 'submit');
  t.same(d.requests[0]!.args.command, ['bash', '-c', 'true']);
});
