// The effective settings: option, else file, else default; where the file is looked for.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseDaemonArgs } from '../../../../packages/daemon/src/config/args';
import { DEFAULT_SETTINGS, configPath, keysFromFlags, loadDaemonConfig } from '../../../../packages/daemon/src/config/daemon';
import { DEFAULT_CONFIG_PATH } from '../../../../packages/daemon/src/config/load';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-cfgd-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
const file = path.join(dir, 'xlurm.toml');
fs.writeFileSync(file, '[daemon]\nbackend = "asc"\nmax_running = 4\nretention = 600\nexclude_device_ids = [2]\n');

const settings = (c: ReturnType<typeof loadDaemonConfig>) =>
  ({ backend: c.backend, maxRunning: c.maxRunning, retention: c.retention, retentionSecs: c.retentionSecs, excludeIds: c.excludeIds });

t.test('where the file is: --config, else XLURM_CONFIG, else the default path', async (t) => {
  t.equal(DEFAULT_CONFIG_PATH, '/etc/xlurm/xlurm.toml');
  t.same(configPath(parseDaemonArgs([]), {}), { file: DEFAULT_CONFIG_PATH, named: false });
  t.same(configPath(parseDaemonArgs([]), { XLURM_CONFIG: 'rel.toml' }), { file: path.resolve('rel.toml'), named: true });
  t.same(configPath(parseDaemonArgs(['--config', file]), { XLURM_CONFIG: '/elsewhere' }), { file, named: true });
});

t.test('the file over the defaults', async (t) => {
  const c = loadDaemonConfig(parseDaemonArgs([]), { file, named: true });
  t.same(settings(c), { backend: 'ascend', maxRunning: 4, retention: '600s', retentionSecs: 600, excludeIds: [2] });
  t.same(keysFromFlags(c), []);
  t.equal(c.source.lines.get('daemon.max_running'), 3);
});

t.test('options over the file', async (t) => {
  const c = loadDaemonConfig(parseDaemonArgs(['--max-running', '9', '--exclude-device-ids', '5', '--retention', '1h']), { file, named: true });
  t.same(settings(c), { backend: 'ascend', maxRunning: 9, retention: '1h', retentionSecs: 3600, excludeIds: [5] });
  t.same(keysFromFlags(c), ['daemon.max_running', 'daemon.retention', 'daemon.exclude_device_ids']);
});

t.test('a missing default file: all defaults; a missing named file: an error', async (t) => {
  const missing = path.join(dir, 'missing.toml');
  const c = loadDaemonConfig(parseDaemonArgs([]), { file: missing, named: false });
  t.same({ ...c, source: undefined }, { ...DEFAULT_SETTINGS, source: undefined }, 'every setting, as features add them');
  t.equal(c.source.found, false);
  t.throws(() => loadDaemonConfig(parseDaemonArgs([]), { file: missing, named: true }),
    { name: 'ConfigFileError', message: `${missing}: cannot read the configuration file: no such file` });
});
