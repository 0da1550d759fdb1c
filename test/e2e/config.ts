// The configuration file with a real daemon and the real CLIs: `xlurm config
// check` (exact `file:line: key: problem` lines), `config show [--json]`,
// `xlurm reload` changing max_running live and refusing a backend change,
// SIGHUP, options that win over the file, `xlurm start` refusing a bad file,
// and a reload by another account refused.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI_BIN, baseEnv } from '../helpers/env';
import { Daemon, nodeCommand, runProcess, startDaemon, tempHome, type DaemonOpts } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, as, rootDaemon, sharedDir } from '../helpers/multiuser';
import { waitFor } from '../helpers/wait';
import { ConfigSchema } from '../../packages/daemon/src/config/schema';
import type { Scope as Tap } from '../helpers/tap';

const DAEMON_KEYS = 'backend, max_running, retention, exclude_device_ids, max_connections, max_connections_per_user';
/** The tables an unknown top-level key's message lists: every section of the schema (features add theirs). */
const TABLES = Object.keys(ConfigSchema.properties).map((k) => `[${k}]`).join(', ');

/** A daemon that takes every setting from its file: no --backend or --max-running of the helper's. */
class FileDaemon extends Daemon {
  constructor(t: Tap, home: string, readonly file: string, opts: DaemonOpts = {}) { super(t, home, opts); }
  override daemonArgs(): string[] { return ['daemon', '--config', this.file, ...(this.opts.args ?? [])]; }
}

async function fileDaemon(t: Tap, text: string, opts: DaemonOpts = {}): Promise<FileDaemon> {
  const home = tempHome(t, 'xl-cfg');
  const file = path.join(path.dirname(home), 'xlurm.toml');
  fs.writeFileSync(file, text);
  const d = new FileDaemon(t, home, file, opts);
  t.teardown(() => d.stop());
  await d.start();
  return d;
}

/** xlurm without a daemon, in a fresh home. */
function xlurm(t: Tap, args: string[], env: Record<string, string> = {}) {
  const home = tempHome(t, 'xl-cfgc');
  return runProcess(...nodeCommand([path.join(CLI_BIN, 'xlurm'), ...args]), { env: baseEnv({ XLURM_HOME: home, ...env }), cwd: path.dirname(home) });
}

async function show(d: Daemon): Promise<any> {
  const r = await d.run('xlurm', ['config', 'show', '--json']);
  if (r.code !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

t.test('config check: ok, every problem with its line, a syntax error, missing files; no daemon needed', async (t) => {
  const dir = path.dirname(tempHome(t, 'xl-cfgk'));
  const good = path.join(dir, 'good.toml');
  fs.writeFileSync(good, '# the daemon\n[daemon]\nmax_running = 4\nretention = "12h"\n');
  let r = await xlurm(t, ['config', 'check', good]);
  t.same([r.code, r.stdout, r.stderr], [0, `${good}: ok\n`, '']);

  const bad = path.join(dir, 'bad.toml');
  fs.writeFileSync(bad, '[daemon]\nmax_running = "8"\nmax_runing = 3\nadmin_password = "x"\n\n[federation]\nmode = "reserve"\n\n[cluster]\nmode = "reserve"\n');
  r = await xlurm(t, ['config', 'check', bad]);
  t.equal(r.code, 1);
  t.equal(r.stdout, '');
  t.equal(r.stderr, [
    `xlurm: ${bad}:2: daemon.max_running: must be an integer, not the string "8"`,
    `xlurm: ${bad}:3: daemon.max_runing: unknown key (known keys of [daemon]: ${DAEMON_KEYS})`,
    `xlurm: ${bad}:4: daemon.admin_password: looks like a credential; the configuration is shown to every user (xlurm config show), so keep secrets out of it`,
    // [federation] is a table this version does not have; [cluster] is known (client mode,
    // docs/behaviour.md §27.1), so only its unknown key is reported.
    `xlurm: ${bad}:6: federation: unknown table (known tables: ${TABLES})`,
    `xlurm: ${bad}:10: cluster.mode: unknown key (known keys of [cluster]: engine, partition, gres)`,
    '',
  ].join('\n'));

  const syntax = path.join(dir, 'syntax.toml');
  fs.writeFileSync(syntax, '[daemon]\nmax_running = 4\nmax_running = 5\n');
  r = await xlurm(t, ['config', 'check', syntax]);
  t.same([r.code, r.stderr], [1, `xlurm: ${syntax}:3: invalid TOML: trying to redefine an already defined table or value\n`]);

  const missing = path.join(dir, 'missing.toml');
  r = await xlurm(t, ['config', 'check', missing]);
  t.same([r.code, r.stderr], [1, `xlurm: ${missing}: cannot read the configuration file: no such file\n`], 'a named file must exist');
  r = await xlurm(t, ['config', 'check'], { XLURM_CONFIG: good });
  t.same([r.code, r.stdout], [0, `${good}: ok\n`], 'no FILE and no daemon: XLURM_CONFIG');

  r = await xlurm(t, ['config']);
  t.equal(r.code, 2, 'a subcommand is required');
  r = await xlurm(t, ['config', 'frob']);
  t.match(r.stderr, /^error: unrecognized subcommand 'frob'/);
});

t.test('a daemon reading its file: show, reload live, refused reloads change nothing, SIGHUP', async (t) => {
  const d = await fileDaemon(t, '[daemon]\nbackend = "none"\nmax_running = 1\n');
  let v = await show(d);
  // Every table is shown; those the file lacks with their defaults.
  const { accounting, resources, sharing, ...fromFile } = v.config;
  t.same({ ...v, config: fromFile }, {
    file: d.file, found: true, from_flags: [],
    config: { daemon: { backend: 'none', max_running: 1, retention: '7d', exclude_device_ids: [] }, limits: { kill_grace: '1s', max_array_tasks: 10000, max_request_bytes: '3M', users: { 'default.pending_jobs': 10000 } }, devices: { group_affinity: 'prefer', groups: {} }, scheduler: { mode: 'greedy', reserve_min_devices: 2, max_running_by_size: {}, fair_share: true, fair_share_half_life: '7d' } },
  });
  t.same([accounting, sharing], [{ sample_interval: '30s', retention: '90d', metrics_file: '' }, { enabled: false }]);
  t.match(resources, { cpus: 'all', swap: false });
  const text = await d.run('xlurm', ['config', 'show']);
  t.ok(text.stdout.startsWith(`# ${d.file}\n[daemon]\nbackend = "none"\nmax_running = 1\nretention = "7d"\nexclude_device_ids = []\n[limits]\nkill_grace = "1s"\nmax_array_tasks = 10000\nmax_request_bytes = "3M"\nusers.default.pending_jobs = 10000\n[devices]\ngroup_affinity = "prefer"\n[scheduler]\nmode = "greedy"\nreserve_min_devices = 2\nfair_share = true\nfair_share_half_life = "7d"\n[accounting]\nsample_interval = "30s"\nretention = "90d"\nmetrics_file = ""\n[resources]\ncpus = "all"\n`), text.stdout);
  t.match(text.stdout, /\n\[sharing\]\nenabled = false\n/, 'a table the file lacks, with its defaults');
  let r = await d.run('xlurm', ['config', 'check']);
  t.same([r.code, r.stdout], [0, `${d.file}: ok\n`], 'no FILE: the running daemon\'s file');

  const marker = path.join(path.dirname(d.home), 'go');
  t.teardown(() => fs.writeFileSync(marker, ''));
  const wait = `while [ ! -e ${marker} ]; do sleep 0.05; done`;
  const a = await d.batch(wait, ['-g', '0']);
  const b = await d.batch(wait, ['-g', '0']);
  const ja = await d.waitState(a, 'RUNNING');
  t.equal((await d.job(b)).state, 'PENDING', 'max_running 1 holds b');

  fs.writeFileSync(d.file, '[daemon]\nbackend = "none"\nmax_running = 2\n');
  r = await d.run('xlurm', ['reload']);
  t.same([r.code, r.stdout, r.stderr], [0, 'configuration reloaded\n', '']);
  await d.waitState(b, 'RUNNING');
  const ja2 = await d.job(a);
  t.same([ja2.state, ja2.started_at], ['RUNNING', ja.started_at], 'the running job was not touched');
  t.equal((await show(d)).config.daemon.max_running, 2);

  fs.writeFileSync(d.file, '[daemon]\nbackend = "none"\nmax_running = 5\nbogus = true\n');
  r = await d.run('xlurm', ['reload']);
  t.same([r.code, r.stdout, r.stderr], [1, '', `xlurm: ${d.file}:4: daemon.bogus: unknown key (known keys of [daemon]: ${DAEMON_KEYS})\n`]);
  t.equal((await show(d)).config.daemon.max_running, 2, 'an invalid file changes nothing');

  fs.writeFileSync(d.file, '[daemon]\nbackend = "nvidia"\nmax_running = 5\n');
  r = await d.run('xlurm', ['reload']);
  t.same([r.code, r.stderr], [1, 'xlurm: reload cannot change daemon.backend; restart the daemon when the queue is idle\n']);
  t.equal((await show(d)).config.daemon.max_running, 2, 'nor does a refused backend change');

  fs.writeFileSync(d.file, '[daemon]\nbackend = "none"\nmax_running = 3\nretention = "30d"\n');
  d.proc!.kill('SIGHUP');
  v = await waitFor(async () => { const s = await show(d); return s.config.daemon.max_running === 3 ? s : undefined; }, { what: 'SIGHUP reload' });
  t.equal(v.config.daemon.retention, '30d');
  const st = await d.request('status', {}) as any;
  t.same([st.result.max_running, st.result.retention_secs], [3, 30 * 86400], 'status shows the settings in force');
  t.equal(d.proc!.exitCode, null, 'the daemon still runs');

  fs.writeFileSync(marker, '');
  await d.waitState(a, 'COMPLETED');
  await d.waitState(b, 'COMPLETED');
});

t.test('options win over the file, also after a reload; XLURM_CONFIG names the file', async (t) => {
  const dir = path.dirname(tempHome(t, 'xl-cfgf'));
  const file = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(file, '[daemon]\nmax_running = 5\nretention = "1h"\n');
  const d = await startDaemon(t, { maxRunning: 2, env: { XLURM_CONFIG: file } });
  let v = await show(d);
  t.same([v.file, v.from_flags, v.config.daemon.max_running, v.config.daemon.retention], [file, ['daemon.backend', 'daemon.max_running'], 2, '1h']);
  const text = await d.run('xlurm', ['config', 'show']);
  t.match(text.stdout, /^max_running = 2 +# from a command-line option$/m);
  fs.writeFileSync(file, '[daemon]\nmax_running = 9\nretention = "2h"\n');
  t.equal((await d.run('xlurm', ['reload'])).code, 0);
  v = await show(d);
  t.same([v.config.daemon.max_running, v.config.daemon.retention], [2, '2h']);
});

t.test('start refuses a bad or missing named file before starting anything', async (t) => {
  const dir = path.dirname(tempHome(t, 'xl-cfgs'));
  const bad = path.join(dir, 'bad.toml');
  fs.writeFileSync(bad, '[daemon]\nretention = "soon"\n');
  const home = path.join(dir, 'home');
  const env = baseEnv({ XLURM_HOME: home });
  const run = (args: string[]) => runProcess(...nodeCommand([path.join(CLI_BIN, 'xlurm'), ...args]), { env, cwd: dir });
  let r = await run(['start', '--backend', 'none', '--config', bad]);
  t.same([r.code, r.stdout, r.stderr], [1, '', `xlurm: ${bad}:2: daemon.retention: invalid duration 'soon': use seconds, or a number with s, m, h or d\n`]);
  t.notOk(fs.existsSync(path.join(home, 'xlurm.sock')), 'no daemon');
  r = await run(['daemon', '--backend', 'none', '--config', path.join(dir, 'missing.toml')]);
  t.same([r.code, r.stderr], [1, `xlurm: ${path.join(dir, 'missing.toml')}: cannot read the configuration file: no such file\n`], 'the daemon itself checks too');
});

t.test('another account may show the configuration but not reload it', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const dir = sharedDir(t, 0o755);
  const file = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(file, '[daemon]\nmax_running = 4\n', { mode: 0o644 });
  const d = await rootDaemon(t, { env: { XLURM_CONFIG: file } });
  const cwd = path.dirname(d.home);
  const r = await d.run('xlurm', ['reload'], as(nobody, { cwd }));
  t.same([r.code, r.stderr], [1, 'xlurm: only the administrator may reload the configuration\n']);
  const s = await d.run('xlurm', ['config', 'show', '--json'], as(nobody, { cwd }));
  t.equal(s.code, 0, s.stderr);
  t.equal(JSON.parse(s.stdout).file, file);
  const ok = await d.run('xlurm', ['reload'], { cwd });
  t.same([ok.code, ok.stdout], [0, 'configuration reloaded\n'], 'root may');
});
