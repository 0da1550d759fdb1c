/**
 * Arrays and sweeps (docs/behaviour.md §23.2) with the real CLIs and daemon:
 * ids, names, variables, A_I in tables and commands, the throttle, {NAME}
 * substitution, --dry-run, and an array surviving a daemon SIGKILL.
 */
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { waitFor } from '../helpers/wait';
import type { Scope } from '../helpers/tap';

function tempDir(t: Scope): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-arr-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function submit(d: Daemon, args: string[], cwd?: string): Promise<number> {
  const r = await d.run('xbatch', args, cwd ? { cwd } : {});
  if (r.code !== 0) throw new Error(`xbatch failed (${r.code}): ${r.stderr}`);
  return Number(r.stdout.trim());
}

async function log(d: Daemon, id: string | number): Promise<string> {
  return (await d.run('xqueue', [String(id), '--log'])).stdout;
}

t.test('arrays', async (t) => {
  const d = await startDaemon(t, { maxRunning: 8 });
  const dir = tempDir(t);

  t.test('ids, names, variables, JSON, A_I in tables and commands', async (t) => {
    const r = await d.run('xbatch', ['-g', '0', '-n', 'sw', '--array', '0-4:2', '--wrap',
      'echo "$XLURM_ARRAY_JOB_ID $XLURM_ARRAY_TASK_ID $XLURM_ARRAY_TASK_COUNT $XLURM_ARRAY_TASK_MIN $XLURM_ARRAY_TASK_MAX|$SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT $SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX"']);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /^\d+\n$/);
    const a = Number(r.stdout);
    for (let k = 0; k < 3; k++) {
      const j = await d.waitState(a + k, 'COMPLETED');
      t.equal(j.spec.name, `sw[${k * 2}]`);
      t.same(j.array, { id: a, index: k * 2, count: 3 });
      t.equal(await log(d, a + k), `${a} ${k * 2} 3 0 4|${a} ${k * 2} 3 0 4\n`);
      t.notOk('array' in j.spec, 'a task keeps no array spec');
    }
    const plain = await d.batch('true', ['-g', '0']);
    t.equal((await d.waitState(plain, 'COMPLETED')).array, null);

    const table = await d.run('xqueue', ['--all']);
    t.match(table.stdout, new RegExp(`^${a}_0 `, 'm'));
    t.match(table.stdout, new RegExp(`^${a}_4 `, 'm'));
    const list = await d.run('xqueue', [String(a)]);
    t.equal(list.code, 0, list.stderr);
    t.same(list.stdout.split('\n').filter((l) => /^\d+_\d+ /.test(l)).map((l) => l.split(/ +/)[0]), [`${a}_0`, `${a}_2`, `${a}_4`]);
    const json = JSON.parse((await d.run('xqueue', [String(a), '--json'])).stdout) as Array<{ id: number; array: unknown }>;
    t.same(json.map((j) => j.array), [0, 2, 4].map((index) => ({ id: a, index, count: 3 })));
    const detail = await d.run('xqueue', [`${a}_2`]);
    t.match(detail.stdout, new RegExp(`^Job ${a + 1}: Completed`, 'm'));
    t.match(detail.stdout, new RegExp(`^Array: ${a}_2 `, 'm'));
    t.equal(await log(d, `${a}_4`), `${a} 4 3 0 4|${a} 4 3 0 4\n`);
    const none = await d.run('xqueue', [`${a}_1`]);
    t.equal(none.code, 1);
    t.equal(none.stderr, 'xlurm: job not found\n');
    const summaries = await d.jobs();
    const s = summaries.find((j) => j.id === a + 1)!;
    t.same(s.array, { id: a, index: 2, count: 3 });
    t.equal(summaries.find((j) => j.id === plain)!.array, null);
  });

  t.test('xcancel A_I cancels one task, xcancel A every task', async (t) => {
    const a = await submit(d, ['-g', '0', '--array', '1,3,5', '--wrap', 'sleep 60']);
    await d.waitState(a + 2, 'RUNNING');
    const one = await d.run('xcancel', [`${a}_3`]);
    t.equal(one.code, 0, one.stderr);
    t.equal(one.stdout, `Cancellation requested for job ${a}_3\n`);
    await d.waitState(a + 1, 'CANCELLED');
    t.equal((await d.job(a)).state, 'RUNNING');
    const first = await d.run('xcancel', [`${a}_1`]);
    t.equal(first.code, 0, first.stderr);
    await d.waitState(a, 'CANCELLED');
    t.equal((await d.job(a + 2)).state, 'RUNNING', 'A_I of the first task cancels that task only');
    const b = await submit(d, ['-g', '0', '--array', '0-3', '--wrap', 'sleep 60']);
    await d.waitState(b, 'RUNNING');
    const all = await d.run('xcancel', [String(b)]);
    t.equal(all.code, 0, all.stderr);
    for (let k = 0; k < 4; k++) await d.waitState(b + k, 'CANCELLED');
    await d.run('xcancel', [String(a + 2)]);
    await d.waitState(a + 2, 'CANCELLED');
  });

  t.test('xlurm hold, release and update and xqueue --cancel take A_I', async (t) => {
    const a = await submit(d, ['-g', '0', '--array', '4,6', '--hold', '--wrap', 'echo $SLURM_ARRAY_TASK_ID']);
    const upd = await d.run('xlurm', ['update', `${a}_6`, '-n', 'renamed']);
    t.equal(upd.code, 0, upd.stderr);
    t.equal((await d.job(a + 1)).spec.name, 'renamed');
    const rel = await d.run('xlurm', ['release', `${a}_4`]);
    t.equal(rel.code, 0, rel.stderr);
    await d.waitState(a, 'COMPLETED');
    t.equal((await d.job(a + 1)).state, 'PENDING', 'the other task stays held');
    const hold = await d.run('xlurm', ['hold', `${a}_6`]);
    t.equal(hold.code, 0, hold.stderr);
    const c = await d.run('xqueue', ['--cancel', `${a}_6`]);
    t.equal(c.code, 0, c.stderr);
    t.equal(c.stdout, `Cancellation requested for job ${a}_6\n`);
    await d.waitState(a + 1, 'CANCELLED');
    t.equal((await d.run('xqueue', [`${a}_4`, '--log'])).stdout, '4\n');
  });

  t.test('the throttle is never exceeded while the array drains', async (t) => {
    const a = await submit(d, ['-g', '0', '--array', '0-9%3', '--wrap', 'sleep 0.3']);
    let most = 0;
    let sawReason = false;
    await waitFor(async () => {
      const rows = (await d.jobs()).filter((j) => (j.array as { id: number } | null)?.id === a);
      const running = rows.filter((j) => j.state === 'RUNNING').length;
      most = Math.max(most, running);
      for (const j of rows) {
        const reason = j.reason as { code: string; message: string } | null;
        if (j.state === 'PENDING' && reason?.code === 'MaxRunning') {
          t.equal(reason.message, `array ${a} runs 3 tasks (limit 3)`);
          sawReason = true;
        }
      }
      return rows.every((j) => j.state === 'COMPLETED') ? true : undefined;
    }, { timeout: 30000, interval: 20 });
    t.equal(most, 3, 'the throttle was reached');
    t.ok(sawReason, 'pending tasks said why');
  });

  t.test('--param: the cartesian product, {NAME} verbatim in script ARGS, XLURM_PARAM_*', async (t) => {
    const script = path.join(dir, 'args.sh');
    fs.writeFileSync(script, 'printf "<%s>" "$@"; echo " $XLURM_PARAM_lr|$XLURM_PARAM_opt"\n');
    const a = await submit(d, ['-g', '0', '-n', 'p', '--param', 'lr=0.1,a b', '--param', 'opt=$HOME,`x`;y,"q"', script,
      '--lr={lr}', '{opt}', '{missing}', '{lr}{lr}'], dir);
    const want: Array<[string, string]> = [];
    for (const lr of ['0.1', 'a b']) for (const opt of ['$HOME', '`x`;y', '"q"']) want.push([lr, opt]);
    for (let k = 0; k < want.length; k++) {
      const [lr, opt] = want[k]!;
      const j = await d.waitState(a + k, 'COMPLETED');
      t.equal(j.spec.name, `p[${k}]`);
      t.same(j.spec.command, [`--lr=${lr}`, opt, '{missing}', `${lr}${lr}`]);
      t.equal(await log(d, a + k), `<--lr=${lr}><${opt}><{missing}><${lr}${lr}> ${lr}|${opt}\n`);
    }
    t.equal((await d.job(a + want.length - 1)).array.count, 6);
  });

  t.test('--param with --wrap: the value becomes part of the bash command', async (t) => {
    const a = await submit(d, ['-g', '0', '--param', 'w=one,two words', '--wrap', 'printf "[%s]" {w} "{w}"; echo']);
    await d.waitState(a + 1, 'COMPLETED');
    t.equal(await log(d, a), '[one][one]\n');
    t.equal(await log(d, a + 1), '[two][words][two words]\n');
  });

  t.test('--param-file: one task per row', async (t) => {
    const csv = path.join(dir, 'grid.csv');
    fs.writeFileSync(csv, 'lr,note\n0.1,"a, b"\n0.01,"say ""hi"""\n');
    const a = await submit(d, ['-g', '0', '--param-file', csv, '--wrap', 'echo "$XLURM_PARAM_lr/$XLURM_PARAM_note"']);
    await d.waitState(a + 1, 'COMPLETED');
    t.equal(await log(d, a), '0.1/a, b\n');
    t.equal(await log(d, a + 1), '0.01/say "hi"\n');
  });

  t.test('--dry-run prints the tasks and submits nothing', async (t) => {
    const before = (await d.jobs()).length;
    const r = await d.run('xbatch', ['-g', '0', '-n', 'dr', '--array', '%2', '--param', 'x=1,2', '--param', 'y=a,b', '--dry-run', '--wrap', 'echo {x}{y}']);
    t.equal(r.code, 0, r.stderr);
    t.equal(r.stdout, [
      "0  dr[0]  x=1 y=a  bash -c 'echo 1a'",
      "1  dr[1]  x=1 y=b  bash -c 'echo 1b'",
      "2  dr[2]  x=2 y=a  bash -c 'echo 2a'",
      "3  dr[3]  x=2 y=b  bash -c 'echo 2b'",
      'would submit 4 tasks, at most 2 running at once; nothing submitted',
      '',
    ].join('\n'));
    t.equal((await d.jobs()).length, before);
  });

  t.test('refusals', async (t) => {
    const big = await d.run('xbatch', ['-g', '0', '--array', '0-100000', '--wrap', 'true']);
    t.equal(big.code, 1);
    t.equal(big.stderr, 'xlurm: array of 100001 tasks: at most 100000 tasks per array\n');
    const bad = await d.run('xbatch', ['-g', '0', '--array', '5-1', '--wrap', 'true']);
    t.equal(bad.code, 2, 'a bad --array is a usage error, as every bad option is');
    t.match(bad.stderr, /^error: invalid array '5-1': /);
    // The daemon refuses with the same words when a client does not check.
    const raw = await d.request('submit', { command: ['true'], cwd: dir, env: {}, name: 'x', count: 0, array: '0-100000' }) as { ok: boolean; error: { code: string; message: string } };
    t.equal(raw.ok, false);
    t.same(raw.error, { code: 'INVALID_ARGUMENT', message: 'array of 100001 tasks: at most 100000 tasks per array' });
  });

  t.test('10,000 tasks are one submission', async (t) => {
    const started = Date.now();
    const a = await submit(d, ['-g', '0', '--array', '0-9999', '-n', 'big', '--wrap', 'sleep 60']);
    t.ok(Date.now() - started < 10000, 'accepted');
    const rows = JSON.parse((await d.run('xqueue', [String(a), '--json'])).stdout) as Array<{ id: number; array: { index: number } }>;
    t.equal(rows.length, 10000);
    t.equal(rows[9999]!.id, a + 9999);
    t.equal(rows[9999]!.array.index, 9999);
    const c = await d.run('xcancel', [String(a)]);
    t.equal(c.code, 0, c.stderr);
    await waitFor(async () => ((await d.jobs(false)).length === 0 ? true : undefined), { timeout: 30000 });
  });
});

t.test('an array survives a daemon SIGKILL and restart', async (t) => {
  const d = await startDaemon(t, { maxRunning: 8 });
  const a = await submit(d, ['-g', '0', '-n', 'surv', '--array', '0-5%2', '--wrap', 'sleep 0.4; echo "$SLURM_ARRAY_TASK_ID of $XLURM_ARRAY_TASK_COUNT"']);
  await d.waitState(a, 'RUNNING');
  await d.kill('SIGKILL');
  await d.start();
  let most = 0;
  await waitFor(async () => {
    const rows = (await d.jobs()).filter((j) => (j.array as { id: number } | null)?.id === a);
    const running = rows.filter((j) => j.state === 'RUNNING').length;
    most = Math.max(most, running);
    return rows.length === 6 && rows.every((j) => j.state === 'COMPLETED') ? true : undefined;
  }, { timeout: 30000, interval: 20 });
  t.ok(most <= 2, `the throttle held after the restart (saw ${most})`);
  for (let k = 0; k < 6; k++) {
    const j = await d.job(a + k);
    t.equal(j.spec.name, `surv[${k}]`);
    t.same(j.array, { id: a, index: k, count: 6 });
    t.equal(await log(d, a + k), `${k} of 6\n`);
  }
});
