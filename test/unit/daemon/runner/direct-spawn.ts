// The fallback start path (runner/direct-spawn.ts): a supervisor spawned by the daemon itself,
// in a new session with an empty environment and cwd "/", answered like the launcher: onSpawned
// once (a pid, or an error and nothing started), then onExit once it is reaped. Both ways of
// spawning: the addon's posix_spawn (where pidfds exist) and child_process (the addon says no).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as native from '@xlurm/native';
import type { LaunchCallbacks } from '../../../../packages/daemon/src/runner/launcher';
import type * as DirectSpawn from '../../../../packages/daemon/src/runner/direct-spawn';
import { waitFor } from '../../../helpers/wait';

const MODULE = '../../../../packages/daemon/src/runner/direct-spawn';

/** What the callbacks were told, in order. */
function recorder() {
  const events: Array<['spawned', NodeJS.ErrnoException | null, number] | ['exit']> = [];
  const cb: LaunchCallbacks = {
    onSpawned: (err, pid) => { events.push(['spawned', err, pid]); },
    onExit: () => { events.push(['exit']); },
  };
  return { events, cb };
}

const devNull = () => { const fd = fs.openSync('/dev/null', 'r+'); return [fd, fd, fd, fd] as [number, number, number, number]; };

const ways: Array<[string, () => typeof DirectSpawn, string | false]> = [
  ['posix_spawn', () => require(MODULE) as typeof DirectSpawn, native.canSpawnSupervisor() ? false : 'no pidfd here'],
  ['child_process', () => t.mockRequire(MODULE, { '@xlurm/native': { ...native, canSpawnSupervisor: () => false } }) as typeof DirectSpawn, false],
];

for (const [way, load, skip] of ways) {
  t.test(way, { skip }, async (t) => {
    const { spawnDirect } = load();
    const dir = t.testdir();
    // A stand-in supervisor: says where it runs, then waits to be signalled.
    const stepd = path.join(dir, 'stepd');
    fs.writeFileSync(stepd, `#!/bin/sh\npwd > ${dir}/cwd.tmp && /bin/mv ${dir}/cwd.tmp ${dir}/cwd\nexec /bin/sleep 600\n`, { mode: 0o755 });

    await t.test('started: the pid once, then the exit once; a signal reaches it', async (t) => {
      const { events, cb } = recorder();
      const fds = devNull();
      const s = spawnDirect(stepd, fds, cb);
      fs.closeSync(fds[0]); // copied before spawnDirect returned
      t.ok(s, 'a handle to signal it');
      s!.signal('SIGTERM'); // before the pid may be known: delivered once it is
      await waitFor(() => events.some((e) => e[0] === 'exit'), { what: 'the supervisor reaped' });
      t.equal(events.length, 2);
      t.match(events[0], ['spawned', null, Number]);
      t.ok((events[0] as [string, null, number])[2] > 0, 'a pid');
      t.same(events[1], ['exit']);
    });

    await t.test('its session, environment and working directory', async (t) => {
      const { events, cb } = recorder();
      const fds = devNull();
      const s = spawnDirect(stepd, fds, cb)!;
      fs.closeSync(fds[0]);
      await waitFor(() => fs.existsSync(path.join(dir, 'cwd')) && events.length > 0, { what: 'the stand-in running, and its pid' });
      const pid = (events[0] as [string, null, number])[2];
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      // Left out: PWD, which the stand-in's shell exports to the sleep it execs, and what tap's
      // process-info hook adds to every child_process spawn (_TAPJS_ variables, its NODE_OPTIONS).
      const tapHook = (kv: string) => kv.startsWith('_TAPJS_') || (kv.startsWith('NODE_OPTIONS=') && kv.includes('@tapjs/processinfo'));
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter((kv) => kv && !tapHook(kv) && !kv.startsWith('PWD='));
      s.signal('SIGKILL');
      await waitFor(() => events.some((e) => e[0] === 'exit'), { what: 'the supervisor reaped' });
      t.equal(Number(stat[3]), pid, 'a session of its own');
      t.equal(fs.readFileSync(path.join(dir, 'cwd'), 'utf8'), '/\n');
      t.same(environ, [], 'an empty environment');
      fs.rmSync(path.join(dir, 'cwd'));
    });

    await t.test('a supervisor that cannot be spawned: an error and no pid, never an exit', async (t) => {
      const { events, cb } = recorder();
      const fds = devNull();
      const s = spawnDirect(path.join(dir, 'no-such-stepd'), fds, cb);
      fs.closeSync(fds[0]);
      await waitFor(() => events.length > 0, { what: 'the answer' });
      await new Promise((r) => setImmediate(r));
      t.equal(events.length, 1);
      t.match(events[0], ['spawned', { code: 'ENOENT' }, 0]);
      s?.signal('SIGTERM'); // nothing to signal: no throw
    });
  });
}
