// A job's CPUs and memory at submission (docs/behaviour.md §24.1), [resources] against the
// host, and the job's view (§24.4).
import t from 'tap';
import * as fs from 'node:fs';
import type { Submission } from '../../../../packages/protocol/src/schemas';
import { withResources } from '../../../../packages/daemon/src/resources/requests';
import { resourcesSettings, type ResourcesSettings } from '../../../../packages/daemon/src/resources/settings';
import { formatCpuList, parseCpuList, readMeminfo } from '../../../../packages/daemon/src/resources/host';
import { applyResourceEnv } from '../../../../packages/daemon/src/resources/job-view';
import { readConfigFile } from '../../../../packages/daemon/src/config/load';

const G = 1024 ** 3;
const host = { cpus: Array.from({ length: 16 }, (_, i) => i), memTotal: 24 * G };
const spec = (o: Partial<Submission> = {}): Submission => ({ command: ['true'], cwd: '/', env: {}, name: 'x', count: 0, ...o });

t.test('[resources]: defaults, the CPU list, memory from MemTotal - reserve_memory', async (t) => {
  const d = resourcesSettings(undefined, host) as ResourcesSettings;
  t.same([d.cpuList.length, d.memory, d.minAvailable, d.memoryHighRatio, d.swap, d.requireCgroup, d.deviceIsolation, d.lowMemoryFloor, d.lowMemorySamples],
    [16, 20 * G, 8 * G, 0.85, false, false, true, 4 * G, 3]);
  const s = resourcesSettings({ cpus: '2-5,8', memory: '10G', default_cpus: 2, default_memory: '1G' }, host) as ResourcesSettings;
  t.same(s.cpuList, [2, 3, 4, 5, 8]);
  t.equal(s.memory, 10 * G);
  t.same(resourcesSettings({ cpus: '12-17' }, host), { key: 'resources.cpus', problem: 'CPU 16-17 not online on this host (online: 0-15)' });
  t.same(resourcesSettings({ cpus: 'x' }, host), { key: 'resources.cpus', problem: 'invalid CPU list \'x\': use "all" or a list such as "2-63" or "0-3,8-11"' });
  t.same(resourcesSettings({ default_cpus: 17 }, host), { key: 'resources.default_cpus', problem: '17 CPUs, but the host gives jobs at most 16' });
  t.same(parseCpuList('0-3,8'), [0, 1, 2, 3, 8]);
  t.equal(formatCpuList([8, 0, 1, 2, 3]), '0-3,8');
});

t.test('submission: the defaults, and the refusals of docs/behaviour.md §24.1', async (t) => {
  const r = resourcesSettings({ memory: '20G', default_cpus: 2, default_memory: '1G' }, host) as ResourcesSettings;
  t.match(withResources(spec(), r), { cpus: 2, mem: G });
  t.match(withResources(spec({ cpus: 4, mem: 2 * G }), r), { cpus: 4, mem: 2 * G }, 'its own request wins');
  const none = withResources(spec({ cpus: 0, mem: 0 }), r);
  t.notOk('cpus' in none || 'mem' in none, 'an explicit 0 asks for none');
  t.throws(() => withResources(spec({ cpus: 64 }), r), { code: 'INFEASIBLE', message: 'requested 64 CPUs, but the host gives jobs at most 16' });
  t.throws(() => withResources(spec({ mem: 64 * G }), r), { code: 'INFEASIBLE', message: 'requested 64G memory, but the host gives jobs at most 20G' });
});

t.test("the job's view: thread variables unless the submitter set them, XLURM_MEM in MiB", async (t) => {
  const env = new Map([['OMP_NUM_THREADS', '3']]);
  applyResourceEnv(env, { OMP_NUM_THREADS: '3' }, 4, 1536 * 1024 * 1024);
  t.equal(env.get('OMP_NUM_THREADS'), '3');
  for (const k of ['XLURM_CPUS', 'SLURM_CPUS_PER_TASK', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'NUMEXPR_NUM_THREADS', 'MAX_JOBS', 'CMAKE_BUILD_PARALLEL_LEVEL', 'PYTEST_XDIST_AUTO_NUM_WORKERS']) {
    t.equal(env.get(k), '4', k);
  }
  t.equal(env.get('XLURM_MEM'), '1536');
  const plain = new Map<string, string>();
  applyResourceEnv(plain, {}, 0, 0);
  t.equal(plain.size, 0);
});

t.test('/proc/meminfo', async (t) => {
  const file = `${t.testdir()}/meminfo`;
  fs.writeFileSync(file, 'MemTotal:       24683584 kB\nMemFree: 1 kB\nMemAvailable:   24221700 kB\n');
  t.same(readMeminfo(file), { total: 24683584 * 1024, available: 24221700 * 1024 });
  t.equal(readMeminfo('/nonexistent'), null);
});

t.test('[resources] in the configuration file: sizes as text or MiB, problems with their line', async (t) => {
  const dir = t.testdir();
  const good = `${dir}/good.toml`;
  fs.writeFileSync(good, '[resources]\nmemory = "20G"\nmin_available = 512\nmemory_high_ratio = 0.9\n');
  const r = resourcesSettings(readConfigFile(good, true).settings.resources, host) as ResourcesSettings;
  t.same([r.memory, r.minAvailable, r.memoryHighRatio], [20 * G, 512 * 1024 * 1024, 0.9]);
  const bad = `${dir}/bad.toml`;
  fs.writeFileSync(bad, '[resources]\nmemory = "12X"\nmemory_high_ratio = 1.5\nswap = "no"\n');
  t.throws(() => readConfigFile(bad, true), {
    message: [`${bad}:2: resources.memory: invalid size '12X': use a number with K, M, G or T`, `${bad}:3: resources.memory_high_ratio: must be at most 1, not 1.5`,
      `${bad}:4: resources.swap: must be a boolean, not the string "no"`].join('\n'),
  });
});
