// `xlurm restart` (cli/src/commands/restart.ts): the configuration file is checked before the
// old daemon is asked to stop, so a bad file never leaves the host without a scheduler.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { main } from '../../../../packages/cli/src/main';
import { capture, fakeDaemon, tempDir, withHome } from '../fake-daemon';

let nativeOk = true;
try { require('@xlurm/native').native(); } catch { nativeOk = false; }

t.test('a bad named file: its problems, exit 1, and the running daemon is not stopped', async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply({}));
  const bad = path.join(tempDir(t), 'bad.toml');
  fs.writeFileSync(bad, '[daemon]\nmax_running = "many"\n');
  const r = await withHome(d.home, () => capture(() => main('xlurm', ['restart', '--config', bad])));
  t.equal(r.value, 1);
  t.match(r.stderr, new RegExp(`^xlurm: ${bad}:2: daemon\\.max_running: `));
  t.same(d.requests, [], 'no restart request');
});

t.test('a good file: restart, wait for the lock, start (the fake still answers: already running)', { skip: nativeOk ? false : 'native addon not built' }, async (t) => {
  const d = await fakeDaemon(t, (c) => c.reply(c.req.op === 'status' ? { version: '0.1.0' } : {}));
  const good = path.join(tempDir(t), 'good.toml');
  fs.writeFileSync(good, '[daemon]\nmax_running = 2\n');
  const r = await withHome(d.home, () => capture(() => main('xlurm', ['restart', '--config', good])));
  t.same([r.value, r.stdout, r.stderr], [0, 'xlurm is already running\n', '']);
  t.same(d.requests.map((q) => q.op), ['restart', 'status']);
});

t.test("the daemon's refusal: exit 1, nothing started", async (t) => {
  const d = await fakeDaemon(t, (c) => c.refuse('JOBS_RUNNING', 'cannot restart while jobs are running: 3'));
  const good = path.join(tempDir(t), 'good.toml');
  fs.writeFileSync(good, '');
  const r = await withHome(d.home, () => capture(() => main('xlurm', ['restart', '--config', good])));
  t.same([r.value, r.stderr], [1, 'xlurm: cannot restart while jobs are running: 3\n']);
  t.same(d.requests.map((q) => q.op), ['restart']);
});

t.test('no positional arguments', async (t) => {
  const r = await capture(() => main('xlurm', ['restart', 'now']));
  t.equal(r.value, 2);
  t.match(r.stderr, /^error: unexpected argument 'now' found\n/);
});
