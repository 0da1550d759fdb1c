import t from 'tap';
import { CliError, ExitWith, UsageError, osErrorText } from '../../../packages/cli/src/errors';

t.test('the three ways a client ends', async (t) => {
  const e = new CliError('cannot connect', 'BUSY');
  t.ok(e instanceof Error);
  t.match(e, { name: 'CliError', message: 'cannot connect', code: 'BUSY' });
  t.equal(new CliError('x').code, undefined, 'no wire code for a local failure');
  t.match(new UsageError('unexpected argument'), { name: 'UsageError', message: 'unexpected argument' });
  t.match(new ExitWith(130), { name: 'ExitWith', status: 130, message: 'exit 130' });
});

t.test('system errors read as strerror(3) with the errno; other errors as their message', async (t) => {
  const sys = (code: string) => Object.assign(new Error(`${code}: node's own text`), { code });
  t.equal(osErrorText(sys('ENOENT')), 'No such file or directory (os error 2)');
  t.equal(osErrorText(sys('EACCES')), 'Permission denied (os error 13)');
  t.equal(osErrorText(sys('ECONNREFUSED')), 'Connection refused (os error 111)');
  t.equal(osErrorText(sys('EPIPE')), 'Broken pipe (os error 32)');
  t.equal(osErrorText(sys('ENOSPC')), 'No space left on device (os error 28)');
  t.equal(osErrorText(sys('EWHATEVER')), "EWHATEVER: node's own text", 'an unlisted code keeps its message');
  t.equal(osErrorText(new Error('plain')), 'plain');
  t.equal(osErrorText('a string'), 'a string');
  t.equal(osErrorText(undefined), 'undefined');
});
