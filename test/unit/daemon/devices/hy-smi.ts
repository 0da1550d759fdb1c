// HCU health from `hy-smi --healthcheck` (packages/daemon/src/devices/hy-smi.ts): finding the tool
// in the daemon's environment, parsing its rows, and running it with a deadline.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  HEALTH_PATH, HEALTH_TOOL_SEARCH, findHealthTool, healthEnv, parseHealthcheck, runHealthcheck, untrustedBecause,
} from '../../../../packages/daemon/src/devices/hy-smi';
import { pidAlive, waitFor } from '../../../helpers/wait';

const dir = t.testdir({});
const script = (name: string, body: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return p;
};

t.test('the tool: absolute override, else the fixed paths, else the daemon PATH', async (t) => {
  fs.mkdirSync(path.join(dir, 'bin'));
  const tool = script('bin/hy-smi', 'exit 0');
  fs.writeFileSync(path.join(dir, 'plain'), 'not executable', { mode: 0o644 });
  t.equal(findHealthTool({ XLURM_HCU_HEALTH_TOOL: tool, PATH: '' }), tool);
  t.throws(() => findHealthTool({ XLURM_HCU_HEALTH_TOOL: 'bin/hy-smi' }), { message: 'XLURM_HCU_HEALTH_TOOL must be an absolute path: bin/hy-smi' });
  t.throws(() => findHealthTool({ XLURM_HCU_HEALTH_TOOL: path.join(dir, 'plain') }), { message: /^XLURM_HCU_HEALTH_TOOL is not an executable file: / });
  t.throws(() => findHealthTool({ XLURM_HCU_HEALTH_TOOL: path.join(dir, 'bin') }), { message: /is not an executable file/ }, 'a directory is not a tool');
  t.same(HEALTH_TOOL_SEARCH, ['/opt/dtk/.hyhal/bin/hy-smi']);
  t.equal(findHealthTool({ PATH: `/nonexistent:bin:${path.join(dir, 'bin')}` }), tool, 'relative PATH entries are ignored');
  t.equal(findHealthTool({ XLURM_HCU_HEALTH_TOOL: '', PATH: path.join(dir, 'bin') }), tool, 'an empty override is no override');
  t.throws(() => findHealthTool({ PATH: '/nonexistent' }), { message: /^health tool hy-smi not found \(tried \/opt\/dtk\/\.hyhal\/bin\/hy-smi and the daemon's PATH\); set XLURM_HCU_HEALTH_TOOL$/ });
});

t.test('a tool another user could replace is refused (the daemon runs it as root)', async (t) => {
  const own = fs.mkdtempSync(path.join(dir, 'own-'));
  const tool = path.join(own, 'hy-smi');
  fs.writeFileSync(tool, '#!/bin/sh\n', { mode: 0o755 });
  t.equal(untrustedBecause(tool), null);
  fs.chmodSync(tool, 0o775);
  t.equal(untrustedBecause(tool), `${tool} is writable by another user`);
  t.throws(() => findHealthTool({ XLURM_HCU_HEALTH_TOOL: tool }), { message: `health tool ${tool} not used: ${tool} is writable by another user` });
  t.throws(() => findHealthTool({ PATH: own }), { message: `health tool ${tool} not used: ${tool} is writable by another user` }, 'found on PATH too');
  fs.chmodSync(tool, 0o755);
  fs.chmodSync(own, 0o777);
  t.equal(untrustedBecause(tool), `${own} is writable by another user`);
  fs.chmodSync(own, 0o1777);
  t.equal(untrustedBecause(tool), null, 'a sticky directory is fine');
  fs.chmodSync(own, 0o755);
  t.equal(untrustedBecause(tool, 12345), null, 'root-owned is fine for any daemon');
  fs.symlinkSync(tool, path.join(dir, 'link'));
  t.equal(untrustedBecause(path.join(dir, 'link')), null, 'links are followed to the file');
  if (process.geteuid?.() === 0) {
    fs.chownSync(tool, 65534, 65534);
    t.equal(untrustedBecause(tool), `${tool} is writable by another user`, "another account's file");
  }
});

t.test('rows: index and status word; Healthy in any case is healthy; the worst row wins', async (t) => {
  const out = [
    '============================ System Health Check ============================',
    'HCU[0]          : Bus Id : 0000:09:00.0         : Healthy',
    'HCU[1]          : Bus Id : 0000:0A:00.0         : Unhealthy',
    'HCU[2]:Bus Id:0000:0b:00.0:HEALTHY',
    'HCU[3]          : Bus Id : 0000:0c:00.0         : Warning',
    'HCU[4]          : Bus Id : 0000:0d:00.0         : Healthy',
    'HCU[4]          : Bus Id : 0000:0d:00.0         : Unhealthy',
    'HCU[5]          : Temperature : 40',
    '=============================== End of Log ==================================',
  ].join('\n');
  t.same([...parseHealthcheck(out)], [[0, 'ok'], [1, 'unhealthy'], [2, 'ok'], [3, 'unhealthy'], [4, 'unhealthy']]);
  t.same(parseHealthcheck('Segmentation fault\n').size, 0);
});

t.test('running it: answers, failures and the deadline', async (t) => {
  const ok = script('ok', 'echo "HCU[0] : Bus Id : 0000:09:00.0 : Healthy"');
  t.same(await runHealthcheck(ok, undefined, 2000), { ok: true, health: new Map([[0, 'ok']]) });
  t.same(await runHealthcheck(script('fails', 'echo "HCU[0] : Bus Id : x : Healthy"; echo "no driver" >&2; echo more >&2; exit 3'), undefined, 2000),
    { ok: false, error: 'hy-smi --healthcheck: exit status 3: no driver' }, 'a non-zero exit is a failure, whatever it printed');
  t.same(await runHealthcheck(script('empty', 'echo nothing useful'), undefined, 2000), { ok: false, error: 'hy-smi --healthcheck: no HCU rows in the output' });
  t.same(await runHealthcheck(script('killed', 'kill -9 $$'), undefined, 2000), { ok: false, error: 'hy-smi --healthcheck: killed by SIGKILL' });
  const missing = await runHealthcheck(path.join(dir, 'nonexistent'), undefined, 2000);
  t.match(missing, { ok: false, error: /^hy-smi --healthcheck: spawn .*ENOENT/ });

  // a hang: answered at the deadline; the tool and what it started are killed
  const pids = path.join(dir, 'pids');
  const hung = script('hung', `sleep 30 & echo "$$ $!" > ${pids}; wait`);
  const t0 = Date.now();
  t.same(await runHealthcheck(hung, undefined, 300), { ok: false, error: 'hy-smi --healthcheck timed out after 300 ms' });
  t.ok(Date.now() - t0 < 2000, `answered after ${Date.now() - t0} ms`);
  const [shell, sleeper] = fs.readFileSync(pids, 'utf8').trim().split(' ').map(Number);
  await waitFor(() => !pidAlive(shell!) && !pidAlive(sleeper!), { what: 'the tool and its child killed' });

  // stopping the daemon aborts a run in progress, and kills it
  const ac = new AbortController();
  const slowPid = path.join(dir, 'slow.pid');
  const pending = runHealthcheck(script('slow', `echo $$ > ${slowPid}.tmp; mv ${slowPid}.tmp ${slowPid}; exec sleep 30`), undefined, 10000, ac.signal);
  const slow = Number(await waitFor(() => fs.existsSync(slowPid) && fs.readFileSync(slowPid, 'utf8').trim(), { what: 'the tool started' }));
  ac.abort();
  t.same(await pending, { ok: false, error: 'hy-smi --healthcheck: aborted' });
  await waitFor(() => !pidAlive(slow), { what: 'the aborted tool killed' });
  t.same(await runHealthcheck(ok, undefined, 2000, ac.signal), { ok: false, error: 'hy-smi --healthcheck: aborted' }, 'not started once aborted');
});

t.test("the tool's environment is its own: a system PATH, the library's directory, the C locale", async (t) => {
  t.same(healthEnv('/opt/hyhal/lib'), { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C', LD_LIBRARY_PATH: '/opt/hyhal/lib' });
  t.same(healthEnv(undefined), { PATH: HEALTH_PATH, LC_ALL: 'C' }, 'no library directory known: no LD_LIBRARY_PATH');
  t.same(healthEnv('lib'), { PATH: HEALTH_PATH, LC_ALL: 'C' }, 'a relative directory is never passed');
  // Whatever this (daemon) process has in its environment stays out of the tool's.
  process.env.XLURM_TEST_LEAK = 'from the daemon';
  const saved = { path: process.env.PATH, ld: process.env.LD_LIBRARY_PATH };
  process.env.LD_LIBRARY_PATH = '/daemon/lib';
  t.teardown(() => {
    delete process.env.XLURM_TEST_LEAK;
    if (saved.ld === undefined) delete process.env.LD_LIBRARY_PATH; else process.env.LD_LIBRARY_PATH = saved.ld;
  });
  const record = path.join(dir, 'env.txt');
  const tool = script('env-dump', `/usr/bin/env -0 > ${record}\necho "HCU[0] : Bus Id : 0000:09:00.0 : Healthy"`);
  t.same(await runHealthcheck(tool, '/opt/hyhal/lib', 2000), { ok: true, health: new Map([[0, 'ok']]) });
  const env = new Map(fs.readFileSync(record, 'utf8').split('\0').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  for (const shellOwn of ['PWD', 'SHLVL', '_', 'OLDPWD']) env.delete(shellOwn); // set by sh itself
  // tap's process tracking adds its own variables to every child this test process spawns.
  for (const k of [...env.keys()]) if (k === 'NODE_OPTIONS' || k.startsWith('_TAPJS_PROCESSINFO_')) env.delete(k);
  t.same([...env].sort(), [['LC_ALL', 'C'], ['LD_LIBRARY_PATH', '/opt/hyhal/lib'], ['PATH', HEALTH_PATH]]);
  t.equal(process.env.PATH, saved.path, 'the daemon keeps its own');
});
