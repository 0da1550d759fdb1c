import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDaemon } from '../helpers/daemon';
import { pidAlive, waitFor } from '../helpers/wait';

t.test('cancellation, time limits, process-group cleanup and max-running', async (t) => {
  const d = await startDaemon(t, { maxRunning: 2 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-cancel-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));

  t.test('max-running is respected and pending jobs start as slots free', async (t) => {
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) ids.push(await d.batch(`echo start >> ${dir}/mr; sleep 60`, ['-g', '0']));
    await d.waitState(ids[0]!, 'RUNNING');
    await d.waitState(ids[1]!, 'RUNNING');
    let jobs = await d.jobs(false);
    t.same(jobs.filter((j) => ids.includes(j.id as number)).map((j) => j.state), ['RUNNING', 'RUNNING', 'PENDING', 'PENDING']);
    const pending = await d.run('xqueue', []);
    t.match(pending.stdout, new RegExp(`\\n${ids[2]} +\\S+ +PENDING +cpu +- `));

    // cancel a pending job: immediate, exit 130, never started
    await d.run('xcancel', [String(ids[3])]);
    const c = await d.waitState(ids[3]!, 'CANCELLED');
    t.equal(c.started_at, null);
    t.equal(c.result.exit_code, 130);

    // cancel a running job: the next pending one starts
    await d.run('xcancel', [String(ids[0])]);
    await d.waitState(ids[0]!, 'CANCELLED');
    await d.waitState(ids[2]!, 'RUNNING');
    jobs = await d.jobs(false);
    t.equal(jobs.filter((j) => j.state === 'RUNNING').length, 2);
    await d.run('xcancel', [String(ids[1])]);
    await d.run('xcancel', [String(ids[2])]);
    await d.waitState(ids[2]!, 'CANCELLED');
    // cancelling a finished job succeeds and changes nothing
    const again = await d.run('xcancel', [String(ids[2])]);
    t.equal(again.code, 0);
    t.equal((await d.job(ids[2]!)).state, 'CANCELLED');
  });

  t.test('a background grandchild that ignores SIGTERM is gone when the job ends', async (t) => {
    const pidFile = path.join(dir, 'bg.pid');
    const r = await d.run('xrun', ['-g', '0', 'bash', '-c', `bash -c 'trap "" TERM; exec sleep 1000' & echo $! > ${pidFile}; exit 3`]);
    t.equal(r.code, 3);
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    t.ok(pid > 0);
    // The supervisor reaps the whole group before it reports the result, so it is gone already.
    t.notOk(pidAlive(pid), 'grandchild killed and reaped before the result');
  });

  t.test('cancel of a running job whose task traps SIGTERM escalates to SIGKILL', async (t) => {
    const id = await d.batch(`trap "" TERM; echo ready > ${dir}/trap; sleep 1000`, ['-g', '0']);
    await waitFor(() => fs.existsSync(path.join(dir, 'trap')));
    await d.run('xcancel', [String(id)]);
    const j = await d.waitState(id, 'CANCELLED');
    t.equal(j.result.exit_code, 130);
  });

  t.test('time limit marks TIMED_OUT with 124', async (t) => {
    const id = await d.batch('sleep 100', ['-g', '0', '-t', '1']);
    const j = await d.waitState(id, 'TIMED_OUT');
    t.equal(j.result.exit_code, 124);
    const table = await d.run('xqueue', ['--all']);
    t.match(table.stdout, new RegExp(`\\n${id} .*TIMEDOUT`));
  });
});
