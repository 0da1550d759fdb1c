// install.sh into a temporary PREFIX, state directory and settings file
// (--no-systemd; the build of this checkout is reused): a fresh install, a
// re-run while a job runs (files installed, daemon and jobs left alone), a
// re-run once idle (daemon restarted on the new release, queue and settings
// kept), --uninstall (state kept, running jobs finish) and --purge.
// One installation is shared by the steps, which run in order.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from '../helpers/env';
import { rawRequest, runProcess, type RunResult } from '../helpers/daemon';
import { ensureTool } from '../helpers/tools';
import { pidAlive, waitFor } from '../helpers/wait';
import { skip } from '../helpers/tap';

t.setTimeout(900_000); // five runs of install.sh on a busy 2-core machine

const PROGRAMS = ['xlurm', 'xrun', 'xbatch', 'xqueue', 'xcancel', 'xinfo'];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-inst-'));
const prefix = path.join(dir, 'prefix');
const home = path.join(dir, 'home');
const envFile = path.join(dir, 'etc', 'default', 'xlurm');
/** Beside a settings file given with XLURM_ENV_FILE, never the host's /etc/xlurm/xlurm.toml. */
const configFile = path.join(dir, 'etc', 'default', 'xlurm.toml');
const link = path.join(prefix, 'lib', 'xlurm');
const socket = path.join(home, 'xlurm.sock');
const markers = { a: path.join(dir, 'go-a'), c: path.join(dir, 'go-c') };

const baseEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8', TZ: 'UTC' };

function install(args: string[]): Promise<RunResult> {
  return runProcess(path.join(ROOT, 'install.sh'), args, {
    cwd: ROOT, timeout: 300_000,
    env: { ...baseEnv, PREFIX: prefix, XLURM_HOME: home, XLURM_ENV_FILE: envFile, XLURM_INSTALL_SKIP_BUILD: '1' },
  });
}
/** An installed command, as a user runs it. */
const cli = (bin: string, args: string[]) =>
  runProcess(path.join(prefix, 'bin', bin), args, { cwd: dir, env: { ...baseEnv, XLURM_HOME: home } });

async function status(): Promise<any> {
  const r = await rawRequest(socket, JSON.stringify({ v: 1, op: 'status', args: {} }) + '\n') as any;
  if (!r.ok) throw new Error(JSON.stringify(r));
  return r.result;
}
async function jobs(): Promise<Map<number, string>> {
  const r = await cli('xqueue', ['--all', '--json']);
  if (r.code !== 0) throw new Error(r.stderr);
  return new Map((JSON.parse(r.stdout) as any[]).map((j) => [j.id, j.state]));
}
const stateOf = async (id: number) => (await jobs()).get(id);
async function batch(cmd: string): Promise<number> {
  const r = await cli('xbatch', ['-g', '0', '--wrap', cmd]);
  if (r.code !== 0) throw new Error(`xbatch: ${r.stderr}`);
  return Number(r.stdout.trim());
}
const waitMarker = (m: string) => `while [ ! -e ${m} ]; do sleep 0.05; done`;
const release = () => fs.readlinkSync(link);
/** Does process `pid` run code from directory `d` (its maps name files under it)? */
const runsFrom = (pid: number, d: string) => fs.readFileSync(`/proc/${pid}/maps`, 'utf8').includes(fs.realpathSync(d) + '/');

t.teardown(async () => {
  for (const m of Object.values(markers)) fs.writeFileSync(m, '');
  try {
    const st = await status();
    await rawRequest(socket, JSON.stringify({ v: 1, op: 'stop', args: {} }) + '\n');
    await waitFor(() => !pidAlive(st.pid), { what: 'daemon exit' });
  } catch { /* no daemon left */ }
  fs.rmSync(dir, { recursive: true, force: true });
});

let pid0 = 0;
let release0 = '';
let jobA = 0;
let jobB = 0;

t.test('fresh install: commands, man pages, completions, settings, unit, started daemon', async (t) => {
  const r = await install(['--no-systemd', '--start', '--backend', 'none', '--max-running', '1']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, `Installed xlurm 0.1.0 into ${prefix}`);
  t.match(r.stdout, `settings ${envFile} (created); state ${home}`);
  t.match(r.stdout, /^xlurm started$/m);

  for (const p of PROGRAMS) {
    const bin = path.join(prefix, 'bin', p);
    t.equal(fs.readlinkSync(bin), `../lib/xlurm/packages/cli/bin/${p}`);
    t.equal((await cli(p, ['--version'])).stdout, `${p} 0.1.0\n`);
    t.ok(fs.existsSync(path.join(prefix, 'share', 'man', 'man1', `${p}.1`)), `man page ${p}.1`);
    t.ok(fs.existsSync(path.join(prefix, 'share', 'bash-completion', 'completions', p)), `bash completion for ${p}`);
  }
  t.ok(fs.existsSync(path.join(prefix, 'share', 'zsh', 'site-functions', '_xlurm')), 'zsh completion');
  t.match(release(), /^xlurm-releases\/0\.1\.0-\d{8}T\d{6}Z-\d+$/, 'lib/xlurm points at a versioned release');

  const settings = fs.readFileSync(envFile, 'utf8');
  t.match(settings, new RegExp(`^XLURM_HOME=${home}$`, 'm'));
  t.match(settings, /^XLURM_DAEMON_OPTS="--backend none --max-running 1 --retention 7d"$/m, 'seeded from the install options');
  t.equal(fs.statSync(envFile).mode & 0o777, 0o644);
  t.match(settings, new RegExp(`^XLURM_CONFIG=${configFile}$`, 'm'), 'the daemon is told where its configuration file is');
  t.match(r.stdout, `Configuration file ${configFile} (created)`);
  const config = fs.readFileSync(configFile, 'utf8');
  t.match(config, /^\[daemon\]\n(?:#.*\n|\n)*#backend = "auto"$/m, 'every key commented out, at its default');
  t.match(config, /^#max_running = 32$/m);
  t.equal(fs.statSync(configFile).mode & 0o777, 0o644);
  const check = await cli('xlurm', ['config', 'check', configFile]);
  t.same([check.code, check.stdout], [0, `${configFile}: ok\n`], 'the installed file is valid');

  const unitFile = path.join(link, 'share', 'systemd', 'xlurm.service');
  const unit = fs.readFileSync(unitFile, 'utf8');
  t.match(unit, `\nExecStart=${process.execPath} ${prefix}/bin/xlurm daemon $XLURM_DAEMON_OPTS\n`);
  t.match(unit, `\nEnvironmentFile=-${envFile}\n`);
  const missing = ensureTool('systemd-analyze', 'systemd');
  if (missing) skip(t, `systemd-analyze unavailable: ${missing}`);
  else {
    // Also checks that Documentation=man:xlurm(1) resolves, against the installed pages.
    const v = spawnSync('systemd-analyze', ['verify', unitFile], { encoding: 'utf8', env: { ...process.env, MANPATH: path.join(prefix, 'share', 'man') } });
    t.equal(v.status, 0, v.stderr);
    t.equal(v.stderr.trim(), '', 'the rendered unit passes systemd-analyze verify without warnings');
  }

  const st = await status();
  t.equal(st.backend, 'none', 'the daemon runs with the settings file');
  t.equal(st.max_running, 1);
  const shown = JSON.parse((await cli('xlurm', ['config', 'show', '--json'])).stdout);
  t.same([shown.file, shown.found], [configFile, true], 'and reads the installed configuration file');
  t.ok(runsFrom(st.pid, link), 'from the installed release');
  const run = await cli('xrun', ['-g', '0', 'echo', 'hello']);
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stdout, 'hello\n');
  pid0 = st.pid;
  release0 = release();
});

t.test('re-run while a job runs: new files, but the daemon and its jobs are left alone', async (t) => {
  fs.appendFileSync(envFile, '# a local note\n');
  const settings = fs.readFileSync(envFile, 'utf8');
  fs.appendFileSync(configFile, '# a local note\n');
  const config = fs.readFileSync(configFile, 'utf8');
  jobA = await batch(`echo A started; ${waitMarker(markers.a)}; echo A done`);
  await waitFor(async () => (await stateOf(jobA)) === 'RUNNING', { what: 'job A running' });
  jobB = await batch('echo B');
  t.equal(await stateOf(jobB), 'PENDING', 'max-running 1 keeps B pending');

  const r = await install(['--no-systemd', '--backend', 'nvidia']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stderr, `${envFile} exists and was kept`);
  t.match(r.stdout, `Jobs are running (cannot restart while jobs are running: ${jobA})`);
  t.match(r.stdout, 'Re-run ./install.sh once no job is running');
  t.notMatch(r.stdout, /Restarting|xlurm started/);

  const st = await status();
  t.equal(st.pid, pid0, 'the daemon was not restarted');
  t.not(release(), release0, 'the new release is current');
  t.ok(fs.existsSync(path.join(prefix, 'lib', release0)), 'the running daemon\'s release stays');
  t.ok(runsFrom(pid0, path.join(prefix, 'lib', release0)), 'and the daemon still runs from it');
  t.equal(fs.readFileSync(envFile, 'utf8'), settings, 'the settings file is never overwritten');
  t.equal(fs.readFileSync(configFile, 'utf8'), config, 'nor the configuration file');
  t.match(r.stdout, `Configuration file ${configFile} (kept)`);
  t.equal(await stateOf(jobA), 'RUNNING');
  t.equal(await stateOf(jobB), 'PENDING');

  fs.writeFileSync(markers.a, '');
  await waitFor(async () => (await stateOf(jobA)) === 'COMPLETED' && (await stateOf(jobB)) === 'COMPLETED',
    { timeout: 30000, what: 'A completes, then B runs on the same daemon' });
  t.equal((await cli('xqueue', [String(jobA), '--log'])).stdout, 'A started\nA done\n', 'the job survived the install');
  t.equal((await status()).pid, pid0);
});

t.test('re-run once idle: the daemon restarts on the new release; queue and settings kept', async (t) => {
  const before = release();
  const r = await install(['--no-systemd']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, `Restarting: stopped the xlurm 0.1.0 daemon (pid ${pid0})`);
  t.match(r.stdout, /^xlurm started$/m);
  t.notOk(pidAlive(pid0), 'the old daemon is gone');
  const st = await status();
  t.not(st.pid, pid0);
  t.ok(runsFrom(st.pid, link), 'the new daemon runs from the current release');
  t.equal(st.backend, 'none', 'settings kept');
  t.equal(st.max_running, 1);
  t.notOk(fs.existsSync(path.join(prefix, 'lib', release0)), 'the first release, now unused, was removed');
  t.ok(fs.existsSync(path.join(prefix, 'lib', before)), 'the previous release is kept');
  const all = await jobs();
  t.equal(all.get(jobA), 'COMPLETED', 'queue kept');
  t.equal(all.get(jobB), 'COMPLETED');
  const run = await cli('xrun', ['-g', '0', 'true']);
  t.equal(run.code, 0, run.stderr);
});

t.test('--uninstall stops the daemon and removes the programs; state, settings and running jobs stay', async (t) => {
  const pid = (await status()).pid;
  const jobC = await batch(waitMarker(markers.c));
  await waitFor(async () => (await stateOf(jobC)) === 'RUNNING', { what: 'job C running' });
  // The administrator's own file in a directory install.sh made: it and its directory stay.
  fs.writeFileSync(path.join(prefix, 'bin', 'local-tool'), '#!/bin/sh\n');
  const r = await install(['--uninstall', '--no-systemd']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, `kept the state directory ${home} and the settings ${envFile}`);
  t.notOk(pidAlive(pid), 'the daemon stopped');
  for (const p of PROGRAMS) {
    t.notOk(fs.existsSync(path.join(prefix, 'bin', p)), `${p} removed`);
    t.notOk(fs.existsSync(path.join(prefix, 'share', 'man', 'man1', `${p}.1`)));
    t.notOk(fs.existsSync(path.join(prefix, 'share', 'bash-completion', 'completions', p)));
  }
  t.notOk(fs.existsSync(path.join(prefix, 'share', 'zsh', 'site-functions', '_xlurm')));
  t.notOk(fs.existsSync(link));
  t.notOk(fs.existsSync(path.join(prefix, 'lib', 'xlurm-releases')));
  t.notOk(fs.existsSync(path.join(prefix, 'lib')), 'the directories it made, once empty');
  t.notOk(fs.existsSync(path.join(prefix, 'share')));
  t.ok(fs.existsSync(path.join(prefix, 'bin', 'local-tool')), 'nothing it did not install');
  t.ok(fs.existsSync(path.join(home, 'xlurm.db')), 'the queue stays');
  t.ok(fs.existsSync(envFile), 'the settings stay');
  t.ok(fs.existsSync(configFile), 'the configuration file stays');

  const purge = await install(['--uninstall', '--purge', '--no-systemd']);
  t.equal(purge.code, 1, 'no purge while a job runs');
  t.match(purge.stderr, `not purging: job ${jobC}.lock is still running`);
  t.ok(fs.existsSync(home));
  fs.writeFileSync(markers.c, '');
  // Job C finishes without a daemon: its supervisor writes the result and drops its lock.
  const lock = path.join(home, 'jobs', `${jobC}.lock`);
  await waitFor(() => fs.existsSync(path.join(home, 'jobs', `${jobC}.result`)) && spawnSync('flock', ['-n', lock, 'true']).status === 0,
    { what: 'job C finishing without a daemon' });
});

t.test('--purge also removes the state directory and the settings', async (t) => {
  const r = await install(['--uninstall', '--purge', '--no-systemd']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, `Removed xlurm from ${prefix}, its state directory ${home} and its settings ${envFile}`);
  t.notOk(fs.existsSync(home));
  t.notOk(fs.existsSync(envFile));
  t.notOk(fs.existsSync(configFile));
  t.notOk(fs.existsSync(path.join(dir, 'etc')), 'the directories it made for the settings');
  t.same(fs.readdirSync(prefix), ['bin'], 'of PREFIX only what holds the administrator\'s own file');
  t.same(fs.readdirSync(path.join(prefix, 'bin')), ['local-tool']);
  t.ok(fs.existsSync(dir), 'nor a directory it did not make');
  fs.rmSync(path.join(prefix, 'bin', 'local-tool'));
});
