// Device isolation end to end (docs/behaviour.md §24.8): two fake NVML GPUs whose minor numbers
// name stand-in nodes (mknod copies of /dev/full, 1:7, and /dev/zero, 1:5: a different harmless
// device number each, so denying one is observable) in a directory the daemon's own environment
// maps /dev/ to (XLURM_DEV_DIR). A job opens its own GPU's node and is refused the other's with
// EPERM; a CPU job is refused both; `nodes` in xinfo --json; `device isolation: on | off (<why>)`
// in xlurm status (and the off line from xinfo). As root on a host with cgroups (CI).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hasCgroups, removeCgroups } from '../helpers/cgroups';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { fakeLibrary } from '../helpers/fixtures';
import type { Scope as Tap } from '../helpers/tap';

const isRoot = process.geteuid?.() === 0;
if (!isRoot || !hasCgroups) {
  t.plan(0, isRoot ? 'no cgroup hierarchy mounted' : 'needs root (CI runs as root)');
  process.exit(0);
}

const gpus = (n: number) => Array.from({ length: n }, (_, i) => `device ${i} GPU-1501a7ed-0000-4000-8000-00000000000${i} "Fake H100 80GB"`);

function tempDir(t: Tap, prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A daemon on two fake GPUs with stand-in nodes; `toml` is its configuration file. */
async function isolatedDaemon(t: Tap, toml = '', state = [...gpus(2), 'minor 0 0', 'minor 1 1']): Promise<{ d: Daemon; nodes: string[] }> {
  const dir = tempDir(t, 'xl-devs-');
  const nodes = [path.join(dir, 'nvidia0'), path.join(dir, 'nvidia1')];
  for (const [p, minor] of [[nodes[0]!, '7'], [nodes[1]!, '5']] as const) {
    const r = spawnSync('mknod', ['-m', '0666', p, 'c', '1', minor], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`mknod ${p}: ${r.stderr}`);
  }
  const fake = fakeLibrary(t, 'nvidia', state);
  const file = path.join(tempDir(t, 'xl-iso-cfg-'), 'xlurm.toml');
  fs.writeFileSync(file, `[resources]\nmin_available = "0"\n${toml}`);
  let d: Daemon | undefined;
  // Runs after the daemon's own teardown: its (empty) cgroup directories go with the test.
  t.teardown(() => { if (d) removeCgroups(d); });
  d = await startDaemon(t, { backend: 'nvidia', env: { ...fake.env, XLURM_DEV_DIR: dir }, args: ['--config', file] });
  return { d, nodes };
}


/** Opens each node once from inside a job; one line per node: `ok` or the error. */
const probe = (nodes: readonly string[]) => nodes.map((n) => `head -c1 ${n} >/dev/null 2>/tmp/.e$$ && echo ok || sed 's/.*: //' /tmp/.e$$; rm -f /tmp/.e$$`).join('\n');

t.test('a job opens its own device node and is refused the other GPU\'s', async (t) => {
  const { d, nodes } = await isolatedDaemon(t);
  const views = JSON.parse((await d.run('xinfo', ['--json'])).stdout) as Array<{ nodes: string[] }>;
  t.same(views.map((v) => v.nodes), [[nodes[0]], [nodes[1]]], 'nodes in xinfo --json, from the minor numbers');
  const st = await d.run('xlurm', ['status']);
  t.match(st.stdout, /^device isolation: on$/m);
  t.equal(JSON.parse((await d.run('xlurm', ['status', '--json'])).stdout).device_isolation, 'on');
  const xi = await d.run('xinfo', []);
  t.equal(xi.stderr, '', 'xinfo says nothing while isolation is on');

  const on0 = await d.run('xrun', ['-i', '0', 'sh', '-c', probe(nodes)]);
  t.equal(on0.stdout, 'ok\nOperation not permitted\n', on0.stderr);
  const on1 = await d.run('xrun', ['-i', '1', 'sh', '-c', probe(nodes)]);
  t.equal(on1.stdout, 'Operation not permitted\nok\n', 'the other way round');
  const both = await d.run('xrun', ['-g', '2', 'sh', '-c', probe(nodes)]);
  t.equal(both.stdout, 'ok\nok\n', 'a job with both GPUs opens both');
  const cpu = await d.run('xrun', ['-g', '0', 'sh', '-c', `${probe(nodes)}\nhead -c1 /dev/null && echo null-ok`]);
  t.equal(cpu.stdout, 'Operation not permitted\nOperation not permitted\nnull-ok\n', 'a CPU job gets neither; other devices stay allowed');
  // Outside jobs nothing changed.
  t.equal(spawnSync('head', ['-c1', nodes[1]!]).status, 0);
});

t.test('where isolation cannot apply: jobs still run, status and xinfo say why', async (t) => {
  t.test('disabled in the configuration', async (t) => {
    const { d, nodes } = await isolatedDaemon(t, 'device_isolation = false\n');
    const why = 'device isolation: off (disabled by [resources] device_isolation)';
    t.match((await d.run('xlurm', ['status'])).stdout, new RegExp(`^${why.replace(/[()[\]]/g, '\\$&')}$`, 'm'));
    const xi = await d.run('xinfo', []);
    t.equal(xi.stderr, `${why}\n`, 'xinfo says so on stderr');
    t.match(xi.stdout, /^DEVICE +STATUS +JOB +NAME\nnv:0 /, 'the table unchanged');
    t.equal((await d.run('xinfo', ['--json'])).stderr, '', 'not with --json');
    const on0 = await d.run('xrun', ['-i', '0', 'sh', '-c', probe(nodes)]);
    t.equal(on0.stdout, 'ok\nok\n', 'visibility variables only');
  });

  t.test('the library names no node', async (t) => {
    const { d, nodes } = await isolatedDaemon(t, '', gpus(2));
    t.same(JSON.parse((await d.run('xinfo', ['--json'])).stdout).map((v: { nodes: string[] }) => v.nodes), [[], []]);
    t.match((await d.run('xlurm', ['status'])).stdout, /^device isolation: off \(the device library names no device nodes \(nv\)\)$/m);
    const on0 = await d.run('xrun', ['-i', '0', 'sh', '-c', probe(nodes)]);
    t.equal(on0.code, 0);
    t.equal(on0.stdout, 'ok\nok\n');
  });
});
