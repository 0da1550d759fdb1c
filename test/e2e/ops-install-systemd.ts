// install.sh's systemd path (--systemd), with a stand-in systemctl
// (test/fixtures/fake-systemctl) because systemd is not PID 1 here: the unit
// is installed and enabled, --start and an idle re-run start the daemon
// through `systemctl start` (the stand-in runs the unit's ExecStart with its
// EnvironmentFile), and --uninstall disables and removes the unit.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from '../helpers/env';
import { rawRequest, runProcess, type RunResult } from '../helpers/daemon';
import { pidAlive, waitFor } from '../helpers/wait';

t.setTimeout(600_000); // three runs of install.sh on a busy 2-core machine

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-sysd-'));
const prefix = path.join(dir, 'prefix');
const home = path.join(dir, 'home');
const envFile = path.join(dir, 'etc', 'xlurm');
const unitDir = path.join(dir, 'units');
const log = path.join(dir, 'systemctl.log');
const socket = path.join(home, 'xlurm.sock');

function install(args: string[]): Promise<RunResult> {
  return runProcess(path.join(ROOT, 'install.sh'), ['--systemd', ...args], {
    cwd: ROOT, timeout: 300_000,
    env: {
      PATH: `${path.join(ROOT, 'test', 'fixtures', 'fake-systemctl')}:${process.env.PATH}`, HOME: process.env.HOME ?? '/root', LANG: 'C.UTF-8',
      PREFIX: prefix, XLURM_HOME: home, XLURM_ENV_FILE: envFile, XLURM_INSTALL_SKIP_BUILD: '1',
      SYSTEMD_UNIT_DIR: unitDir, FAKE_SYSTEMCTL_LOG: log,
    },
  });
}
const calls = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);
async function status(): Promise<any> {
  const r = await rawRequest(socket, JSON.stringify({ v: 1, op: 'status', args: {} }) + '\n') as any;
  if (!r.ok) throw new Error(JSON.stringify(r));
  return r.result;
}

t.teardown(async () => {
  try {
    const st = await status();
    await rawRequest(socket, JSON.stringify({ v: 1, op: 'stop', args: {} }) + '\n');
    await waitFor(() => !pidAlive(st.pid), { what: 'daemon exit' });
  } catch { /* no daemon left */ }
  fs.rmSync(dir, { recursive: true, force: true });
});

let pid0 = 0;

t.test('--start installs and enables the unit and starts it through systemctl', async (t) => {
  const r = await install(['--start', '--backend', 'none']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^systemd: xlurm\.service installed and enabled at boot$/m);
  t.match(r.stdout, /^xlurm started \(systemd unit xlurm\.service\)$/m);
  t.same(calls(), ['daemon-reload', 'enable xlurm.service', 'start xlurm.service']);
  const unit = fs.readFileSync(path.join(unitDir, 'xlurm.service'), 'utf8');
  t.equal(unit, fs.readFileSync(path.join(prefix, 'lib', 'xlurm', 'share', 'systemd', 'xlurm.service'), 'utf8'), 'the rendered unit is installed');
  t.match(unit, `\nEnvironmentFile=-${envFile}\n`);
  const st = await status();
  t.equal(st.backend, 'none', 'the unit took its options from the settings file');
  pid0 = st.pid;
});

t.test('an idle re-run restarts the daemon through systemctl', async (t) => {
  fs.writeFileSync(log, '');
  const r = await install([]);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, `Restarting: stopped the xlurm 0.1.0 daemon (pid ${pid0})`);
  t.match(r.stdout, /^xlurm started \(systemd unit xlurm\.service\)$/m);
  t.same(calls(), ['daemon-reload', 'enable xlurm.service', 'start xlurm.service']);
  const st = await status();
  t.not(st.pid, pid0);
  t.notOk(pidAlive(pid0));
});

t.test('--uninstall stops the daemon, disables and removes the unit', async (t) => {
  const pid = (await status()).pid;
  fs.writeFileSync(log, '');
  const r = await install(['--uninstall']);
  t.equal(r.code, 0, r.stderr);
  t.same(calls(), ['disable --now xlurm.service', 'daemon-reload']);
  t.notOk(fs.existsSync(path.join(unitDir, 'xlurm.service')));
  t.notOk(pidAlive(pid));
  t.ok(fs.existsSync(path.join(home, 'xlurm.db')), 'the state stays');
});
