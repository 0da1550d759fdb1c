// `xqueue --watch` and `xinfo --watch` in a real pseudo-terminal (python3's pty module drives the
// CLI): the table redrawn in place every 2 s like watch(1), and Ctrl-C leaving the terminal clean.
import t from 'tap';
import * as path from 'node:path';
import { nodeCommand, runProcess, startDaemon, type Daemon } from '../helpers/daemon';
import { ROOT } from '../helpers/env';

const DRIVE = path.join(ROOT, 'test', 'fixtures', 'pty', 'drive.py');
const CLEAR = '\x1b[H\x1b[2J';

async function drive(d: Daemon, bin: string, args: string[], redraws: number): Promise<{ out: string; status: number }> {
  const [cmd, argv] = nodeCommand([path.join(d.cliBin, bin), ...args]);
  const r = await runProcess('python3', [DRIVE, String(redraws), JSON.stringify([cmd, ...argv])], { env: d.env, cwd: d.defaultCwd(), timeout: 40000 });
  if (r.code !== 0) throw new Error(`drive.py: ${r.code} ${r.stderr}`);
  return JSON.parse(r.stdout) as { out: string; status: number };
}

t.test('redrawn in place every 2 s; Ctrl-C restores the cursor and ends the line', async (t) => {
  const d = await startDaemon(t);
  const job = await d.batch('sleep 30', ['-g', '0']);
  t.teardown(async () => { await d.run('xcancel', [String(job)]); });
  const t0 = Date.now();
  const q = await drive(d, 'xqueue', ['--watch'], 2);
  t.ok(Date.now() - t0 >= 2000, 'the second screen came after the interval');
  t.equal(q.status, 0, 'Ctrl-C ends the watch with status 0');
  const screens = q.out.split(CLEAR);
  t.ok(screens.length >= 3, `two screens at least (${screens.length - 1})`);
  t.ok(screens[0]!.startsWith('\x1b[?25l'), 'the cursor is hidden while watching');
  for (const s of screens.slice(1, 3)) {
    t.match(s, /^Every 2\.0s: xqueue  \S+: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/, 'a header line');
    t.match(s, /\r\n\r\nJOB +USER +STATE/, 'then a blank line and the table');
    t.match(s, new RegExp(`\\r\\n${job} +\\S+ +RUNNING`), 'with the running job');
  }
  t.ok(q.out.endsWith('\x1b[?25h\r\n'), 'the cursor is shown again and the prompt gets its own line');

  const i = await drive(d, 'xinfo', ['--watch'], 1);
  t.equal(i.status, 0);
  t.match(i.out, /Every 2\.0s: xinfo  /);
  t.match(i.out, /DEVICE +STATUS +JOB +NAME/);
  t.ok(i.out.endsWith('\x1b[?25h\r\n'));

  const bad = await d.run('xqueue', ['--watch', '--json']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /the argument '--watch' cannot be used with '--json'/);
});

t.test('a daemon that goes away shows its error in place and the watch goes on', async (t) => {
  const d = await startDaemon(t);
  await d.stop();
  const q = await drive(d, 'xqueue', ['--watch'], 2);
  t.equal(q.status, 0);
  t.match(q.out.split(CLEAR)[2] ?? '', /xlurm: xlurm is not running/);
});
