// The benchmarks reach into the daemon's modules (the schedule measure drives a real Core and
// Store): a change there must not leave `npm run bench` broken. This runs the quick measures
// that need no competitor and no timing, and checks only that each produced its rows, never
// how fast anything was (benchmarks are not tests).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';

const ROOT = path.resolve(__dirname, '../../..');

t.test('bench: the schedule measure runs against the current daemon code', async (t) => {
  const out = path.join(t.testdirName, 'rows.json');
  fs.mkdirSync(t.testdirName, { recursive: true });
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', 'run.js'), 'schedule', '--quick', '--no-competitors', '--json', out],
    { encoding: 'utf8', timeout: 120000 });
  t.equal(r.status, 0, `exit 0 (stderr: ${r.stderr.slice(-400)})`);
  const rows = (JSON.parse(fs.readFileSync(out, 'utf8')) as { rows: Array<{ measure: string; value: unknown }> }).rows;
  t.same(rows.map((row) => row.measure), [
    'schedule() 10k pending, 8 free, -g 1 each',
    'schedule() 10k pending, 3 free, -g 4 each',
    'schedule() 10k pending, reserve, 3 free, -g 1/2/4/8',
    'schedule() 10k pending, reserve, groups 0-3;4-7 required, 3 free, -g 1/2/4/8',
    'daemon pass 10k pending, 8 free (8 start)',
    'daemon pass 10k pending, reserve, 8 free (8 start)',
    'daemon pass 10k pending, none free',
    'schedule() 10k pending of 100 users, fair share + limits, 8 free, -g 1 each',
    'schedule() 10k pending of 100 users, fair share + limits, 3 free, -g 4 each',
    'daemon pass 10k pending of 100 users, fair share + limits, 8 free (8 start)',
    'daemon pass 10k pending of 100 users, fair share + limits, none free',
    'daemon pass 10k pending of 100 users, fair share + limits, 3 free, -g 4 each',
    "daemon pass 10k pending of 100 users, fair share, 8 free, every job over its user's device limit (all merged and admitted)",
    'schedule() 1,000 pending slice requests, 8 empty cards (packed until full)',
    'schedule() 1,000 pending slice requests, 8 full cards (none fits)',
  ], 'every row, none of them FAILED');
});
