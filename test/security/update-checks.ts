// Extensions 28.4, class "update operations that skip the submit checks": every form of
// `xlurm update` (begin time, time limit, queue-wait timeout, name, nice) gets the checks a
// submission gets, from the CLI and from a hand-made request alike: far-future begin times and
// durations beyond 2^32-1 s are INVALID_REQUEST with nothing stored or changed, a user cannot
// raise a running job's limit or lower a nice, and no typed value is ever answered `internal error`.
import t from 'tap';
import type { Daemon } from '../helpers/daemon';
import { MULTIUSER_SKIP, accounts, as, rootDaemon, workDir } from '../helpers/multiuser';

interface Reply { ok: boolean; result?: any; error?: { code: string; message: string } }

const U32 = 4294967295;
const latest = () => Math.floor(new Date(9999, 11, 31, 23, 59, 59).getTime() / 1000);

/** The job as stored, minus what moves by itself. */
async function snapshot(d: Daemon, id: number): Promise<unknown> {
  const j = await d.job(id);
  return { state: j.state, spec: j.spec, queue_timeout: j.queue_timeout };
}

t.test('submit and every update form: refused out of range, nothing stored or changed', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const d = await rootDaemon(t, {});
  const cwd = workDir(t);
  const count = async () => (await d.jobs()).length;

  // Submission, from the CLI: usage errors in the daemon's words, nothing queued.
  const cases: Array<[string[], string]> = [
    [['--begin', 'now+3000000d'], "invalid time 'now+3000000d': too far in the future"],
    [['-t', String(U32 + 1)], `invalid duration '${U32 + 1}': too long (at most ${U32} seconds)`],
    [['-t', '49711-06:28:16'], `invalid duration '49711-06:28:16': too long (at most ${U32} seconds)`],
    [['--timeout', '49711d'], `invalid duration '49711d': too long (at most ${U32} seconds)`],
  ];
  for (const [flags, message] of cases) {
    const r = await d.run('xbatch', ['-g', '0', ...flags, '--wrap', 'true'], as(nobody, { cwd }));
    t.equal(r.code, 2, `xbatch ${flags.join(' ')}: a usage error`);
    t.ok(r.stderr.includes(message), `xbatch ${flags.join(' ')}: ${r.stderr.trim().split('\n')[0]}`);
  }
  t.equal(await count(), 0, 'nothing queued');

  // Submission, hand-made: INVALID_REQUEST, never INTERNAL, nothing stored.
  const base = { command: ['true'], cwd, env: { PATH: '/usr/bin:/bin' }, name: 'x', count: 0 };
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ begin_at: latest() + 1 }, `invalid time '${latest() + 1}': too far in the future`],
    [{ begin_at: Number.MAX_SAFE_INTEGER }, `invalid time '${Number.MAX_SAFE_INTEGER}': too far in the future`],
    [{ time_limit: U32 + 1 }, `invalid duration '${U32 + 1}': too long (at most ${U32} seconds)`],
    [{ queue_timeout: Number.MAX_SAFE_INTEGER }, `invalid duration '${Number.MAX_SAFE_INTEGER}': too long (at most ${U32} seconds)`],
  ];
  for (const [extra, message] of bad) {
    const r = await d.request('submit', { ...base, ...extra }) as Reply;
    t.same(r.error, { code: 'INVALID_REQUEST', message }, `submit ${JSON.stringify(extra)}`);
  }
  t.equal(await count(), 0, 'still nothing queued');

  // The bounds themselves are accepted, and a job with the longest limit starts and ends.
  const edge = await d.run('xbatch', ['-g', '0', '-t', String(U32), '--wrap', 'echo ran'], as(nobody, { cwd }));
  t.equal(edge.code, 0, edge.stderr);
  t.equal((await d.waitState(Number(edge.stdout.trim()), ['COMPLETED', 'FAILED'])).state, 'COMPLETED', 'a 2^32-1 s limit runs');
  const late = await d.run('xbatch', ['-g', '0', '--hold', '--begin', '9999-12-31T23:59:59', '--timeout', `${U32}`, '--wrap', 'true'], as(nobody, { cwd }));
  t.equal(late.code, 0, late.stderr);
  const id = Number(late.stdout.trim());
  t.equal((await d.job(id)).spec.begin_at, latest());

  // Released: it waits for its begin time, and says so (no internal error, no start).
  const rel = await d.run('xlurm', ['release', String(id)], as(nobody, { cwd }));
  t.equal(rel.code, 0, rel.stderr);
  const waiting = await d.job(id);
  t.equal(waiting.state, 'PENDING');
  t.match(waiting.reason, { code: 'BeginTime', message: /^begins at 9999-12-3[01] / });
  const hold = await d.run('xlurm', ['hold', String(id)], as(nobody, { cwd }));
  t.equal(hold.code, 0, hold.stderr);

  // Every update form, from the CLI and hand-made: refused, the job unchanged.
  const before = await snapshot(d, id);
  const updates: Array<[string[], string]> = [
    [['--begin', 'now+3000000d'], "invalid time 'now+3000000d': too far in the future"],
    [['-t', String(U32 + 1)], `invalid duration '${U32 + 1}': too long (at most ${U32} seconds)`],
    [['--timeout', '49711d'], `invalid duration '49711d': too long (at most ${U32} seconds)`],
    [['-n', 'renamed', '--time-limit', '999999999999'], `invalid duration '999999999999': too long (at most ${U32} seconds)`],
    [['--nice', '10001'], "invalid value '10001' for '--nice <NICE>': use 0 to 10000"],
  ];
  for (const [flags, message] of updates) {
    const r = await d.run('xlurm', ['update', String(id), ...flags], as(nobody, { cwd }));
    t.equal(r.code, 2, `xlurm update ${flags.join(' ')}: a usage error`);
    t.ok(r.stderr.includes(message), `xlurm update ${flags.join(' ')}: ${r.stderr.trim().split('\n')[0]}`);
  }
  const raw: Array<[Record<string, unknown>, string]> = [
    [{ begin_at: latest() + 1 }, 'INVALID_REQUEST'],
    [{ time_limit: U32 + 1, name: 'renamed' }, 'INVALID_REQUEST'],
    [{ queue_timeout: U32 + 1 }, 'INVALID_REQUEST'],
    [{ name: 'n'.repeat(5000) }, 'INVALID_REQUEST'],
    [{ nice: 10001 }, 'INVALID_REQUEST'],
    [{ begin_at: -1 }, 'INVALID_REQUEST'],
  ];
  for (const [extra, code] of raw) {
    const r = await d.request('update', { id, ...extra }) as Reply;
    t.equal(r.error?.code, code, `update ${JSON.stringify(extra).slice(0, 60)}: ${r.error?.message}`);
  }
  t.same(await snapshot(d, id), before, 'the job is exactly as it was');

  // The rules that are not about range: a user's own pending job gets a nice, root's lowering only.
  t.equal((await d.run('xlurm', ['update', String(id), '--nice', '5'], as(nobody, { cwd }))).code, 0);
  const lower = await d.run('xlurm', ['update', String(id), '--nice', '0', '-n', 'renamed'], as(nobody, { cwd }));
  t.equal(lower.code, 1);
  t.match(lower.stderr, /only root may lower a job's nice/);
  t.match(await d.job(id), { spec: { nice: 5, name: 'bash' } }, 'neither the nice nor the name changed');
});

t.test('a running job: its owner cannot raise its limit, nor beyond the range; root cannot exceed the range', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody } = accounts();
  const d = await rootDaemon(t, {});
  const cwd = workDir(t);
  const r = await d.run('xbatch', ['-g', '0', '-t', '10m', '--wrap', 'sleep 60'], as(nobody, { cwd }));
  t.equal(r.code, 0, r.stderr);
  const id = Number(r.stdout.trim());
  await d.waitState(id, 'RUNNING');
  const raise = await d.run('xlurm', ['update', String(id), '-t', '20m'], as(nobody, { cwd }));
  t.equal(raise.code, 1);
  t.match(raise.stderr, /only root may raise the time limit of a running job/);
  const huge = await d.request('update', { id, time_limit: U32 + 1 }) as Reply;
  t.same(huge.error, { code: 'INVALID_REQUEST', message: `invalid duration '${U32 + 1}': too long (at most ${U32} seconds)` }, 'root: out of range');
  const other = await d.request('update', { id, name: 'x' }) as Reply;
  t.equal(other.error?.code, 'INVALID_ARGUMENT', 'a running job takes only a new limit');
  t.equal((await d.job(id)).spec.time_limit, 600, 'its limit is unchanged');
  t.equal((await d.job(id)).state, 'RUNNING', 'and it still runs');
});
