/**
 * Bounded requests (docs/behaviour.md §28.2) with the real CLIs and daemon:
 * an array over max_array_tasks and a request over max_request_bytes are
 * refused with their words and leave nothing stored; a 10,000-task array
 * with a large environment is stored once (the database stays small),
 * survives a daemon restart, and its tasks still run with that
 * environment, their command and the right XLURM_ARRAY_* variables.
 */
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon } from '../helpers/daemon';

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-bnd-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('refused whole: nothing stored, the exact words', async (t) => {
  const d = await startDaemon(t);
  const dir = tempDir(t);
  const big = await d.run('xbatch', ['-g', '0', '-n', 'big', '--array', '0-10000', '--wrap', 'true']);
  t.not(big.code, 0);
  t.match(big.stderr, 'an array may have at most 10000 tasks (limit max_array_tasks)');
  const sweep = await d.run('xbatch', ['-g', '0', '--param', `a=${Array.from({ length: 101 }, (_, i) => i).join(',')}`, '--param', `b=${Array.from({ length: 100 }, (_, i) => i).join(',')}`, '--wrap', 'echo {a} {b}']);
  t.not(sweep.code, 0);
  t.match(sweep.stderr, 'an array may have at most 10000 tasks (limit max_array_tasks)', 'a --param product');
  // A script of 3.2M (an environment that large cannot reach a process: the kernel's own limits).
  const script = path.join(dir, 'huge.sh');
  fs.writeFileSync(script, `#!/bin/bash\n#${'x'.repeat(Math.round(3.2 * 1024 * 1024) - 14)}\ntrue\n`);
  const huge = await d.run('xbatch', ['-g', '0', script]);
  t.not(huge.code, 0);
  t.match(huge.stderr, /request too large: 3\.2M \(limit max_request_bytes 3M\)/);
  t.same(await d.jobs(), [], 'nothing stored');
  const ok = await d.run('xbatch', ['-g', '0', '--wrap', 'true']);
  t.equal(ok.code, 0, 'the daemon goes on serving');
});

t.test('a 10,000-task array with a large environment: stored once, survives a restart, each task its own', async (t) => {
  const d = await startDaemon(t, { maxRunning: 8 });
  // About 1 MiB of environment in eight variables (one variable may hold at most 128 KiB).
  const env: Record<string, string> = {};
  for (let k = 0; k < 8; k++) env[`PAD${k}`] = String(k).repeat(120 * 1024);
  env.PAD_TAIL = 'tail-ok';
  const r = await d.run('xbatch', ['-g', '0', '-n', 'big', '--hold', '--array', '0-9999', '--wrap',
    'echo "$XLURM_ARRAY_JOB_ID $XLURM_ARRAY_TASK_ID $XLURM_ARRAY_TASK_COUNT $XLURM_ARRAY_TASK_MIN $XLURM_ARRAY_TASK_MAX ${#PAD0} ${#PAD7} $PAD_TAIL"'], { env });
  t.equal(r.code, 0, r.stderr);
  const a = Number(r.stdout.trim());
  const db = path.join(d.home, 'xlurm.db');
  await d.stop();
  const bytes = ['', '-wal'].reduce((n, s) => n + (fs.existsSync(db + s) ? fs.statSync(db + s).size : 0), 0);
  t.ok(bytes < 64 * 1024 * 1024, `the store holds the environment once: ${(bytes / 2 ** 20).toFixed(1)} MiB for 10,000 tasks`);
  await d.start();
  const rows = await d.jobs();
  t.equal(rows.length, 10000, 'every task is back after the restart');
  t.ok(rows.every((j) => j.state === 'PENDING'));
  for (const id of [a, a + 4321, a + 9999]) {
    const rel = await d.run('xlurm', ['release', String(id)]);
    t.equal(rel.code, 0, rel.stderr);
  }
  for (const [id, index] of [[a, 0], [a + 4321, 4321], [a + 9999, 9999]] as const) {
    await d.waitState(id, 'COMPLETED', 30000);
    const out = (await d.run('xqueue', [String(id), '--log'])).stdout;
    t.equal(out, `${a} ${index} 10000 0 9999 ${120 * 1024} ${120 * 1024} tail-ok\n`, `task ${index}: its environment and variables`);
  }
  const j = await d.job(a + 5000);
  t.equal(j.spec.env.PAD_TAIL, 'tail-ok', 'a pending task reads its environment');
  t.same(j.array, { id: a, index: 5000, count: 10000 });
  const c = await d.run('xcancel', [String(a)]);
  t.equal(c.code, 0, c.stderr);
});
