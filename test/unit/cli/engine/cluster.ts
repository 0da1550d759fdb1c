// The clients' own read of [cluster] (docs/behaviour.md §27.1): no table means this host's daemon;
// the table's strings and its gres inline table (or [cluster.gres]); mistakes name file, line and key.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_GRES, parseCluster, readCluster } from '../../../../packages/cli/src/engine/cluster';

t.test('no [cluster] table: the local engine', async (t) => {
  t.equal(parseCluster('[daemon]\nmax_running = 3\n', 'f').engine, '');
  t.same(parseCluster('', 'f').gres, DEFAULT_GRES);
  t.equal(readCluster({ XLURM_CONFIG: '/dev/null' }).engine, '');
});

t.test('the table, its comments and an inline gres table', async (t) => {
  const c = parseCluster([
    '[daemon]', 'max_running = 3', '', '[cluster]  # client mode',
    'engine = "slurm" # drive Slurm', "partition = 'gpu#1'", 'gres = { nv = "gpu", asc = "npu" }', '[limits]', 'engine = 1',
  ].join('\n'), 'f');
  t.same(c, { engine: 'slurm', partition: 'gpu#1', gres: { nvidia: 'gpu', ascend: 'npu' }, file: 'f' });
  const sub = parseCluster('[cluster]\nengine = "slurm"\n[cluster.gres]\nmtt = "musa"\n', 'f');
  t.same(sub.gres, { mthreads: 'musa' });
});

t.test('mistakes name the file, the line and the key', async (t) => {
  t.throws(() => parseCluster('[cluster]\nengine = "pbs"\n', '/x.toml'), { message: `/x.toml:2: cluster.engine: invalid engine 'pbs': use "" or "slurm"` });
  t.throws(() => parseCluster('[cluster]\nengine = slurm\n', '/x.toml'), { message: '/x.toml:2: cluster.engine: expected a string' });
  t.throws(() => parseCluster('[cluster]\nqueue = "a"\n', '/x.toml'), { message: '/x.toml:2: cluster.queue: unknown key' });
  t.throws(() => parseCluster('[cluster]\ngres = { nvidia = "gpu" }\n', '/x.toml'), { message: /cluster\.gres\.nvidia: unknown vendor 'nvidia'/ });
  t.throws(() => parseCluster('[cluster]\ngres = { nv = "g p u" }\n', '/x.toml'), { message: /invalid GRES name 'g p u'/ });
});

t.test('the file: $XLURM_CONFIG; one the caller cannot read has no [cluster]', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-cluster-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const f = path.join(dir, 'x.toml');
  fs.writeFileSync(f, '[cluster]\nengine = "slurm"\n');
  t.equal(readCluster({ XLURM_CONFIG: f }).engine, 'slurm');
  t.equal(readCluster({ XLURM_CONFIG: path.join(dir, 'none.toml') }).engine, '');
});
