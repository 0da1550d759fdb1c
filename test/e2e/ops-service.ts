// The systemd unit (packaging/xlurm.service) and its settings file
// (packaging/xlurm.default): the unit passes `systemd-analyze verify`, and,
// started the way systemd would start it (its ExecStart with the settings
// file's variables), stopping it the way KillMode=process does (SIGTERM to
// the daemon alone) leaves the running job alone, and the next start adopts it.
// There is no systemd as PID 1 here, so systemd itself is not run.
import t from 'tap';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI_BIN, ROOT } from '../helpers/env';
import { Daemon, rawRequest } from '../helpers/daemon';
import { ensureTool } from '../helpers/tools';
import { pidAlive, waitFor } from '../helpers/wait';
import { skip } from '../helpers/tap';

const UNIT = path.join(ROOT, 'packaging', 'xlurm.service');
const SETTINGS = path.join(ROOT, 'packaging', 'xlurm.default');
/** The PATH systemd gives services. */
const SYSTEMD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-svc-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
const prefix = path.join(dir, 'prefix');
const home = path.join(dir, 'home');
const envFile = path.join(dir, 'etc', 'xlurm');
fs.mkdirSync(path.join(prefix, 'bin'), { recursive: true });
fs.symlinkSync(path.join(CLI_BIN, 'xlurm'), path.join(prefix, 'bin', 'xlurm'));
fs.mkdirSync(path.dirname(envFile));

/** The unit as install.sh renders it. */
const unitText = fs.readFileSync(UNIT, 'utf8')
  .replace(/@NODE@/g, process.execPath).replace(/@PREFIX@/g, prefix).replace(/@ENV_FILE@/g, envFile);
const unitFile = path.join(dir, 'xlurm.service');
fs.writeFileSync(unitFile, unitText);
fs.writeFileSync(envFile, fs.readFileSync(SETTINGS, 'utf8')
  .replace('@XLURM_HOME@', home).replace('@XLURM_DAEMON_OPTS@', '--backend none --max-running 4 --retention 1d'));

/** `[Service]` settings of a unit file (last value wins, as systemd does for these keys). */
function serviceSettings(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const m = /^\[(.+)\]$/.exec(line);
    if (m) { section = m[1]!; continue; }
    const eq = line.indexOf('=');
    out[`${section}.${line.slice(0, eq)}`] = line.slice(eq + 1);
  }
  return out;
}

/** An EnvironmentFile= as systemd reads it: KEY=VALUE, optional double quotes, # comments. */
function parseEnvironmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m) throw new Error(`not an assignment: ${line}`);
    const v = m[2]!;
    env[m[1]!] = v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1) : v;
  }
  return env;
}

/** ExecStart= words after systemd's expansion: `$VAR` splits at whitespace (zero or more words), `${VAR}` is one word. */
function execStart(line: string, env: Record<string, string>): string[] {
  return line.split(/\s+/).filter(Boolean).flatMap((w) => {
    const split = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(w);
    if (split) return (env[split[1]!] ?? '').split(/\s+/).filter(Boolean);
    return [w.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, k: string) => env[k] ?? '')];
  });
}

const settings = serviceSettings(unitText);

t.test('the unit passes systemd-analyze verify', async (t) => {
  const missing = ensureTool('systemd-analyze', 'systemd');
  if (missing) { skip(t, `systemd-analyze unavailable: ${missing}`); return; }
  // --man=no: the man page of Documentation= is not installed here (ops-install checks it installed).
  const r = spawnSync('systemd-analyze', ['verify', '--man=no', unitFile], { encoding: 'utf8', env: { ...process.env, SYSTEMD_LOG_LEVEL: 'info' } });
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stderr.trim(), '', 'no warnings either');
});

t.test('the unit signals only the daemon on stop (KillMode=process), restarts it after a crash, starts at boot', async (t) => {
  t.equal(settings['Service.KillMode'], 'process', 'systemd signals only the daemon, never the jobs in its cgroup');
  t.equal(settings['Service.Restart'], 'on-failure', 'a crash is restarted, `xlurm stop` is not');
  t.equal(settings['Service.OOMPolicy'], 'continue', "a job's OOM kill does not stop the service");
  t.equal(settings['Service.TasksMax'], 'infinity');
  t.equal(settings['Service.EnvironmentFile'], `-${envFile}`);
  t.equal(settings['Install.WantedBy'], 'multi-user.target', 'enabled at boot');
});

t.test('the settings file reads the same in systemd and sh', async (t) => {
  const systemd = parseEnvironmentFile(fs.readFileSync(envFile, 'utf8'));
  const sh = spawnSync('bash', ['-c', 'set -a; . "$1"; printf "%s\\n" "$XLURM_HOME" "$XLURM_DAEMON_OPTS"', '_', envFile], { encoding: 'utf8', env: {} });
  t.equal(sh.status, 0, sh.stderr);
  t.same(sh.stdout.split('\n').slice(0, 2), [systemd.XLURM_HOME, systemd.XLURM_DAEMON_OPTS]);
  t.same(systemd, { XLURM_HOME: home, XLURM_DAEMON_OPTS: '--backend none --max-running 4 --retention 1d' },
    'library overrides are commented out until the administrator sets them');
});

t.test('a daemon started as the unit does: SIGTERM to it alone leaves the job running, the next one adopts it', async (t) => {
  // XLURM_CONFIG: never the host's /etc/xlurm/xlurm.toml (the settings file leaves it commented out).
  const env = { PATH: SYSTEMD_PATH, LANG: 'C.UTF-8', XLURM_CONFIG: '/dev/null', ...parseEnvironmentFile(fs.readFileSync(envFile, 'utf8')) };
  const argv = execStart(settings['Service.ExecStart']!, env);
  t.same(argv, [process.execPath, path.join(prefix, 'bin', 'xlurm'), 'daemon', '--backend', 'none', '--max-running', '4', '--retention', '1d']);

  const client = new Daemon(t, home, {});
  let output = '';
  const startService = async (): Promise<ChildProcess> => {
    // Type=simple: systemd forks, calls setsid and execs ExecStart with exactly this environment.
    const p = spawn(argv[0]!, argv.slice(1), { env, cwd: '/', detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout!.on('data', (b: Buffer) => { output += b; });
    p.stderr!.on('data', (b: Buffer) => { output += b; });
    t.teardown(() => { if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL'); });
    await waitFor(async () => {
      if (p.exitCode !== null) throw new Error(`daemon exited: ${output}`);
      return client.ping();
    }, { timeout: 20000, what: 'the service daemon to answer' });
    return p;
  };
  /** KillMode=process: SIGTERM to the main process only; resolves with its exit status. */
  const stopService = (p: ChildProcess) => new Promise<number | null>((resolve) => {
    p.once('exit', (code) => resolve(code));
    p.kill('SIGTERM');
  });

  let daemon = await startService();
  const st = await client.request('status', {}) as any;
  t.equal(st.result.backend, 'none', 'options come from XLURM_DAEMON_OPTS');
  t.equal(st.result.max_running, 4);
  t.equal(st.result.retention_secs, 86400);

  const marker = path.join(dir, 'go');
  const pidFile = path.join(dir, 'job.pid');
  const id = await client.batch(`echo started; echo $$ > ${pidFile}; while [ ! -e ${marker} ]; do sleep 0.05; done; echo finished`, ['-g', '0']);
  await client.waitState(id, 'RUNNING');
  const jobPid = Number(await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim(), { what: 'job pid' }));

  t.equal(await stopService(daemon), 0, 'SIGTERM is a clean exit (systemd does not count it as a failure)');
  t.ok(pidAlive(jobPid), 'the job survived the daemon stop');
  t.notOk(fs.existsSync(client.socket), 'the socket went with the daemon');

  daemon = await startService();
  t.equal((await client.job(id)).state, 'RUNNING', 'the restarted daemon adopted the job');
  t.ok(pidAlive(jobPid), 'and did not start it again');
  fs.writeFileSync(marker, '');
  const done = await client.waitState(id, ['COMPLETED', 'FAILED']);
  t.equal(done.state, 'COMPLETED');
  t.equal(done.result.exit_code, 0);
  const log = await client.run('xqueue', [String(id), '--log']);
  t.equal(log.stdout, 'started\nfinished\n', 'ran exactly once, output intact across the restart');

  // `xlurm stop` also exits 0, so Restart=on-failure leaves the service stopped.
  const exited = new Promise<number | null>((resolve) => daemon.once('exit', (code) => resolve(code)));
  const r = await rawRequest(client.socket, JSON.stringify({ v: 1, op: 'stop', args: {} }) + '\n') as any;
  t.equal(r.ok, true);
  t.equal(await exited, 0);
});
