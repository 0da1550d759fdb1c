// Checking a configuration file from a client (cli/src/config-file.ts): which file a daemon
// started from this shell reads, and the daemon package's own verdict on it.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkConfigFile, configFileFor, defaultConfigPath } from '../../../packages/cli/src/config-file';
import { capture, tempDir } from './fake-daemon';

t.test('the file: --config, else $XLURM_CONFIG (made absolute), else the default (not named)', async (t) => {
  t.equal(defaultConfigPath(), '/etc/xlurm/xlurm.toml');
  t.same(configFileFor({ config: '/a/x.toml' }, { XLURM_CONFIG: '/b/y.toml' }), { file: '/a/x.toml', named: true });
  t.same(configFileFor({}, { XLURM_CONFIG: '/b/y.toml' }), { file: '/b/y.toml', named: true });
  t.same(configFileFor({}, { XLURM_CONFIG: 'rel.toml' }), { file: path.resolve('rel.toml'), named: true });
  t.same(configFileFor({}, { XLURM_CONFIG: '' }), { file: '/etc/xlurm/xlurm.toml', named: false }, 'empty is unset');
  t.same(configFileFor({}, {}), { file: '/etc/xlurm/xlurm.toml', named: false });
});

t.test('a valid file exists; a missing default is fine; a missing named file is an error', async (t) => {
  const dir = tempDir(t);
  const good = path.join(dir, 'good.toml');
  fs.writeFileSync(good, '# comment\n[daemon]\nmax_running = 2\n');
  t.equal(checkConfigFile(good, true), true);
  t.equal(checkConfigFile(good, false), true);
  const missing = path.join(dir, 'missing.toml');
  t.equal(checkConfigFile(missing, false), false);
  const r = await capture(async () => { try { checkConfigFile(missing, true); return undefined; } catch (e) { return e; } });
  t.match(r.value, { name: 'ExitWith', status: 1 });
  t.equal(r.stderr, `xlurm: ${missing}: cannot read the configuration file: no such file\n`);
});

t.test('every problem on its own line, with file and line, then exit 1', async (t) => {
  const bad = path.join(tempDir(t), 'bad.toml');
  fs.writeFileSync(bad, '[daemon]\nmax_running = 0\nbogus = 1\n');
  const r = await capture(async () => { try { checkConfigFile(bad, false); return undefined; } catch (e) { return e; } });
  t.match(r.value, { name: 'ExitWith', status: 1 }, 'the default file too, once it exists');
  const lines = r.stderr.split('\n');
  t.equal(lines.length, 3, 'two problems and the final newline');
  t.match(lines[0], new RegExp(`^xlurm: ${bad}:2: daemon\\.max_running: `));
  t.match(lines[1], new RegExp(`^xlurm: ${bad}:3: daemon\\.bogus: unknown key`));
  t.equal(r.stdout, '');
});
