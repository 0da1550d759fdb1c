// The daemon package's entry (main.ts): `daemon` and `clean`, their exit statuses and the
// `xlurm: …` lines of a start that fails; a daemon run in this process until stopped, with
// SIGHUP reloading its file.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { statePaths } from '@xlurm/protocol';
import { flockExclusive } from '@xlurm/native';
import { daemonMain } from '../../../packages/daemon/src/main';
import { request } from '../../../packages/cli/src/client';
import { waitFor } from '../../helpers/wait';

function home(t: { teardown(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-main-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Run daemonMain with XLURM_HOME = `h` and its stdout/stderr writes kept (tap reports on
 * stdout, so nothing is asserted until this resolves).
 */
async function run(h: string, argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const saved = { ...process.env };
  Object.assign(process.env, { XLURM_HOME: h, ...env });
  const out: string[] = [];
  const err: string[] = [];
  const ow = process.stdout.write;
  const ew = process.stderr.write;
  process.stdout.write = ((c: unknown) => { out.push(String(c)); return true; }) as typeof process.stdout.write;
  process.stderr.write = ((c: unknown) => { err.push(String(c)); return true; }) as typeof process.stderr.write;
  try {
    const code = await daemonMain(argv);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    process.stdout.write = ow;
    process.stderr.write = ew;
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

/** Signal handlers now (tap installs its own once its first test runs). */
const signalListeners = () => ({ SIGINT: process.listenerCount('SIGINT'), SIGTERM: process.listenerCount('SIGTERM'), SIGHUP: process.listenerCount('SIGHUP') });

t.test('usage: exit 2', async (t) => {
  const r = await run(home(t), ['frob']);
  t.equal(r.code, 2);
  t.match(r.stderr, /^usage: main\.js daemon \[--config FILE\] .* \| clean\n$/);
});

t.test('clean prints its line', async (t) => {
  const r = await run(home(t), ['clean']);
  t.same([r.code, r.stdout], [0, 'Removed 0 job log(s); daemon.log was already absent.\n']);
});

t.test('a start that fails: exit 1 and one xlurm: line per problem', async (t) => {
  const listeners = signalListeners();
  const h = home(t);
  const file = path.join(h, 'xlurm.toml');
  fs.writeFileSync(file, '[daemon]\nmax_running = 0\nbogus = true\n');
  let r = await run(h, ['daemon', '--backend', 'none', '--config', file]);
  t.equal(r.code, 1);
  const lines = r.stderr.split('\n');
  t.match(lines, [new RegExp(`^xlurm: ${file}:2: daemon\\.max_running: `), new RegExp(`^xlurm: ${file}:3: daemon\\.bogus: unknown key`), '']);
  r = await run(h, ['daemon', '--max-running', 'many']);
  t.same([r.code, r.stderr], [1, 'xlurm: invalid max-running: many\n'], 'an option error');
  fs.writeFileSync(file, '[daemon]\nexclude_device_ids = [3]\n');
  r = await run(h, ['daemon', '--backend', 'none', '--config', file]);
  t.same([r.code, r.stderr], [1, `xlurm: ${file}:2: daemon.exclude_device_ids: unknown device ID 3\n`], 'an id the file names');
  // The same home: the start that failed after taking daemon.lock let it go again.
  r = await run(h, ['daemon', '--backend', 'none', '--config', file, '--exclude-device-ids', '4']);
  t.same([r.code, r.stderr], [1, 'xlurm: unknown device ID in --exclude-device-ids: 4\n'], 'an id an option names');
  const fd = fs.openSync(statePaths(h).daemonLock, fs.constants.O_RDWR);
  t.teardown(() => fs.closeSync(fd));
  t.ok(flockExclusive(fd), 'a failed start leaves daemon.lock free');
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) t.equal(process.listenerCount(sig), listeners[sig], `no ${sig} handler left behind`);
});

t.test('a named vendor that cannot be discovered stops the start', async (t) => {
  const h = home(t);
  const file = path.join(h, 'xlurm.toml');
  fs.writeFileSync(file, '');
  const r = await run(h, ['daemon', '--backend', 'nvidia', '--config', file], { XLURM_NVML_LIBRARY: '/nonexistent/libnvidia-ml.so.1' });
  t.equal(r.code, 1);
  t.match(r.stderr, /^xlurm: nv discovery: cannot load library: \/nonexistent\/libnvidia-ml\.so\.1: /);
});

t.test('a second daemon on the same home is refused', async (t) => {
  const h = home(t);
  const file = path.join(h, 'xlurm.toml');
  fs.writeFileSync(file, '');
  const fd = fs.openSync(statePaths(h).daemonLock, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
  t.teardown(() => fs.closeSync(fd));
  t.ok(flockExclusive(fd));
  const r = await run(h, ['daemon', '--backend', 'none', '--config', file]);
  t.same([r.code, r.stderr], [1, 'xlurm: xlurm daemon is already running\n']);
});

t.test('serves until stopped; SIGHUP reloads the file; the socket and the lock are let go', async (t) => {
  const listeners = signalListeners();
  const h = home(t);
  const file = path.join(h, 'xlurm.toml');
  fs.writeFileSync(file, '[daemon]\nmax_running = 1\n');
  const running = run(h, ['daemon', '--backend', 'none', '--config', file]);
  const maxRunning = async () => {
    try { return (await request('config', {}, { home: h })).config.daemon.max_running; } catch { return undefined; }
  };
  const first = await waitFor(maxRunning, { what: 'the daemon answering', timeout: 10000 });
  fs.writeFileSync(file, '[daemon]\nmax_running = 2\n');
  process.kill(process.pid, 'SIGHUP');
  const second = await waitFor(async () => ((await maxRunning()) === 2 ? 2 : undefined), { what: 'the SIGHUP reload', timeout: 10000 });
  await request('stop', {}, { home: h });
  const r = await running;
  t.same([first, second], [1, 2]);
  t.equal(r.code, 0);
  t.notOk(fs.existsSync(statePaths(h).socket), 'socket removed');
  const fd = fs.openSync(statePaths(h).daemonLock, fs.constants.O_RDWR);
  t.teardown(() => fs.closeSync(fd));
  t.ok(flockExclusive(fd), 'daemon.lock is free');
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) t.equal(process.listenerCount(sig), listeners[sig], `no ${sig} handler left behind`);
});
