import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon } from '../helpers/daemon';

t.test('xbatch and xqueue', async (t) => {
  const d = await startDaemon(t, { maxRunning: 4 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-batch-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

  t.test('xbatch prints only the id; the script is a snapshot; args verbatim; $0 is the name', async (t) => {
    const script = path.join(dir, 'script with spaces.sh');
    fs.writeFileSync(script, 'echo "v1 $0 $#"; printf "%s\\n" "$@"\n');
    const r = await d.run('xbatch', ['-g', '0', script, '-x', '--gpus', 'a b'], { cwd: dir });
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /^\d+\n$/);
    t.equal(r.stderr, '');
    const id = Number(r.stdout);
    fs.writeFileSync(script, 'echo v2\n'); // edited after submission: no effect
    const job = await d.waitState(id, 'COMPLETED');
    t.equal(job.spec.name, 'script with spaces.sh');
    const log = await d.run('xqueue', [String(id), '--log']);
    t.equal(log.stdout, 'v1 script with spaces.sh 3\n-x\n--gpus\na b\n');
  });

  t.test('unreadable script', async (t) => {
    const r = await d.run('xbatch', ['-g', '0', path.join(dir, 'missing.sh')]);
    t.equal(r.code, 1);
    t.equal(r.stderr, `xlurm: cannot read ${path.join(dir, 'missing.sh')}\n`);
  });

  t.test('--wrap runs through bash and is named bash; -n names a job; xrun jobs take the first word', async (t) => {
    const a = await d.batch('echo wrapped', ['-g', '0']);
    const b = await d.batch('true', ['-g', '0', '-n', 'my job']);
    const ja = await d.waitState(a, 'COMPLETED');
    const jb = await d.waitState(b, 'COMPLETED');
    t.equal(ja.spec.name, 'bash');
    t.same(ja.spec.command, ['bash', '-c', 'echo wrapped']);
    t.equal(jb.spec.name, 'my job');
    const r = await d.run('xrun', ['-g', '0', 'true']);
    t.equal(r.code, 0);
    const all = await d.jobs();
    t.equal(all[all.length - 1]!.name, 'true');
  });

  t.test('xqueue table, --all, --json, detail and --log', async (t) => {
    const done = await d.batch('echo hello; echo again', ['-g', '0', '-n', 'tab\tname']);
    await d.waitState(done, 'COMPLETED');
    const running = await d.batch('sleep 60', ['-g', '0', '-n', 'runner']);
    await d.waitState(running, 'RUNNING');

    const table = await d.run('xqueue', [], { env: { TZ: 'Asia/Shanghai' } });
    t.equal(table.code, 0, table.stderr);
    const lines = table.stdout.split('\n');
    t.match(lines[0], /^JOB +USER +STATE +DEVICES +STARTED \(UTC\+8\) +WAIT +RUN +NAME$/);
    t.ok(lines.some((l) => new RegExp(`^${running} .*RUNNING +- +\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d .* runner$`).test(l)), table.stdout);
    t.notOk(lines.some((l) => l.startsWith(`${done} `)), 'finished jobs only with --all');

    const all = await d.run('xqueue', ['--all']);
    t.ok(all.stdout.split('\n').some((l) => l.startsWith(`${done} `) && l.includes('COMPLETED') && l.endsWith('tab\\tname')), all.stdout);

    const json = JSON.parse((await d.run('xqueue', ['--json'])).stdout);
    t.ok(Array.isArray(json));
    const row = json.find((r: any) => r.id === running);
    t.same(Object.keys(row), ['id', 'owner', 'name', 'state', 'count', 'kind', 'devices', 'submitted_at', 'started_at', 'finished_at', 'reason', 'cpus', 'mem', 'array', 'priority', 'nice', 'share']);
    t.equal(row.reason, null, 'a running job has no pending reason');
    t.notOk('spec' in row || 'command' in row || 'env' in row);

    const detail = await d.run('xqueue', [String(done)], { env: { TZ: 'UTC' } });
    t.match(detail.stdout, new RegExp(`^Job ${done}: Completed\nName: tab\\\\tname\nUser: \\S+ \\(UID \\d+\\)\nDirectory: .*\nLog: xqueue ${done} --log\nDevices: -\nStarted at: \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\+0\nWait time: \\d\\d:\\d\\d:\\d\\d\nRun time: \\d\\d:\\d\\d:\\d\\d\nExit code: 0\n$`));

    const full = JSON.parse((await d.run('xqueue', [String(done), '--json'])).stdout);
    t.same(Object.keys(full), ['id', 'owner', 'spec', 'state', 'devices', 'submitted_at', 'started_at', 'result', 'reason', 'queue_timeout', 'cpus', 'mem', 'array', 'attempt', 'dependency', 'begin_at', 'priority', 'nice', 'share']);
    t.equal(full.reason, null);
    // A job that had a cgroup (a root daemon's, docs/behaviour.md §24.5) adds what it measured.
    const measured = process.geteuid?.() === 0 && /cgroup/.test(fs.readFileSync('/proc/self/mountinfo', 'utf8')) ? ['peak_memory', 'cpu_seconds'] : [];
    t.same(Object.keys(full.result), ['state', 'exit_code', 'finished_at', 'error', ...measured]);

    const log = await d.run('xqueue', [String(done), '--log']);
    t.equal(log.stdout, 'hello\nagain\n');

    const cancel = await d.run('xcancel', [String(running)]);
    t.equal(cancel.stdout, `Cancellation requested for job ${running}\n`);
    const j = await d.waitState(running, 'CANCELLED');
    t.equal(j.result.exit_code, 130);
  });

  t.test('unknown job ids', async (t) => {
    for (const args of [['99999'], ['99999', '--log'], ['--cancel', '99999']]) {
      const r = await d.run('xqueue', args);
      t.equal(r.code, 1);
      t.equal(r.stderr, 'xlurm: job not found\n');
    }
    const r = await d.run('xcancel', ['99999']);
    t.equal(r.stderr, 'xlurm: job not found\n');
  });
});
