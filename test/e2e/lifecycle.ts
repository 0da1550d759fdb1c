import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as os from 'node:os';
import { Daemon, runProcess, startDaemon, tempHome } from '../helpers/daemon';
import { pidAlive, waitFor } from '../helpers/wait';

/** Background daemon through `xlurm start`; stopped (or killed) at teardown. */
async function started(t: Tap.Test, args: string[] = []): Promise<Daemon> {
  const d = new Daemon(t, tempHome(t), {});
  t.teardown(async () => {
    const st = await d.request('status', {}).catch(() => null) as any;
    await d.run('xlurm', ['stop']);
    if (st?.ok) await waitFor(() => !pidAlive(st.result.pid), { what: 'daemon exit' });
  });
  const r = await d.run('xlurm', ['start', '--backend', 'none', ...args]);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, 'xlurm started\n');
  return d;
}

namespace Tap { export type Test = any }

t.test('start twice, stop, restart refused while jobs run, clean rules', async (t) => {
  const d = await started(t);
  let r = await d.run('xlurm', ['start', '--backend', 'none']);
  t.equal(r.stdout, 'xlurm is already running\n');
  t.equal(r.code, 0);
  t.equal(fs.statSync(d.socket).mode & 0o777, process.getuid!() === 0 ? 0o666 : 0o600);
  t.equal(fs.statSync(d.home).mode & 0o777, 0o755);
  t.equal(fs.statSync(d.jobsDir).mode & 0o777, 0o700);

  const id = await d.batch('sleep 60', ['-g', '0']);
  await d.waitState(id, 'RUNNING');
  r = await d.run('xlurm', ['restart', '--backend', 'none']);
  t.equal(r.code, 1);
  t.equal(r.stderr, `xlurm: cannot restart while jobs are running: ${id}\n`);

  r = await d.run('xlurm', ['clean']);
  t.equal(r.code, 1);
  t.equal(r.stderr, 'xlurm: xlurm is running; stop the scheduler before cleaning logs\n');

  r = await d.run('xlurm', ['stop']);
  t.equal(r.stdout, 'Scheduler stopped; running jobs continue.\n');
  await waitFor(() => !fs.existsSync(d.socket), { what: 'socket removed' });
  r = await d.run('xlurm', ['clean']);
  t.equal(r.code, 1);
  t.equal(r.stderr, `xlurm: cannot clean logs while jobs are running: ${id}\n`);

  // the job kept running without a daemon; cancel it after restarting
  r = await d.run('xlurm', ['start', '--backend', 'none']);
  t.equal(r.stdout, 'xlurm started\n');
  t.equal((await d.job(id)).state, 'RUNNING');
  await d.run('xcancel', [String(id)]);
  await d.waitState(id, 'CANCELLED');
  r = await d.run('xlurm', ['restart', '--backend', 'none']);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, 'xlurm started\n');

  r = await d.run('xlurm', ['stop']);
  await waitFor(() => !fs.existsSync(d.socket));
  t.ok(fs.existsSync(path.join(d.jobsDir, `${id}.log`)));
  r = await d.run('xlurm', ['clean']);
  t.equal(r.stdout, 'Removed 1 job log(s) and daemon.log.\n');
  t.notOk(fs.existsSync(path.join(d.jobsDir, `${id}.log`)));
  t.ok(fs.existsSync(path.join(d.jobsDir, `${id}.result`)), 'results stay');
  r = await d.run('xlurm', ['clean']);
  t.equal(r.stdout, 'Removed 0 job log(s); daemon.log was already absent.\n');
  r = await d.run('xqueue', []);
  t.equal(r.code, 1);
  t.match(r.stderr, process.geteuid!() === 0 ? /^xlurm: xlurm is not running; start it with `xlurm start`: / : /^xlurm: xlurm is not running; ask the administrator to run `sudo xlurm start`: /);
});

t.test('a second foreground daemon on the same home refuses to start', async (t) => {
  const d = await startDaemon(t);
  const second = await d.run('xlurm', ['daemon', '--backend', 'none']);
  t.equal(second.code, 1);
  t.match(second.stderr, /already running/);
});

t.test('--max-running 0 is refused', async (t) => {
  const d = new Daemon(t, tempHome(t), {});
  const r = await d.run('xlurm', ['start', '--backend', 'none', '--max-running', '0']);
  t.equal(r.code, 1);
  t.equal(r.stderr, 'xlurm: max-running must be positive\n');
});

t.test('daemon SIGKILLed mid-job: the restarted daemon adopts the job, which ran exactly once', async (t) => {
  const d = await startDaemon(t);
  const marker = path.join(path.dirname(d.home), 'marker');
  const gate = path.join(path.dirname(d.home), 'gate');
  const id = await d.batch(`echo run >> ${marker}; while [ ! -e ${gate} ]; do sleep 0.05; done; exit 5`, ['-g', '0']);
  await waitFor(() => fs.existsSync(marker));
  await d.kill('SIGKILL');
  await d.start();
  t.equal((await d.job(id)).state, 'RUNNING');
  fs.writeFileSync(gate, '');
  const j = await d.waitState(id, 'FAILED');
  t.equal(j.result.exit_code, 5);
  t.equal(fs.readFileSync(marker, 'utf8'), 'run\n');
});

t.test('a job that finished while no daemon ran is collected at start', async (t) => {
  const d = await startDaemon(t);
  const gate = path.join(path.dirname(d.home), 'gate2');
  const id = await d.batch(`while [ ! -e ${gate} ]; do sleep 0.05; done; echo done`, ['-g', '0']);
  await d.waitState(id, 'RUNNING');
  await d.kill('SIGKILL');
  fs.writeFileSync(gate, '');
  await waitFor(() => fs.existsSync(path.join(d.jobsDir, `${id}.result`)));
  await d.start();
  const j = await d.waitState(id, 'COMPLETED');
  t.equal(j.result.exit_code, 0);
});

t.test('supervisor SIGKILLed while no daemon runs: FAILED, never re-run', async (t) => {
  const d = await startDaemon(t);
  const marker = path.join(path.dirname(d.home), 'marker3');
  const id = await d.batch(`echo run >> ${marker}; while :; do sleep 0.1; done`, ['-g', '0']);
  await waitFor(() => fs.existsSync(marker));
  const pidOfStepd = await waitFor(() => {
    // the supervisor (comm xlurm-stepd) whose child runs this job's script
    for (const p of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
      try {
        if (fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim() !== 'xlurm-stepd') continue;
        const children = fs.readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
        if (children.some((c) => fs.readFileSync(`/proc/${c}/cmdline`, 'utf8').includes(marker))) return Number(p);
      } catch { /* raced with an exit */ }
    }
    return 0;
  }, { what: 'supervisor pid' });
  await d.kill('SIGKILL');
  process.kill(pidOfStepd, 'SIGKILL');
  await waitFor(() => !pidAlive(pidOfStepd));
  await d.start();
  const j = await d.waitState(id, 'FAILED');
  t.equal(j.result.error, 'executor worker disappeared without an exit result');
  t.equal(j.result.exit_code, 1);
  t.equal(fs.readFileSync(marker, 'utf8'), 'run\n');
  const r = await d.run('xqueue', [String(id)]);
  t.match(r.stdout, /Error: executor worker disappeared without an exit result/);
});

t.test('ids increase across restarts and retention cleanup; retention removes old jobs and files', async (t) => {
  const d = await startDaemon(t, { args: ['--retention', '1s'] });
  const first = await d.batch('echo one', ['-g', '0']);
  await d.waitState(first, 'COMPLETED');
  t.ok(fs.existsSync(path.join(d.jobsDir, `${first}.log`)));
  // the job expires one second after it finished; the cleanup pass then removes it
  await waitFor(async () => (await d.jobs()).every((j) => j.id !== first), { what: 'retention removes the job' });
  t.notOk(fs.existsSync(path.join(d.jobsDir, `${first}.log`)));
  t.notOk(fs.existsSync(path.join(d.jobsDir, `${first}.result`)));
  const gone = await d.request('get', { id: first }) as any;
  t.equal(gone.error.message, 'job not found');
  await d.stop();
  await d.start();
  const second = await d.batch('sleep 60', ['-g', '0']);
  t.ok(second > first, `${second} > ${first}`);
  await d.waitState(second, 'RUNNING');
  t.ok((await d.jobs()).some((j) => j.id === second), 'running jobs are never expired');
  await d.run('xcancel', [String(second)]);
});

t.test('a daemon started from a niced shell runs itself and its jobs at nice 0', { skip: process.getuid!() !== 0 && 'needs root (only root may lower a nice value)' }, async (t) => {
  const d = new Daemon(t, tempHome(t), {});
  t.teardown(async () => {
    const st = await d.request('status', {}).catch(() => null) as any;
    await d.run('xlurm', ['stop']);
    if (st?.ok) await waitFor(() => !pidAlive(st.result.pid), { what: 'daemon exit' });
  });
  // As an installer's `nice -n 7 ./install.sh --start` would run it.
  const r = await runProcess('nice', ['-n', '7', '/usr/bin/env', '-u', 'NODE_OPTIONS', process.execPath, path.join(d.cliBin, 'xlurm'), 'start', '--backend', 'none'], { env: d.env });
  t.equal(r.code, 0, r.stderr);
  const st = await d.request('status', {}) as { result: { pid: number } };
  t.equal(os.getPriority(st.result.pid), 0, 'the daemon');
  const job = await d.run('xrun', ['-g', '0', 'nice']);
  t.same([job.code, job.stdout], [0, '0\n'], 'a job without --nice');
  const queued = await d.run('xrun', ['-g', '0', '--nice', '5', 'nice']);
  t.same([queued.code, queued.stdout], [0, '0\n'], '--nice is a queue priority, not the process nice');
});
