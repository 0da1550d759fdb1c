// docs/behaviour.md §23.7 as root: a job's --notify command runs as the job's owner (through
// a supervisor's privilege drop, never as the root daemon), in its directory, and an array
// task of another user gets its own variables (docs/behaviour.md §23.2).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MULTIUSER_SKIP, accounts, as, rootDaemon, workDir } from '../helpers/multiuser';
import { waitFor } from '../helpers/wait';

t.test('notifications of another user', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const d = await rootDaemon(t);

  t.test("nobody's job: the notification runs as nobody, in the job's directory", async (t) => {
    const cwd = workDir(t);
    const cmd = 'echo "$(id -u) $(id -g) $(id -G) $XLURM_JOB_STATE $XLURM_JOB_EXIT_CODE $(pwd)" > note; ' +
      'grep -E "^(Uid|NoNewPrivs):" /proc/self/status; touch made-by-notify; stat -c "file=%u" made-by-notify';
    const r = await d.run('xbatch', ['-g', '0', '--notify', cmd, '--wrap', 'exit 3'], as(nobody, { cwd }));
    t.equal(r.code, 0, r.stderr);
    const id = Number(r.stdout);
    const note = await waitFor(() => {
      const f = path.join(cwd, 'note');
      return fs.existsSync(f) && fs.readFileSync(f, 'utf8').endsWith('\n') ? fs.readFileSync(f, 'utf8') : undefined;
    });
    t.equal(note, `65534 ${nobody.gid} ${nobody.gid} FAILED 3 ${fs.realpathSync(cwd)}\n`);
    t.equal(fs.statSync(path.join(cwd, 'note')).uid, 65534, 'written by nobody');
    const log = await waitFor(async () => {
      const l = (await d.run('xqueue', [String(id), '--log'], as(nobody, { cwd }))).stdout;
      return /^file=/m.test(l) ? l : undefined;
    });
    t.match(log, /^\[xlurm\] notify:\nUid:\t65534\t65534\t65534\t65534\nNoNewPrivs:\t1\nfile=65534\n$/m);
  });

  t.test("an array task of nobody's gets its variables", async (t) => {
    const cwd = workDir(t);
    const r = await d.run('xbatch', ['-g', '0', '--array', '2-3', '--wrap', 'echo "$(id -u) $SLURM_ARRAY_TASK_ID $XLURM_ARRAY_JOB_ID"'], as(nobody, { cwd }));
    t.equal(r.code, 0, r.stderr);
    const a = Number(r.stdout);
    await d.waitState(a + 1, 'COMPLETED');
    t.equal((await d.run('xqueue', [`${a}_3`, '--log'], as(nobody, { cwd }))).stdout, `65534 3 ${a}\n`);
  });
});
