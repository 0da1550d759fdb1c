// The words after the options belong to the job (extensions 28.9), through the real CLIs and
// daemon: a switch never takes the next word, an option's value is never an option, and a bad
// value is a usage error (exit 2) with nothing queued.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startDaemon } from '../helpers/daemon';

t.test('switches and values as a new user types them', async (t) => {
  const d = await startDaemon(t);
  const dir = fs.mkdtempSync(path.join(d.home, 'work-'));

  const run = await d.run('xrun', ['-g', '0', '--immediate', 'echo', 'ran']);
  t.same([run.code, run.stdout], [0, 'ran\n'], 'xrun --immediate CMD runs CMD');
  const runTrue = await d.run('xrun', ['-g', '0', '--immediate', 'true']);
  t.equal(runTrue.code, 0, 'xrun -g 0 --immediate true runs true');
  t.equal(runTrue.stdout, '');

  fs.writeFileSync(path.join(dir, 'false.sh'), 'echo from-false.sh\n');
  const held = await d.run('xbatch', ['-g', '0', '--hold', 'false.sh'], { cwd: dir });
  t.equal(held.code, 0, held.stderr);
  const job = await d.job(Number(held.stdout));
  t.equal(job.spec.name, 'false.sh', 'xbatch --hold false.sh submits false.sh');
  t.equal(job.state, 'PENDING');
  t.equal(job.reason?.code, 'Held', 'held');
  await d.run('xcancel', [String(job.id)]);

  const before = (await d.jobs()).length;
  for (const [argv, message] of [
    [['-g', '0', '--wrap'], 'option --wrap needs a value'],
    [['--wrap', '--nice', '5'], 'option --wrap needs a value'],
    [['-g', '0', '-n', '--wrap', 'true'], 'option -n needs a value'],
    [['-g', '0', '--wrap='], "a value is required for '--wrap <CMD>' but none was supplied"],
    [['-g', '0', '--retry', '11', '--wrap', 'true'], "invalid value '11' for '--retry <N>': at most 10"],
    [['-g', '-1', '--wrap', 'true'], "invalid value '-1' for '--gpus <N>': must be a whole number of 0 or more"],
    [['-g', '0', '--hold=maybe', '--wrap', 'true'], "invalid value 'maybe' for '--hold': use true, false, yes, no, 1 or 0"],
    [['-g', '0', '--array', '5-1', '--wrap', 'true'], "invalid array '5-1': use indices like 0-99, 1,3,5 or 0-99:10, optionally followed by %N (at most N running at once)"],
    [['-g', '0', '--array', '%2', '--wrap', 'true'], '--array %N needs --param or --param-file (or give indices: --array 0-9%N)'],
  ] as Array<[string[], string]>) {
    const r = await d.run('xbatch', argv, { cwd: dir });
    t.equal(r.code, 2, `xbatch ${argv.join(' ')}`);
    t.equal(r.stderr.split('\n')[0], `error: ${message}`);
  }
  t.equal((await d.jobs()).length, before, 'nothing queued');

  const named = await d.run('xbatch', ['-g', '0', '--hold=no', '--nice=5', '--wrap=echo -x'], { cwd: dir });
  t.equal(named.code, 0, named.stderr);
  const j = await d.job(Number(named.stdout));
  t.same(j.spec.command, ['bash', '-c', 'echo -x'], 'a value that begins with - given as --option=value');
  await d.waitState(j.id, 'COMPLETED');
});
