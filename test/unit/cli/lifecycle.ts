import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULTS } from '../../../packages/cli/src/daemon-options';
import { daemonEntry, daemonLockFree, exitStatusText, resetNice, restartDaemon, startDaemon } from '../../../packages/cli/src/lifecycle';
import { fakeDaemon, tempDir } from './fake-daemon';

t.test('exit statuses read like Rust ExitStatus', async (t) => {
  t.equal(exitStatusText(1, null), 'exit status: 1');
  t.equal(exitStatusText(0, null), 'exit status: 0');
  t.equal(exitStatusText(null, 'SIGKILL'), 'signal: 9 (SIGKILL)');
  t.equal(exitStatusText(null, 'SIGTERM'), 'signal: 15 (SIGTERM)');
});

t.test('start: a daemon that answers means nothing to do, whatever the options', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply({ version: '0.1.0' }));
  t.equal(await startDaemon(d.home, { ...DEFAULTS, maxRunning: 0, backend: 'nvidia' }), 'xlurm is already running');
  t.same(d.requests.map((r) => r.op), ['status']);
});

t.test('start: --max-running 0 is refused before the state directory is touched', async (t) => {
  const home = path.join(tempDir(t), 'home');
  await t.rejects(startDaemon(home, { ...DEFAULTS, maxRunning: 0 }), { name: 'CliError', message: 'max-running must be positive' });
  t.notOk(fs.existsSync(home));
});

t.test('the daemon entry is the daemon package', async (t) => {
  t.match(daemonEntry(), /packages[/\\]daemon[/\\]dist[/\\]main\.js$/);
});

let nativeOk = true;
try { require('@xlurm/native').native(); } catch { nativeOk = false; }

t.test('daemon.lock probe', { skip: nativeOk ? false : 'native addon not built' }, async (t) => {
  const { flockExclusive } = require('@xlurm/native');
  const home = tempDir(t);
  t.ok(daemonLockFree(home), 'free (and created)');
  t.equal(fs.statSync(path.join(home, 'daemon.lock')).mode & 0o777, 0o600);
  const fd = fs.openSync(path.join(home, 'daemon.lock'), 'r+');
  t.ok(flockExclusive(fd));
  t.notOk(daemonLockFree(home), 'held by another open file description');
  fs.closeSync(fd);
  t.ok(daemonLockFree(home), 'free again once the holder is gone');
});

t.test('restart: a refusal is reported and nothing is started', async (t) => {
  const d = await fakeDaemon(t, (c) => c.refuse('JOBS_RUNNING', 'cannot restart while jobs are running: 3, 4'));
  await t.rejects(restartDaemon(d.home, DEFAULTS), { message: 'cannot restart while jobs are running: 3, 4' });
  t.same(d.requests.map((r) => r.op), ['restart']);
});

t.test('restart: after ok, waits for daemon.lock, then starts (already running here)', { skip: nativeOk ? false : 'native addon not built' }, async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply(c.req.op === 'status' ? { version: '0.1.0' } : {}));
  t.equal(await restartDaemon(d.home, DEFAULTS), 'xlurm is already running');
  t.same(d.requests.map((r) => r.op), ['restart', 'status']);
});

t.test('the background daemon starts at nice 0 when root can set it', async (t) => {
  const set: number[] = [];
  resetNice(0, (p) => set.push(p));
  t.same(set, [0], 'root: nice 0, so jobs do not inherit the shell\'s nice');
  resetNice(1000, (p) => set.push(p));
  t.same(set, [0], 'anyone else cannot lower it: left alone');
  t.doesNotThrow(() => resetNice(0, () => { throw Object.assign(new Error('EACCES'), { code: 'EACCES' }); }), 'a refusal does not stop the start');
});
