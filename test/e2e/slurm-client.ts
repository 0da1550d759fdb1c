// Client mode against a real, private single-node Slurm (docs/behaviour.md §27.1, §27.3): with
// [cluster] engine = "slurm", xbatch/xrun/xqueue/xcancel/xinfo drive sbatch/srun/squeue/scancel/
// sinfo; states, exit codes, GRES requests and logs are Slurm's, mapped to ours; an option Slurm
// cannot express is refused by name and nothing reaches Slurm. One Slurm for the whole file.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startSlurm } from '../helpers/slurm';
import { waitFor } from '../helpers/wait';

t.test('the user commands on a Slurm cluster', async (t) => {
  const s = await startSlurm(t);
  if (!s) return;
  const batch = async (args: string[]) => {
    const r = await s.run('xbatch', args);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /^\d+\n$/, 'xbatch prints only the id (sbatch --parsable)');
    return Number(r.stdout.trim());
  };
  const json = async (id: number) => {
    const r = await s.run('xqueue', [String(id), '--json']);
    if (r.code !== 0) throw new Error(`xqueue ${id} --json: ${r.stderr}`);
    return JSON.parse(r.stdout) as Record<string, any>;
  };
  const jobCount = () => s.slurm('squeue', ['-h', '--states=all', '-o', '%i']).stdout.trim().split('\n').filter(Boolean).length;

  // A time limit ends a job only at Slurm's next check after a whole minute: started first, checked last.
  const timedOut = await batch(['-g', '0', '-t', '1m', '-n', 'slow', '--wrap', 'sleep 300']);

  t.test('xbatch, xqueue ID, --log: a completed job', async (t) => {
    const id = await batch(['-g', '0', '-n', 'hello', '--wrap', 'echo "hello $FOO from $(pwd)"']);
    await s.waitState(id, ['COMPLETED']);
    const j = await json(id);
    t.equal(j.id, id);
    t.equal(j.state, 'COMPLETED');
    t.equal(j.result.exit_code, 0);
    t.equal(j.spec.name, 'hello');
    const log = await s.run('xqueue', [String(id), '--log']);
    t.equal(log.code, 0, log.stderr);
    t.equal(log.stdout, `hello  from ${path.join(s.dir, 'work')}\n`, 'the output file; the working directory is the submitter\'s');
    const detail = await s.run('xqueue', [String(id)]);
    t.match(detail.stdout, new RegExp(`^Job ${id}: Completed\\n`));
  });

  t.test('xbatch SCRIPT [ARGS]: with or without an interpreter line, as on one server', async (t) => {
    const work = path.join(s.dir, 'work');
    fs.writeFileSync(path.join(work, 'plain.sh'), 'echo "plain $# $*"\n');
    fs.writeFileSync(path.join(work, 'bang.sh'), '#!/bin/sh\necho "bang $# $*"\n');
    const cases: Array<[string[], string]> = [
      [['plain.sh'], 'plain 0 \n'], [['plain.sh', 'a b', "it's"], "plain 2 a b it's\n"], [['bang.sh', 'x'], 'bang 1 x\n'], [['bang.sh'], 'bang 0 \n'],
    ];
    for (const [args, out] of cases) {
      const id = await batch(['-g', '0', ...args]);
      await s.waitState(id, ['COMPLETED']);
      t.equal((await s.run('xqueue', [String(id), '--log'])).stdout, out, args.join(' '));
    }
  });

  t.test('the environment is passed (--export=ALL)', async (t) => {
    const work = path.join(s.dir, 'work', 'sub');
    fs.mkdirSync(work);
    const r = await s.run('xbatch', ['-g', '0', '--wrap', 'echo "$FOO|$(pwd)"'], { cwd: work, env: { FOO: 'bar baz' } });
    t.equal(r.code, 0, r.stderr);
    const id = Number(r.stdout);
    await s.waitState(id, ['COMPLETED']);
    t.equal((await s.run('xqueue', [String(id), '--log'])).stdout, `bar baz|${work}\n`);
  });

  t.test('--wrap is bash -c, as on this host (extensions 28.11)', async (t) => {
    // sh (dash) has neither [[ ]] nor BASH_VERSION: this prints only under bash.
    const id = await batch(['-g', '0', '--wrap', '[[ -n "$BASH_VERSION" ]] && echo bash']);
    await s.waitState(id, ['COMPLETED']);
    t.equal((await s.run('xqueue', [String(id), '--log'])).stdout, 'bash\n');
  });

  t.test('FAILED with the exit code; CANCELLED by xcancel', async (t) => {
    const failed = await batch(['-g', '0', '--wrap', 'exit 3']);
    const sleeper = await batch(['-g', '0', '--wrap', 'sleep 300']);
    await s.waitState(failed, ['FAILED']);
    const f = await json(failed);
    t.equal(f.state, 'FAILED');
    t.equal(f.result.exit_code, 3);
    await s.waitState(sleeper, ['RUNNING']);
    t.equal((await json(sleeper)).state, 'RUNNING');
    const c = await s.run('xcancel', [String(sleeper)]);
    t.equal(c.code, 0, c.stderr);
    t.equal(c.stdout, `Cancellation requested for job ${sleeper}\n`);
    await s.waitState(sleeper, ['CANCELLED']);
    t.equal((await json(sleeper)).state, 'CANCELLED');
    const q = await s.run('xqueue', ['--all']);
    t.match(q.stdout, new RegExp(`\\n${failed} .*Failed|\\n${failed} .*FAILED`));
    const all = JSON.parse((await s.run('xqueue', ['--all', '--json'])).stdout) as Array<{ id: number; state: string }>;
    t.same(all.filter((x) => x.id === failed || x.id === sleeper).map((x) => x.state).sort(), ['CANCELLED', 'FAILED']);
    const active = JSON.parse((await s.run('xqueue', ['--json'])).stdout) as Array<{ id: number }>;
    t.notOk(active.some((x) => x.id === failed), 'finished jobs only with --all');
    const unknown = await s.run('xcancel', ['999999']);
    t.equal(unknown.code, 1);
    t.equal(unknown.stderr, 'xlurm: job not found\n');
  });

  t.test('GRES requests: -g N with the vendor\'s GRES name', async (t) => {
    const npu = await batch(['--device', 'asc', '-g', '2', '--wrap', 'sleep 300']);
    await s.waitState(npu, ['RUNNING']);
    t.match(s.slurm('scontrol', ['show', 'job', String(npu)]).stdout, /TresPerNode=gres:npu:2/);
    const j = await json(npu);
    t.equal(j.spec.count, 2);
    t.equal(j.spec.kind, 'ascend');
    t.same(j.devices.map((d: { kind: string }) => d.kind), ['ascend', 'ascend'], 'the devices Slurm allocated');
    const rows = JSON.parse((await s.run('xqueue', ['--json'])).stdout) as Array<Record<string, any>>;
    t.match(rows.find((x) => x.id === npu), { state: 'RUNNING', count: 2, kind: 'ascend' });
    t.equal((await s.run('xcancel', [String(npu)])).code, 0);
    const gpu = await batch(['--device', 'nv', '-g', '1', '--wrap', 'echo "CUDA=$CUDA_VISIBLE_DEVICES"']);
    await s.waitState(gpu, ['COMPLETED']);
    t.match((await s.run('xqueue', [String(gpu), '--log'])).stdout, /^CUDA=0\n$/, 'Slurm sets the variable for a GRES named gpu');
    const none = await batch(['-g', '0', '--wrap', 'true']);
    t.notMatch(s.slurm('scontrol', ['show', 'job', String(none)]).stdout, /TresPerNode=gres/, '-g 0 asks for no GRES');
    const before = jobCount();
    const several = await s.run('xbatch', ['-g', '1', '--wrap', 'true']);
    t.equal(several.code, 2);
    t.match(several.stderr, /--device is required: \[cluster\] gres names several vendors \(nv, asc\)/);
    t.equal(jobCount(), before, 'nothing reached Slurm');
  });

  t.test('the workflow and resource options map to Slurm\'s', async (t) => {
    const parent = await batch(['-g', '0', '--hold', '--wrap', 'true']);
    const id = await batch(['-g', '0', '--hold', '--nice', '5', '-c', '1', '--mem', '100M', '--begin', 'now+1h',
      '-d', `afterok:${parent}`, '--array', '0-1', '-t', '10m', '--wrap', 'true']);
    const show = s.slurm('scontrol', ['show', 'job', String(id)]).stdout;
    t.match(show, /Nice=5\b/);
    t.match(show, /JobState=PENDING/);
    t.match(show, new RegExp(`Dependency=afterok:${parent}`));
    t.match(show, /ArrayTaskId=0-1/);
    t.match(show, /TimeLimit=00:10:00/);
    t.match(show, /MinMemoryNode=100M/);
    t.match(show, /Priority=0\b/, 'held');
    const begin = /EligibleTime=(\S+)/.exec(show)?.[1] ?? '';
    t.ok(Date.parse(`${begin}Z`) - Date.now() > 50 * 60 * 1000, `begins in about an hour (${begin})`);
    t.equal(s.slurm('scancel', [String(id), String(parent)]).code, 0);
  });

  t.test('arrays: A_I ids, xqueue A, xqueue A_I --log, --wait, --follow, xcancel A_I', async (t) => {
    const a = await batch(['-g', '0', '--array', '0-2', '--wrap', 'echo "task $SLURM_ARRAY_TASK_ID"; [ $SLURM_ARRAY_TASK_ID != 2 ] || sleep 300']);
    await waitFor(() => (s.slurm('squeue', ['-h', '-j', `${a}_2`, '-o', '%T']).stdout.trim() === 'RUNNING'), { timeout: 30000, what: 'task 2 running' });
    const w = await s.run('xqueue', [`${a}_1`, '--wait']);
    t.equal(w.code, 0, w.stderr);
    t.equal((await s.run('xqueue', [`${a}_1`, '--log'])).stdout, 'task 1\n');
    const f = await s.run('xqueue', [`${a}_0`, '--follow']);
    t.equal(f.code, 0, f.stderr);
    t.equal(f.stdout, 'task 0\n');
    const tasks = JSON.parse((await s.run('xqueue', [String(a), '--json'])).stdout) as Array<Record<string, any>>;
    t.same(tasks.map((x) => x.array), [0, 1, 2].map((index) => ({ id: a, index, count: 3 })), 'xqueue A lists the tasks');
    const c = await s.run('xcancel', [`${a}_2`]);
    t.equal(c.code, 0, c.stderr);
    t.equal(c.stdout, `Cancellation requested for job ${a}_2\n`);
    await waitFor(() => s.slurm('squeue', ['-h', '--states=all', '-j', `${a}_2`, '-o', '%T']).stdout.trim() === 'CANCELLED', { what: 'task 2 cancelled' });
    t.equal((await s.run('xqueue', [`${a}_0`, '--json'])).code, 0);
    t.equal(JSON.parse((await s.run('xqueue', [`${a}_0`, '--json'])).stdout).state, 'COMPLETED', 'only that task');
    const missing = await s.run('xqueue', [`${a}_9`]);
    t.equal(missing.stderr, 'xlurm: job not found\n');
  });

  t.test('an option Slurm cannot express is refused by name; nothing reaches Slurm', async (t) => {
    const before = jobCount();
    const r = await s.run('xbatch', ['-i', '0', '--wrap', 'true']);
    t.equal(r.code, 2);
    t.match(r.stderr, /--device-ids \(-i\) cannot be used on a Slurm cluster/);
    const x = await s.run('xrun', ['-g', '0', '-x', '1', 'true']);
    t.equal(x.code, 2);
    t.match(x.stderr, /--exclude-device-ids \(-x\) cannot be used on a Slurm cluster/);
    const g = await s.run('xrun', ['--ignore-group-affinity', '-g', '0', 'true']);
    t.equal(g.code, 2);
    t.match(g.stderr, /--ignore-group-affinity cannot be used on a Slurm cluster/);
    const retry = await s.run('xbatch', ['-g', '0', '--retry', '2', '--wrap', 'true']);
    t.equal(retry.code, 2);
    t.match(retry.stderr, /--retry cannot be used on a Slurm cluster/);
    t.equal(jobCount(), before);
  });

  t.test('xrun: output streamed, the exit code returned', async (t) => {
    const r = await s.run('xrun', ['-g', '0', 'sh', '-c', 'echo out; echo err >&2; exit 7']);
    t.equal(r.code, 7);
    t.equal(r.stdout, 'out\n');
    t.match(r.stderr, /err\n/);
    const ok = await s.run('xrun', ['-g', '0', '-n', 'argv', 'printf', '%s\\n', 'a b', '$(x)']);
    t.equal(ok.code, 0, ok.stderr);
    t.equal(ok.stdout, 'a b\n$(x)\n', 'argv verbatim');
  });

  t.test('xrun: Ctrl-C cancels the job', async (t) => {
    const child = s.spawnCli('xrun', ['-g', '0', '-n', 'ctrlc', 'sh', '-c', 'echo started; sleep 300']);
    let out = '';
    child.stdout!.on('data', (b: Buffer) => { out += b.toString(); });
    child.stderr!.on('data', () => undefined);
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await waitFor(() => out.includes('started'), { timeout: 30000, what: 'the job started' });
    child.kill('SIGINT');
    const code = await exited;
    t.not(code, 0, `exit ${code}`);
    const id = Number(s.slurm('squeue', ['-h', '--states=all', '-n', 'ctrlc', '-o', '%i']).stdout.trim());
    await s.waitState(id, ['CANCELLED', 'FAILED', 'COMPLETED']);
    t.pass(`the job ended: ${s.state(id)}`);
  });

  t.test('xinfo: the nodes and their GRES', async (t) => {
    const r = await s.run('xinfo', []);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /^NODE +STATE +CPUS +GRES +GRES-USED\nlocalhost +\S+ +\d+\/\d+ +gpu:2,npu:4/);
    const j = JSON.parse((await s.run('xinfo', ['--json'])).stdout) as Array<Record<string, unknown>>;
    t.equal(j[0]!.node, 'localhost');
    t.equal(j[0]!.gres, 'gpu:2,npu:4');
    const pools = await s.run('xinfo', ['--pools']);
    t.equal(pools.code, 2);
    t.match(pools.stderr, /--pools cannot be used on a Slurm cluster/);
  });

  t.test('TIMED_OUT', async (t) => {
    await s.waitState(timedOut, ['TIMEOUT'], 180000);
    t.equal((await json(timedOut)).state, 'TIMED_OUT');
  });
});
