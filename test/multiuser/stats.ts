// docs/behaviour.md §26.1, §26.3, §26.5 as root with the nobody and daemon accounts: statistics
// are private to each user (root sees all and the host); the metrics and the monitor are for
// anyone and name users, never their commands.
import t from 'tap';
import type { Daemon } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, as, rootDaemon, workDir, type Account } from '../helpers/multiuser';

async function statsOf(d: Daemon, a: Account | null, args: string[] = []): Promise<any> {
  const r = await d.run('xlurm', ['stats', '--json', ...args], a ? as(a) : {});
  if (r.code !== 0) throw new Error(`xlurm stats as ${a?.name ?? 'root'}: ${r.code} ${r.stderr}`);
  return JSON.parse(r.stdout);
}

t.test('each user sees their own statistics; root sees every user and the host', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  const d = await rootDaemon(t);
  const cwd = workDir(t);
  const ok = await d.batch('true', ['-g', '0'], as(nobody, { cwd }));
  const bad = await d.batch('exit 1', ['-g', '0'], as(daemon, { cwd }));
  const secret = await d.batch('echo cmd-secret-5t4', ['-g', '0'], as(daemon, { cwd }));
  await d.waitState(ok, 'COMPLETED');
  await d.waitState(bad, 'FAILED');
  await d.waitState(secret, 'COMPLETED');

  const mine = await statsOf(d, nobody);
  t.same(mine.users.map((u: any) => u.uid), [nobody.uid], 'nobody: only its own row');
  t.equal(mine.users[0].jobs.COMPLETED, 1);
  t.equal(mine.host, null, 'and no host total');
  const theirs = await statsOf(d, daemon);
  t.same(theirs.users.map((u: any) => u.uid), [daemon.uid]);
  t.same([theirs.users[0].jobs.COMPLETED, theirs.users[0].jobs.FAILED], [1, 1]);
  t.equal(theirs.users[0].success_rate, 0.5);
  t.same((await statsOf(d, nobody, ['--user', nobody.name])).users.map((u: any) => u.uid), [nobody.uid], 'naming yourself is fine');

  const refused = await d.run('xlurm', ['stats', '--user', daemon.name], as(nobody));
  t.equal(refused.code, 1);
  t.equal(refused.stderr, "xlurm: permission denied: only root may see another user's statistics\n");
  const csv = await d.run('xlurm', ['stats', '--csv'], as(nobody));
  t.equal(csv.stdout.split('\n').filter(Boolean).length, 2, 'the CSV too: the header and its own row');

  const root = await statsOf(d, null);
  t.same(root.users.map((u: any) => u.uid).sort((a: number, b: number) => a - b), [daemon.uid, nobody.uid].sort((a, b) => a - b));
  t.not(root.host, null, 'root sees the host');
  t.same((await statsOf(d, null, ['--user', daemon.name])).users.map((u: any) => u.uid), [daemon.uid]);

  // For anyone: the metrics and the monitor, with user names and counts only.
  const m = await d.run('xlurm', ['metrics'], as(nobody));
  t.equal(m.code, 0, m.stderr);
  t.match(m.stdout, new RegExp(`^xlurm_user_device_seconds_total\\{user="${daemon.name}"\\} 0$`, 'm'));
  t.notMatch(m.stdout, /cmd-secret/);
  const mon = await d.run('xlurm', ['monitor', '--json'], as(nobody));
  t.equal(mon.code, 0, mon.stderr);
  t.notMatch(mon.stdout, /cmd-secret/);
  t.same(JSON.parse(mon.stdout).users, [], 'no active jobs');
});
