/**
 * Waiting, following and notifications (docs/behaviour.md §23.6, §23.7)
 * with the real CLIs and daemon.
 */
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startDaemon } from '../helpers/daemon';
import { waitFor } from '../helpers/wait';
import * as os from 'node:os';
import type { Scope } from '../helpers/tap';

function tempDir(t: Scope): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-wait-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('waiting and following', async (t) => {
  const d = await startDaemon(t, { maxRunning: 8 });

  t.test('--wait: no output, the exit code; several ids: the first non-zero in argument order', async (t) => {
    const ok = await d.batch('sleep 0.3', ['-g', '0']);
    const three = await d.batch('sleep 0.5; exit 3', ['-g', '0']);
    const five = await d.batch('exit 5', ['-g', '0']);
    const one = await d.run('xqueue', [String(three), '--wait']);
    t.equal(one.code, 3);
    t.equal(one.stdout, '');
    t.equal(one.stderr, '');
    const many = await d.run('xqueue', [String(ok), String(five), String(three), '--wait']);
    t.equal(many.code, 5);
    t.equal(many.stdout + many.stderr, '');
    const zero = await d.run('xqueue', ['--wait', String(ok)]);
    t.equal(zero.code, 0);
    const missing = await d.run('xqueue', ['--wait', '99999']);
    t.equal(missing.code, 1);
    t.equal(missing.stderr, 'xlurm: job not found\n');
  });

  t.test('--wait on an array id waits for every task; A_I one task', async (t) => {
    const r = await d.run('xbatch', ['-g', '0', '--array', '0-2', '--wrap', 'sleep 0.2; exit $SLURM_ARRAY_TASK_ID']);
    const a = Number(r.stdout);
    const all = await d.run('xqueue', [String(a), '--wait']);
    t.equal(all.code, 1, 'task 1 is the first non-zero');
    for (let k = 0; k < 3; k++) t.equal((await d.job(a + k)).state, k === 0 ? 'COMPLETED' : 'FAILED');
    const task = await d.run('xqueue', [`${a}_2`, '--wait']);
    t.equal(task.code, 2);
  });

  t.test('--follow / -f streams the log from the start and exits with the code; a cancelled job too', async (t) => {
    const id = await d.batch('echo one; sleep 0.6; echo two; exit 7', ['-g', '0']);
    await waitFor(async () => ((await d.run('xqueue', [String(id), '--log'])).stdout.includes('one') ? true : undefined));
    const r = await d.run('xqueue', [String(id), '--follow']);
    t.equal(r.code, 7);
    t.equal(r.stdout, 'one\ntwo\n');
    const done = await d.run('xqueue', ['-f', String(id)]);
    t.equal(done.code, 7, 'a finished job is replayed');
    t.equal(done.stdout, 'one\ntwo\n');
  });

  t.test('Ctrl-C stops following and leaves the job alone', async (t) => {
    const id = await d.batch('echo started; sleep 60', ['-g', '0']);
    const child = d.spawnCli('xqueue', [String(id), '--follow']);
    let out = '';
    child.stdout!.on('data', (b: Buffer) => { out += b.toString(); });
    await waitFor(() => (out.includes('started') ? true : undefined));
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGINT');
    await gone;
    t.equal((await d.job(id)).state, 'RUNNING');
    await d.run('xcancel', [String(id)]);
    await d.waitState(id, 'CANCELLED');
  });

  t.test('refusals', async (t) => {
    const both = await d.run('xqueue', ['1', '--wait', '--follow']);
    t.equal(both.code, 2);
    const none = await d.run('xqueue', ['--wait']);
    t.equal(none.code, 2);
    t.match(none.stderr, /<JOB_ID>/);
    const two = await d.run('xqueue', ['1', '2', '--follow']);
    t.equal(two.code, 2);
  });
});

t.test('notifications', async (t) => {
  const d = await startDaemon(t, { maxRunning: 8 });
  const dir = tempDir(t);

  t.test('--notify runs in the job directory with the job variables; its output ends the log', async (t) => {
    const out = path.join(dir, 'note');
    const r = await d.run('xbatch', ['-g', '0', '-n', 'nj', '--notify',
      `echo "$XLURM_JOB_ID $XLURM_JOB_NAME $XLURM_JOB_STATE $XLURM_JOB_EXIT_CODE $MYVAR $(pwd)" > ${out}; echo notified`,
      '--wrap', 'echo body; exit 4'], { cwd: dir, env: { MYVAR: 'mine' } });
    t.equal(r.code, 0, r.stderr);
    const id = Number(r.stdout);
    const note = await waitFor(() => (fs.existsSync(out) && fs.readFileSync(out, 'utf8').endsWith('\n') ? fs.readFileSync(out, 'utf8') : undefined));
    t.equal(note, `${id} nj FAILED 4 mine ${fs.realpathSync(dir)}\n`);
    const log = await waitFor(async () => {
      const l = (await d.run('xqueue', [String(id), '--log'])).stdout;
      return l.endsWith('notified\n') ? l : undefined;
    });
    t.equal(log, 'body\n[xlurm] notify:\nnotified\n');
    t.equal((await d.job(id)).state, 'FAILED', 'the job is as it ended');
  });

  t.test('a job cancelled while pending is notified too; a log ending mid-line gets its own line', async (t) => {
    const out = path.join(dir, 'cancelled');
    // A full host keeps it pending.
    const blockers: number[] = [];
    for (let k = 0; k < 8; k++) blockers.push(await d.batch('sleep 60', ['-g', '0']));
    const target = await d.batch('true', ['-g', '0', '--notify', `echo "$XLURM_JOB_STATE $XLURM_JOB_EXIT_CODE" > ${out}`]);
    t.equal((await d.job(target)).state, 'PENDING');
    await d.run('xcancel', [String(target)]);
    for (const b of blockers) await d.run('xcancel', [String(b)]);
    const note = await waitFor(() => (fs.existsSync(out) && fs.readFileSync(out, 'utf8').endsWith('\n') ? fs.readFileSync(out, 'utf8') : undefined));
    t.equal(note, 'CANCELLED 130\n');
    const mid = await d.batch('printf partial', ['-g', '0', '--notify', 'echo after']);
    const log = await waitFor(async () => {
      const l = (await d.run('xqueue', [String(mid), '--log'])).stdout;
      return l.endsWith('after\n') ? l : undefined;
    });
    t.equal(log, 'partial\n[xlurm] notify:\nafter\n');
  });

  t.test('xrun --notify', async (t) => {
    const out = path.join(dir, 'xrun');
    const r = await d.run('xrun', ['-g', '0', '--notify', `echo "$XLURM_JOB_STATE" > ${out}`, 'true']);
    t.equal(r.code, 0, r.stderr);
    const note = await waitFor(() => (fs.existsSync(out) && fs.readFileSync(out, 'utf8').endsWith('\n') ? fs.readFileSync(out, 'utf8') : undefined));
    t.equal(note, 'COMPLETED\n');
    // The command's output comes before the supervisor's result (a temporary
    // file renamed into place) and the daemon's removal of it: wait for those.
    const notifyFiles = () => fs.readdirSync(d.jobsDir).filter((f) => f.includes('notify'));
    await waitFor(() => notifyFiles().length === 0 || undefined, { what: 'the notification files to go' });
    t.same(notifyFiles(), [], 'no notification file stays behind');
  });
});
