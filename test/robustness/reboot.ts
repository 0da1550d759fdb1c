/**
 * After a reboot (power loss) a RUNNING job without a lock file is not
 * trusted to have never run: its lock file's directory entry may simply not
 * have reached the disk. Only a restart within the same boot requeues it.
 */
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { startDaemon } from '../helpers/daemon';

t.test('a RUNNING job with no lock file after a reboot fails; it is never run', async (t) => {
  const d = await startDaemon(t, { maxRunning: 1 });
  const marker = path.join(path.dirname(d.home), 'ran');
  const blocker = await d.batch('sleep 300', ['-g', '0']);
  await d.waitState(blocker, 'RUNNING');
  const p = await d.batch(`echo "$XLURM_JOB_ID" >> ${marker}`, ['-g', '0']);
  await d.kill('SIGKILL');
  const db = new Database(path.join(d.home, 'xlurm.db'));
  db.prepare(`UPDATE jobs SET state = 'RUNNING', started_at = submitted_at WHERE id = ?`).run(p);
  // what the previous daemon recorded belongs to another boot
  db.prepare(`UPDATE meta SET value = 'another-boot' WHERE key = 'boot_id'`).run();
  db.close();
  t.notOk(fs.existsSync(path.join(d.jobsDir, `${p}.lock`)));
  await d.start();
  const j = await d.waitState(p, 'FAILED');
  t.equal(j.result.error, 'executor worker disappeared without an exit result');
  t.notOk(fs.existsSync(marker), 'never ran');
  await d.request('cancel', { id: blocker });
  await d.waitState(blocker, 'CANCELLED');
});
