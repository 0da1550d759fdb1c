// Client mode on a Slurm that keeps accounting (docs/behaviour.md §27.1, §27.3): slurmdbd on
// a private MariaDB, and finished jobs leave squeue after 2 s (MinJobAge). A job the controller
// has forgotten is then known only to `sacct`; `xqueue ID`, `xqueue ID --json` and `xqueue --all`
// still show its end state and exit code, read from the accounting database. Each check says
// which part failed when sacct has nothing (the controller's records, or the client's reading).
import t from 'tap';
import { startSlurm, type Slurm } from '../helpers/slurm';
import { waitFor } from '../helpers/wait';

/** Wait until the controller has forgotten job `id` (squeue no longer lists it). */
function leftSqueue(s: Slurm, id: number) {
  return waitFor(() => {
    const r = s.slurm('squeue', ['-h', '--states=all', `--jobs=${id}`, '-o', '%i']);
    return r.stdout.trim() === '' ? true : undefined;
  }, { timeout: 60000, what: `job ${id} to leave squeue (MinJobAge=2)` });
}

/** Wait until sacct has job `id` in one of `states`; fails saying it is the accounting side. */
function inSacct(s: Slurm, id: number, states: string[]) {
  return waitFor(() => {
    const r = s.slurm('sacct', ['-n', '-P', '-X', `--jobs=${id}`, '--format=JobID,State,ExitCode']);
    const row = r.stdout.split('\n').find((l) => l.startsWith(`${id}|`));
    return row && states.some((st) => row.split('|')[1]!.startsWith(st)) ? row : undefined;
  }, { timeout: 60000, what: `sacct to record job ${id} as ${states.join('|')} (the controller's accounting records, not the client)` });
}

t.test('jobs that left squeue: their state and exit code come from sacct', async (t) => {
  const s = await startSlurm(t, { accounting: true });
  if (!s) return;
  const batch = async (args: string[]) => {
    const r = await s.run('xbatch', args);
    t.equal(r.code, 0, r.stderr);
    return Number(r.stdout.trim());
  };
  const ok = await batch(['-g', '0', '-n', 'acct-ok', '--wrap', 'echo done']);
  const bad = await batch(['-g', '0', '-n', 'acct-bad', '--wrap', 'exit 3']);
  t.match(await inSacct(s, ok, ['COMPLETED']), /\|0:0$/, 'sacct has the completed job with exit 0');
  t.match(await inSacct(s, bad, ['FAILED']), /\|3:0$/, 'sacct has the failed job with exit 3');
  await leftSqueue(s, ok);
  await leftSqueue(s, bad);

  t.test('xqueue ID --json', async (t) => {
    for (const [id, state, code] of [[ok, 'COMPLETED', 0], [bad, 'FAILED', 3]] as const) {
      const r = await s.run('xqueue', [String(id), '--json']);
      t.equal(r.code, 0, `xqueue ${id} --json read sacct's record: ${r.stderr}`);
      const j = JSON.parse(r.stdout) as { id: number; state: string; spec: { name: string }; result: { exit_code: number } | null };
      t.equal(j.id, id);
      t.equal(j.state, state, `job ${id}'s state from sacct`);
      t.equal(j.result?.exit_code, code, `job ${id}'s exit code from sacct`);
    }
  });

  t.test('xqueue ID: the detail text', async (t) => {
    const r = await s.run('xqueue', [String(bad)]);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, new RegExp(`^Job ${bad}: Failed`), 'the end state from sacct');
  });

  t.test('xqueue --all lists them beside the live jobs', async (t) => {
    const r = await s.run('xqueue', ['--all', '--json']);
    t.equal(r.code, 0, r.stderr);
    const rows = JSON.parse(r.stdout) as Array<{ id: number; state: string }>;
    t.same(rows.filter((x) => x.id === ok || x.id === bad).map((x) => [x.id, x.state]),
      [[ok, 'COMPLETED'], [bad, 'FAILED']], 'both jobs, from sacct');
  });

  t.test('an id neither squeue nor sacct knows: job not found', async (t) => {
    const r = await s.run('xqueue', [String(bad + 1000)]);
    t.not(r.code, 0);
    t.match(r.stderr, /job not found/);
  });
});
