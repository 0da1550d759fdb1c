import t from 'tap';
import { parseArgv } from '../../../packages/cli/src/argv';
import { DAEMON_OPTIONS, DEFAULTS, daemonArgv, parseDaemonOptions } from '../../../packages/cli/src/daemon-options';

const parse = (argv: string[]) => parseDaemonOptions(parseArgv({ options: DAEMON_OPTIONS }, argv));

t.test('defaults and canonical names', async (t) => {
  t.same(parse([]), DEFAULTS);
  t.same(daemonArgv(parse([])), ['--backend', 'auto', '--max-running', '32', '--retention', '7d']);
  t.equal(parse(['--backend', 'nv']).backend, 'nvidia');
  t.equal(parse(['--backend', 'asc']).backend, 'ascend');
  t.equal(parse(['--backend', 'none']).backend, 'none');
  t.same(daemonArgv(parse(['--backend', 'mx', '--max-running', '4', '--retention', '90s', '--exclude-device-ids', '1,2', '--exclude-device-ids', '5'])),
    ['--backend', 'metax', '--max-running', '4', '--retention', '90s', '--exclude-device-ids', '1,2,5']);
  t.equal(parse(['--max-running', '0']).maxRunning, 0, 'zero is refused later, by start or the daemon');
});

t.test('invalid values are usage errors', async (t) => {
  t.throws(() => parse(['--backend', 'cuda']), { name: 'UsageError', message: /^invalid value 'cuda' for '--backend <BACKEND>' \[possible values: auto, nvidia, nv, .*none\]$/ });
  t.throws(() => parse(['--backend', 'NVIDIA']), { name: 'UsageError' }, 'names are lowercase');
  t.throws(() => parse(['--max-running', 'many']), { message: "invalid value 'many' for '--max-running <N>': invalid digit found in string" });
  for (const bad of ['7', 'd', '7w', '1.5h', '-1d', ' 7d']) {
    t.throws(() => parse([`--retention=${bad}`]), { name: 'UsageError', message: new RegExp(`^invalid retention '${bad.replace('.', '\\.')}'`) }, bad);
  }
  for (const good of ['1s', '30m', '12h', '7d', '0s']) t.equal(parse(['--retention', good]).retention, good);
  t.throws(() => parse(['--exclude-device-ids', '1,a']), { name: 'UsageError' });
  t.throws(() => parse(['--max-running', '1', '--max-running', '2']), { message: "the argument '--max-running <N>' cannot be used multiple times" });
});
