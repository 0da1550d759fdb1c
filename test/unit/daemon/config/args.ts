// `xlurm daemon`'s own options: only the given ones are returned, with the messages of before.
import t from 'tap';
import * as path from 'node:path';
import { durationSecs, parseDaemonArgs, parseDuration } from '../../../../packages/daemon/src/config/args';

t.test('only the options given', async (t) => {
  t.same(parseDaemonArgs([]), { flags: {} });
  t.same(parseDaemonArgs(['--backend', 'nv', '--max-running=4', '--retention', '90s', '--exclude-device-ids', '1,2', '--exclude-device-ids', '5']), {
    flags: { backend: 'nvidia', maxRunning: 4, retention: '90s', retentionSecs: 90, excludeIds: [1, 2, 5] },
  });
  t.same(parseDaemonArgs(['--config', 'a/b.toml']), { flags: {}, config: path.resolve('a/b.toml') });
});

t.test('the messages of before', async (t) => {
  t.throws(() => parseDaemonArgs(['--backend', 'cuda']), { name: 'Error', message: 'invalid backend: cuda' });
  t.throws(() => parseDaemonArgs(['--max-running', 'x']), { message: 'invalid max-running: x' });
  t.throws(() => parseDaemonArgs(['--max-running', '0']), { message: 'max-running must be positive' });
  t.throws(() => parseDaemonArgs(['--retention', '7']), { message: 'invalid retention "7": use a number with s, m, h or d (e.g. 7d)' });
  t.throws(() => parseDaemonArgs(['--exclude-device-ids', '1,1']), { message: 'excluded device IDs must not contain duplicates' });
  t.throws(() => parseDaemonArgs(['--exclude-device-ids', '1,x']), { message: 'invalid device ID list: 1,x' });
  t.throws(() => parseDaemonArgs(['--backend']), { message: '--backend needs a value' });
  t.throws(() => parseDaemonArgs(['--config']), { message: '--config needs a value' });
  t.throws(() => parseDaemonArgs(['--frob']), { message: 'unknown daemon option: --frob' });
});

t.test('durations', async (t) => {
  t.equal(parseDuration('7d'), 7 * 86400);
  t.equal(durationSecs('90'), 90);
  t.equal(durationSecs('15m'), 900);
  t.equal(durationSecs(3600), 3600);
});
