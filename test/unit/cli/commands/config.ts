// `xlurm config check|show` (cli/src/commands/config.ts), against the fake daemon where one
// is needed.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ConfigView } from '@xlurm/protocol';
import { main } from '../../../../packages/cli/src/main';
import { configText } from '../../../../packages/cli/src/commands/config';
import { capture, fakeDaemon, tempDir, withHome } from '../fake-daemon';

const VIEW: ConfigView = {
  file: '/etc/xlurm/xlurm.toml', found: true, from_flags: ['daemon.max_running'],
  config: { daemon: { backend: 'auto', max_running: 4, retention: '7d', exclude_device_ids: [1, 3] } },
};

/** Run with XLURM_CONFIG set to `file` (or unset). */
async function withConfigEnv<T>(file: string | undefined, fn: () => Promise<T>): Promise<T> {
  const saved = process.env.XLURM_CONFIG;
  if (file === undefined) delete process.env.XLURM_CONFIG; else process.env.XLURM_CONFIG = file;
  try { return await fn(); } finally {
    if (saved === undefined) delete process.env.XLURM_CONFIG; else process.env.XLURM_CONFIG = saved;
  }
}

t.test('show as TOML: the file, each table, values as TOML writes them, keys set by options marked', async (t) => {
  t.equal(configText(VIEW), [
    '# /etc/xlurm/xlurm.toml',
    '[daemon]',
    'backend = "auto"',
    'max_running = 4                  # from a command-line option',
    'retention = "7d"',
    'exclude_device_ids = [1, 3]',
    '',
  ].join('\n'));
  t.equal(configText({ ...VIEW, config: { ...VIEW.config, devices: { group_affinity: 'require', groups: { nv: '0-3;4-7', asc: '0-7' } } } }).split('\n').slice(6).join('\n'),
    '[devices]\ngroup_affinity = "require"\ngroups.nv = "0-3;4-7"\ngroups.asc = "0-7"\n', 'a sub-table as dotted keys');
  t.match(configText({ ...VIEW, found: false, from_flags: [] }), /^# \/etc\/xlurm\/xlurm\.toml \(no such file: every key has its default\)\n\[daemon\]\nbackend = "auto"\nmax_running = 4\n/);
});

t.test('show: text or --json from the daemon', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply(VIEW));
  let r = await withHome(d.home, () => capture(() => main('xlurm', ['config', 'show'])));
  t.same([r.value, r.stdout, r.stderr], [0, configText(VIEW), '']);
  r = await withHome(d.home, () => capture(() => main('xlurm', ['config', 'show', '--json'])));
  t.same([r.value, r.stdout], [0, JSON.stringify(VIEW, null, 2) + '\n']);
  t.same(d.requests.map((q) => [q.op, q.args]), [['config', {}], ['config', {}]]);
  r = await withHome(d.home, () => capture(() => main('xlurm', ['config', 'show', 'x'])));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: unexpected argument 'x' found\n/);
});

t.test('check FILE: no daemon needed', async (t) => {
  const dir = tempDir(t);
  const good = path.join(dir, 'good.toml');
  fs.writeFileSync(good, '[daemon]\nmax_running = 2\n');
  const bad = path.join(dir, 'bad.toml');
  fs.writeFileSync(bad, '[daemon]\nbogus = 1\n');
  let r = await withHome(dir, () => capture(() => main('xlurm', ['config', 'check', good])));
  t.same([r.value, r.stdout, r.stderr], [0, `${good}: ok\n`, '']);
  r = await withHome(dir, () => capture(() => main('xlurm', ['config', 'check', bad])));
  t.equal(r.value, 1);
  t.match(r.stderr, new RegExp(`^xlurm: ${bad}:2: daemon\\.bogus: unknown key.*\n$`));
  t.equal(r.stdout, '');
  const missing = path.join(dir, 'missing.toml');
  r = await withHome(dir, () => capture(() => main('xlurm', ['config', 'check', missing])));
  t.same([r.value, r.stderr], [1, `xlurm: ${missing}: cannot read the configuration file: no such file\n`], 'a named file must exist');
});

t.test("check without FILE: the running daemon's file", async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'daemon.toml');
  fs.writeFileSync(file, '[daemon]\nretention = "1d"\n');
  const d = await fakeDaemon(t, (c) => c.reply({ ...VIEW, file, found: true }));
  let r = await withConfigEnv(undefined, () => withHome(d.home, () => capture(() => main('xlurm', ['config', 'check']))));
  t.same([r.value, r.stdout, r.stderr], [0, `${file}: ok\n`, '']);
  t.same(d.requests.map((q) => q.op), ['config']);
  const gone = path.join(dir, 'gone.toml');
  const d2 = await fakeDaemon(t, (c) => c.reply({ ...VIEW, file: gone, found: false }));
  r = await withHome(d2.home, () => capture(() => main('xlurm', ['config', 'check'])));
  t.same([r.value, r.stdout, r.stderr], [0, `${gone}: ok\n`, `xlurm: ${gone} does not exist; the daemon uses the defaults\n`],
    'the daemon read no file: a missing one is fine');
});

t.test('check without FILE and without a daemon: the file a new daemon would read', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'env.toml');
  fs.writeFileSync(file, '[daemon]\nmax_running = 0\n');
  const r = await withConfigEnv(file, () => withHome(dir, () => capture(() => main('xlurm', ['config', 'check']))));
  t.equal(r.value, 1);
  t.match(r.stderr, new RegExp(`^xlurm: ${file}:2: daemon\\.max_running: `), '$XLURM_CONFIG');
});

t.test('usage errors', async (t) => {
  const dir = tempDir(t);
  const usage = async (argv: string[], message: string) => {
    const r = await withHome(dir, () => capture(() => main('xlurm', argv)));
    t.equal(r.value, 2, argv.join(' '));
    t.equal(r.stderr.split('\n')[0], `error: ${message}`);
  };
  await usage(['config'], 'a subcommand is required: check [FILE] | show [--json]');
  await usage(['config', 'frob'], "unrecognized subcommand 'frob'");
  await usage(['config', 'check', 'a', 'b'], "unexpected argument 'b' found");
  await usage(['config', 'check', '--json'], "unexpected argument '--json' found");
});
