// The configuration file's checks: every problem as `<file>:<line>: <key>: <problem>`.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigFileError, checkConfigText, formatProblem, readConfigFile } from '../../../../packages/daemon/src/config/load';
import { ConfigSchema } from '../../../../packages/daemon/src/config/schema';

/** The tables an unknown top-level key's message lists: every section the schema has (features add theirs). */
const TABLES = Object.keys(ConfigSchema.properties).map((k) => `[${k}]`).join(', ');

/** The problems of `text` as the CLI prints them (without `xlurm: `). */
function problems(text: string, file = 'x.toml'): string[] {
  try {
    checkConfigText(file, text);
    return [];
  } catch (e) {
    if (!(e instanceof ConfigFileError)) throw e;
    return e.message.split('\n');
  }
}

t.test('a valid file: every [daemon] key, integers and durations in both forms', async (t) => {
  const { settings } = checkConfigText('x.toml', '# comment\n[daemon]\nbackend = "nv"\nmax_running = 4\nretention = "12h"\nexclude_device_ids = [1, 3]\n');
  t.same(settings, { daemon: { backend: 'nv', max_running: 4, retention: '12h', exclude_device_ids: [1, 3] } });
  t.same(checkConfigText('x.toml', '[daemon]\nretention = 3600\n').settings, { daemon: { retention: 3600 } });
  t.same(checkConfigText('x.toml', 'daemon.retention = "90"\n').settings, { daemon: { retention: '90' } }, 'a dotted key; seconds as text');
  t.same(checkConfigText('x.toml', '').settings, {}, 'an empty file is all defaults');
});

t.test('an unknown key, with its line and the known keys', async (t) => {
  t.same(problems('[daemon]\nmax_running = 4\nmax_runing = 3\n'),
    ['x.toml:3: daemon.max_runing: unknown key (known keys of [daemon]: backend, max_running, retention, exclude_device_ids, max_connections, max_connections_per_user)']);
  t.same(problems('[daemon]\nmax_running = 4\n\n[federation]\nmode = "reserve"\n'),
    [`x.toml:4: federation: unknown table (known tables: ${TABLES})`], 'a table this version does not have');
  t.same(problems('[cluster]\nengine = "slurm"\nmode = "reserve"\n'),
    ['x.toml:3: cluster.mode: unknown key (known keys of [cluster]: engine, partition, gres)'], 'client mode\'s table (docs/behaviour.md §27.1)');
  t.same(problems('verbose = true\n'), [`x.toml:1: verbose: unknown key (known tables: ${TABLES})`]);
  t.same(problems('[daemon.extra]\nx = 1\n'),
    ['x.toml:1: daemon.extra: unknown table (known keys of [daemon]: backend, max_running, retention, exclude_device_ids, max_connections, max_connections_per_user)'], 'a sub-table');
});

t.test('wrong types and values', async (t) => {
  t.same(problems('[daemon]\nmax_running = "8"\n'), ['x.toml:2: daemon.max_running: must be an integer, not the string "8"']);
  t.same(problems('[daemon]\nmax_running = 2.5\n'), ['x.toml:2: daemon.max_running: must be an integer, not the number 2.5']);
  t.same(problems('[daemon]\nmax_running = 0\n'), ['x.toml:2: daemon.max_running: must be at least 1, not 0']);
  t.same(problems('[daemon]\nbackend = "cuda"\n'),
    ["x.toml:2: daemon.backend: invalid backend 'cuda': use one of auto, nvidia, nv, ascend, asc, mthreads, mtt, metax, mx, ppu, hcu, none"]);
  t.same(problems('[daemon]\nretention = "7w"\n'),
    ["x.toml:2: daemon.retention: invalid duration '7w': use seconds, or a number with s, m, h or d"]);
  t.same(problems('[daemon]\nretention = -5\n'),
    ["x.toml:2: daemon.retention: invalid duration '-5': use seconds, or a number with s, m, h or d"]);
  t.same(problems('[daemon]\nexclude_device_ids = [1, 2, 1]\n'), ['x.toml:2: daemon.exclude_device_ids: lists 1 more than once']);
  t.same(problems('[daemon]\nexclude_device_ids = 3\n'), ['x.toml:2: daemon.exclude_device_ids: must be an array, not the integer 3']);
  t.same(problems('[daemon]\nexclude_device_ids = [\n  1,\n  "two",\n]\n'),
    ['x.toml:2: daemon.exclude_device_ids.1: must be an integer, not the string "two"'], 'an array element: the line of its key');
  t.same(problems('daemon = 5\n'), ['x.toml:1: daemon: must be a table, not the integer 5']);
  // Longer than the supervisor's spec carries: every job would fail to start.
  t.same(problems('[limits]\nkill_grace = "99999999999d"\ndefault_time_limit = 5000000000\nmax_time_limit = "4294967295s"\n'), [
    "x.toml:2: limits.kill_grace: duration '99999999999d' is too long: at most 4294967295 seconds",
    "x.toml:3: limits.default_time_limit: duration '5000000000' is too long: at most 4294967295 seconds",
  ], 'durations of at most 2^32-1 seconds');
});

t.test('every problem at once, in line order', async (t) => {
  t.same(problems('[daemon]\nretention = "x"\nmax_running = true\nbogus = 1\n'), [
    "x.toml:2: daemon.retention: invalid duration 'x': use seconds, or a number with s, m, h or d",
    'x.toml:3: daemon.max_running: must be an integer, not the boolean true',
    'x.toml:4: daemon.bogus: unknown key (known keys of [daemon]: backend, max_running, retention, exclude_device_ids, max_connections, max_connections_per_user)',
  ]);
});

t.test('keys that look like credentials are refused, wherever they are', async (t) => {
  const why = 'looks like a credential; the configuration is shown to every user (xlurm config show), so keep secrets out of it';
  t.same(problems('[daemon]\napi_token = "abc"\n'), [`x.toml:2: daemon.api_token: ${why}`]);
  t.same(problems('Password = "x"\n'), [`x.toml:1: Password: ${why}`], 'case does not matter');
  t.same(problems('[federation]\nslurm_secret = "x"\n'), [`x.toml:1: federation: unknown table (known tables: ${TABLES})`, `x.toml:2: federation.slurm_secret: ${why}`]);
});

t.test('a TOML syntax error reports its line', async (t) => {
  t.same(problems('[daemon]\nmax_running = 4\nmax_running = 5\n'), ['x.toml:3: invalid TOML: trying to redefine an already defined table or value']);
  t.same(problems('[daemon]\nmax_running =\n'), ['x.toml:2: invalid TOML: invalid value']);
});

t.test('missing files: the default means defaults, a named one is an error', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-cfg-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const missing = path.join(dir, 'none.toml');
  t.same(readConfigFile(missing, false), { file: missing, found: false, settings: {}, lines: new Map() });
  t.throws(() => readConfigFile(missing, true), { name: 'ConfigFileError', message: `${missing}: cannot read the configuration file: no such file` });
  t.throws(() => readConfigFile(dir, true), { message: `${dir}: cannot read the configuration file: is a directory` });
  const good = path.join(dir, 'good.toml');
  fs.writeFileSync(good, '[daemon]\nmax_running = 2\n');
  const r = readConfigFile(good, true);
  t.equal(r.found, true);
  t.same(r.settings, { daemon: { max_running: 2 } });
  t.equal(r.lines.get('daemon.max_running'), 2);
});

t.test('formatProblem leaves out what is not known', async (t) => {
  t.equal(formatProblem({ file: 'f', line: 3, key: 'a.b', problem: 'p' }), 'f:3: a.b: p');
  t.equal(formatProblem({ file: 'f', key: 'a.b', problem: 'p' }), 'f: a.b: p');
  t.equal(formatProblem({ file: 'f', problem: 'p' }), 'f: p');
});
