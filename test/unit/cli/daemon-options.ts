import t from 'tap';
import * as path from 'node:path';
import { parseArgv } from '../../../packages/cli/src/argv';
import { DAEMON_OPTIONS, DEFAULTS, daemonArgv, parseDaemonOptions } from '../../../packages/cli/src/daemon-options';

const parse = (argv: string[]) => parseDaemonOptions(parseArgv({ options: DAEMON_OPTIONS }, argv));

t.test('defaults and canonical names', async (t) => {
  t.same(parse([]), DEFAULTS);
  // Only the options given reach the daemon: the rest come from its configuration file, else its defaults.
  t.same(daemonArgv(parse([])), []);
  t.same(daemonArgv(parse(['--max-running', '3'])), ['--max-running', '3']);
  t.equal(parse(['--backend', 'nv']).backend, 'nvidia');
  t.equal(parse(['--backend', 'asc']).backend, 'ascend');
  t.equal(parse(['--backend', 'none']).backend, 'none');
  t.same(daemonArgv(parse(['--backend', 'mx', '--max-running', '4', '--retention', '90s', '--exclude-device-ids', '1,2', '--exclude-device-ids', '5'])),
    ['--backend', 'metax', '--max-running', '4', '--retention', '90s', '--exclude-device-ids', '1,2,5']);
  t.equal(parse(['--max-running', '0']).maxRunning, 0, 'zero is refused later, by start or the daemon');
  t.same(daemonArgv(parse(['--config', 'rel/x.toml'])), ['--config', path.resolve('rel/x.toml')], '--config is made absolute');
});

t.test('invalid values are usage errors', async (t) => {
  t.throws(() => parse(['--backend', 'cuda']), { name: 'UsageError', message: /^invalid value 'cuda' for '--backend <BACKEND>' \[possible values: auto, nvidia, nv, .*none\]$/ });
  t.throws(() => parse(['--backend', 'NVIDIA']), { name: 'UsageError' }, 'names are lowercase');
  t.throws(() => parse(['--max-running', 'many']), { message: "invalid value 'many' for '--max-running <N>': must be a whole number of 0 or more" });
  for (const bad of ['7', 'd', '7w', '1.5h', '-1d', ' 7d']) {
    t.throws(() => parse([`--retention=${bad}`]), { name: 'UsageError', message: new RegExp(`^invalid retention '${bad.replace('.', '\\.')}'`) }, bad);
  }
  for (const good of ['1s', '30m', '12h', '7d', '0s']) t.equal(parse(['--retention', good]).retention, good);
  t.throws(() => parse(['--exclude-device-ids', '1,a']), { name: 'UsageError' });
  t.throws(() => parse(['--max-running', '1', '--max-running', '2']), { message: "the argument '--max-running <N>' cannot be used multiple times" });
});
