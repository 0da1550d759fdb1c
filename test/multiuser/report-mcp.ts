// docs/behaviour.md §26.4 and §26.6 as root, with the real nobody and daemon accounts: a user's
// report holds only their own jobs, root's the host; an agent's MCP server acts as its user and is
// refused another user's job with the daemon's words.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MULTIUSER_SKIP, accounts, as, rootDaemon, untilExists, workDir } from '../helpers/multiuser';
import { startMcp } from '../helpers/mcp';

t.test('reports and MCP servers of two users and root', { skip: MULTIUSER_SKIP }, async (t) => {
  const { nobody, daemon } = accounts();
  const d = await rootDaemon(t);
  const base = workDir(t);
  const gate = path.join(base, 'gate');
  const theirs = await d.batch(untilExists(gate), ['-g', '0', '-n', 'daemon-job'], as(daemon, { cwd: base }));
  await d.waitState(theirs, 'RUNNING');
  const mine = await d.batch('echo nobody-output', ['-g', '0', '-n', 'nobody-job'], as(nobody, { cwd: base }));
  await d.waitState(mine, 'COMPLETED');

  const noSetpriv = fs.existsSync('/usr/bin/setpriv') ? false : 'setpriv(1) (util-linux) is not installed: the MCP server cannot be started as nobody';
  t.test('nobody\'s agent: its own job yes, daemon\'s job refused with the daemon\'s message', { skip: noSetpriv }, async (t) => {
    const mcp = await startMcp(t, d, { as: nobody, cwd: base });
    const own = await mcp.call('log', { id: mine });
    t.same([own.isError, own.text], [false, 'nobody-output\n']);
    const denied = `permission denied: job belongs to daemon (UID ${daemon.uid})`;
    for (const [tool, args] of [['job', { id: theirs }], ['log', { id: theirs }], ['cancel', { id: theirs }], ['wait', { id: theirs, timeout_s: 1 }]] as const) {
      const r = await mcp.call(tool, args);
      t.same([r.isError, r.text], [true, denied], `${tool} of another user's job`);
    }
    t.equal((await d.job(theirs)).state, 'RUNNING', 'the refused cancel did nothing');
    const sub = await mcp.call('submit', { command: 'id -u', devices: 0, cwd: base });
    t.equal(sub.isError, false, sub.text);
    t.equal(sub.data.owner.uid, nobody.uid, 'a job submitted by the agent is its user\'s');
    t.equal((await mcp.call('wait', { id: sub.data.id, timeout_s: 30 })).data.state, 'COMPLETED');
    t.equal((await mcp.call('log', { id: sub.data.id })).text, `${nobody.uid}\n`);
  });

  t.test('a user\'s report holds their own jobs only; root\'s every user\'s', async (t) => {
    const file = path.join(base, 'nobody.html');
    const r = await d.run('xlurm', ['report', '--html', file], as(nobody, { cwd: base }));
    t.equal(r.code, 0, r.stderr);
    const html = fs.readFileSync(file, 'utf8');
    t.ok(html.includes('your own jobs (nobody)'));
    t.ok(html.includes('>nobody</td>'), 'nobody\'s row');
    t.notOk(html.includes('daemon'), 'nothing of the daemon account\'s job');
    const rootFile = path.join(base, 'root.html');
    const rr = await d.run('xlurm', ['report', '--html', rootFile]);
    t.equal(rr.code, 0, rr.stderr);
    const all = fs.readFileSync(rootFile, 'utf8');
    t.ok(all.includes('every user (administrator view)'));
    t.ok(all.includes('>nobody</td>'));
    t.match(all, /\d+ jobs · 0 devices/);
  });

  t.teardown(() => fs.writeFileSync(gate, ''));
});
