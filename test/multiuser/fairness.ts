// docs/behaviour.md §22 as root, with the real nobody and daemon accounts: the user who used less
// starts first (fair share, kept across a restart); nobody can raise their own place (negative nice,
// xlurm priority); per-user limits hold jobs with UserLimit and release them as jobs end, refuse a
// submission over pending_jobs, change on reload; root's jobs ignore them.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Daemon } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, as, rawRequestAs, rootDaemon, runtime, untilExists, workDir } from '../helpers/multiuser';
import { waitFor } from '../helpers/wait';

interface Share { user: string; uid: number; usage: number; decayed: number; rank: number }

async function shares(d: Daemon): Promise<Share[]> {
  const r = await d.run('xlurm', ['share', '--json']);
  if (r.code !== 0) throw new Error(`xlurm share failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Share[];
}

t.test('fair share: the lighter user\'s job starts first, and usage survives a restart', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  const d = await rootDaemon(t, { maxRunning: 1 });
  const cwd = workDir(t);
  const go = path.join(cwd, 'go');
  const heavy = await d.batch(untilExists(go), ['-g', '0'], as(nobody, { cwd }));
  await d.waitState(heavy, 'RUNNING');
  await waitFor(async () => ((await shares(d)).find((s) => s.user === 'nobody')?.usage ?? 0) > 0, { what: 'nobody charged while the job runs' });
  const go2 = path.join(cwd, 'go2');
  const later = await d.batch(untilExists(go2), ['-g', '0'], as(nobody, { cwd }));
  const light = await d.batch(untilExists(go2), ['-g', '0'], as(daemon, { cwd }));
  await waitFor(async () => (await d.job(light)).reason?.code === 'MaxRunning', { what: 'both queued behind the running job' });
  fs.writeFileSync(go, '');
  await d.waitState(light, 'RUNNING');
  t.equal((await d.job(later)).state, 'PENDING', 'daemon (no usage) started before nobody\'s earlier submission');
  fs.writeFileSync(go2, '');
  await d.waitState(later, 'COMPLETED');

  const before = await shares(d);
  t.same(before.map((s) => Object.keys(s)), before.map(() => ['user', 'uid', 'usage', 'decayed', 'rank']));
  const nb = before.find((s) => s.user === 'nobody')!;
  t.match(nb, { uid: 65534 });
  t.ok(nb.usage > 0 && nb.decayed > 0);
  t.same(before.map((s) => s.rank), before.map((_, i) => i + 1), 'ordered by rank');
  t.ok(before.findIndex((s) => s.user === 'daemon') < before.findIndex((s) => s.user === 'nobody'), 'daemon used less: ranked first');
  const table = await d.run('xlurm', ['share'], as(nobody, { cwd }));
  t.match(table.stdout, /^RANK +USER +UID +USAGE +DECAYED\n/, 'any user may look');

  await d.stop();
  const again = new Daemon(t, d.home, { runtime: await runtime(), maxRunning: 1 });
  t.teardown(() => again.stop());
  await again.start();
  const after = (await shares(again)).find((s) => s.user === 'nobody')!;
  t.ok(after.usage >= nb.usage, `the usage survived the restart (${after.usage} >= ${nb.usage})`);
  t.ok(after.decayed > 0);
});

t.test('no user can raise their own place; root can', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const d = await rootDaemon(t, { maxRunning: 1 });
  const cwd = workDir(t);
  const go = path.join(cwd, 'go');
  const holder = await d.batch(untilExists(go), ['-g', '0'], as(nobody, { cwd }));
  await d.waitState(holder, 'RUNNING');
  const neg = await d.run('xbatch', ['-g', '0', '--nice=-5', '--wrap', 'true'], as(nobody, { cwd }));
  t.equal(neg.code, 2, 'a negative nice is refused before it is sent');
  t.match(neg.stderr, /--nice <NICE>.*cannot be negative/);
  const raw = await rawRequestAs(nobody, d.socket, JSON.stringify({ v: 1, op: 'submit', args: { command: ['true'], cwd, env: {}, name: 'x', count: 0, nice: -5 } }) + '\n');
  t.equal(raw.ok, false, 'and by the daemon, from a hand-made client');
  const nice = await d.batch('true', ['-g', '0', '--nice', '100'], as(nobody, { cwd }));
  t.match(await d.job(nice), { nice: 100, priority: 0 });
  const refused = await d.run('xlurm', ['priority', String(nice), '10'], as(nobody, { cwd }));
  t.equal(refused.code, 1);
  t.equal(refused.stderr, "xlurm: only the administrator may change a job's priority\n");
  t.equal((await d.job(nice)).priority, 0);
  const ok = await d.run('xlurm', ['priority', String(nice), '10']);
  t.equal(ok.code, 0, ok.stderr);
  t.equal(ok.stdout, `Job ${nice}: priority 10\n`);
  t.equal((await d.job(nice)).priority, 10);
  const top = await d.run('xlurm', ['top', String(nice)], as(nobody, { cwd }));
  t.equal(top.code, 0, top.stderr);
  const q = JSON.parse((await d.run('xqueue', ['--json'], as(nobody, { cwd }))).stdout) as Array<Record<string, unknown>>;
  t.match(q.find((r) => r.id === nice), { priority: 10, nice: 100 }, 'summaries carry priority and nice');
  fs.writeFileSync(go, '');
  await d.waitState(nice, 'COMPLETED');
});

t.test('per-user limits: UserLimit held and released; pending_jobs refused; reload; root exempt', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  const cwd = workDir(t);
  const conf = path.join(cwd, 'xlurm.toml');
  const write = (running: number) => fs.writeFileSync(conf, `[limits.users.default]\nrunning_jobs = ${running}\npending_jobs = 2\n[limits.users.daemon]\nrunning_jobs = 5\npending_jobs = 0\n`);
  write(1);
  const d = await rootDaemon(t, { args: ['--config', conf] });
  const go = path.join(cwd, 'go');
  const loop = untilExists(go);
  const first = await d.batch(loop, ['-g', '0'], as(nobody, { cwd }));
  await d.waitState(first, 'RUNNING');
  const second = await d.batch(loop, ['-g', '0'], as(nobody, { cwd }));
  const third = await d.batch(loop, ['-g', '0'], as(nobody, { cwd }));
  await waitFor(async () => (await d.job(second)).reason?.code === 'UserLimit', { what: 'the second held' });
  t.same((await d.job(second)).reason, { code: 'UserLimit', message: 'nobody runs 1 job (limit 1)' });
  const over = await d.run('xbatch', ['-g', '0', '--wrap', 'true'], as(nobody, { cwd }));
  t.equal(over.code, 1);
  t.equal(over.stderr, 'xlurm: nobody already has 2 pending jobs (limit 2)\n');
  const long = await d.run('xqueue', ['-l'], as(nobody, { cwd }));
  t.match(long.stdout, new RegExp(`\\n *${second} .*UserLimit`), 'xqueue -l shows the reason');
  const st = await d.run('xlurm', ['status']);
  t.match(st.stdout, /\nLimits: [^\n]*limits\.users\.default\.running_jobs 1, limits\.users\.default\.pending_jobs 2, limits\.users\.daemon\.running_jobs 5/);
  // daemon's own table replaces default key by key (docs/behaviour.md §28.2): no pending_jobs limit, 5 running.
  const theirs = await Promise.all([0, 1, 2].map(() => d.batch(loop, ['-g', '0'], as(daemon, { cwd }))));
  for (const id of theirs) await d.waitState(id, 'RUNNING');
  const roots = await Promise.all([0, 1, 2].map(() => d.batch(loop, ['-g', '0'], { cwd })));
  for (const id of roots) await d.waitState(id, 'RUNNING');
  t.pass('root\'s jobs ignore the limits');
  write(2);
  const reload = await d.run('xlurm', ['reload']);
  t.equal(reload.code, 0, reload.stderr);
  await d.waitState(second, 'RUNNING');
  t.equal((await d.job(third)).reason?.message, 'nobody runs 2 jobs (limit 2)', 'the reloaded limit applies to later decisions');
  fs.writeFileSync(go, '');
  await d.waitState(third, 'COMPLETED');
  t.pass('released as jobs end');
});
