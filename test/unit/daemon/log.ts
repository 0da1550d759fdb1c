import t from 'tap';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const LOG = path.resolve(__dirname, '../../../packages/daemon/dist/log.js');

/** Run `code` (with logLine in scope) in a fresh node whose stderr is the descriptor `stderr`. */
function run(code: string, stderr: number) {
  return spawnSync(process.execPath, ['-e', `const { logLine } = require(${JSON.stringify(LOG)}); ${code}`], {
    stdio: ['ignore', 'pipe', stderr], encoding: 'utf8', timeout: 20000,
  });
}

t.test('a log line that cannot be written does not end the daemon', { skip: !fs.existsSync('/dev/full') && 'no /dev/full' }, async (t) => {
  const full = fs.openSync('/dev/full', 'w'); // every write fails with ENOSPC, like daemon.log on a full disk
  t.teardown(() => fs.closeSync(full));
  // `alive` after a turn of the event loop: a write error reported asynchronously would have ended it first.
  const r = run(`logLine('one'); logLine('two'); setImmediate(() => console.log('alive'));`, full);
  t.equal(r.status, 0);
  t.equal(r.stdout, 'alive\n');
});

t.test('lines go to a daemon.log file with a UTC timestamp', async (t) => {
  const file = path.join(t.testdir(), 'daemon.log');
  const fd = fs.openSync(file, 'a');
  const r = run(`logLine('first'); logLine('second');`, fd);
  fs.closeSync(fd);
  t.equal(r.status, 0);
  t.match(fs.readFileSync(file, 'utf8'), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z first\n\S+ second\n$/);
});
