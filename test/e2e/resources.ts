// Host CPUs and memory end to end (docs/behaviour.md §24.1-§24.6): -c/--mem with the
// submission refusals, admission by the sums and by MemAvailable, a cgroup per job whose limits
// the job sees in its own cgroup files, the thread variables, OUT_OF_MEMORY, nothing escaping a
// job, fail-closed starts, --immediate, and a limited job adopted across a daemon restart. As
// root on a host with cgroups (CI); every cgroup a test makes is gone when it ends.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cgroupInstance, cgroupMounts, hasCgroups, removeCgroups } from '../helpers/cgroups';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { waitFor } from '../helpers/wait';
import { waitMarker } from '../helpers/devices';
import { fakeLibrary } from '../helpers/fixtures';
import type { Scope as Tap } from '../helpers/tap';

const isRoot = process.geteuid?.() === 0;
if (!isRoot || !hasCgroups) {
  t.plan(0, isRoot ? 'no cgroup hierarchy mounted' : 'needs root (CI runs as root)');
  process.exit(0);
}
const MiB = 1024 * 1024;

function tempDir(t: Tap): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-res-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A daemon reading `toml` as its configuration file (MemAvailable's floor at 0 unless the test sets it). */
async function withConfig(t: Tap, toml: string, env: Record<string, string> = {}): Promise<Daemon> {
  const file = path.join(tempDir(t), 'xlurm.toml');
  fs.writeFileSync(file, /min_available/.test(toml) ? toml : toml.replace('[resources]\n', '[resources]\nmin_available = "0"\n'));
  let daemon: Daemon | undefined;
  // Runs after the daemon's own teardown: a job that ended while no daemon ran leaves its cgroup.
  t.teardown(() => { if (daemon) removeCgroups(daemon); });
  daemon = await startDaemon(t, { args: ['--config', file], env });
  return daemon;
}

/** The directories of this daemon's cgroups (layout.ts: `<mount>/xlurm/<hash of the home>`). */
function cgroupBases(d: Daemon): string[] {
  return cgroupMounts().filter((m) => m.v2 || /(^|,)(memory|cpu|cpuset|pids|cpuacct)(,|$)/.test(m.options))
    .map((m) => path.join(m.mount, 'xlurm', cgroupInstance(d)));
}

const jobCgroups = (d: Daemon, id: number) => cgroupBases(d).map((b) => path.join(b, `job-${id}`)).filter((p) => fs.existsSync(p));

/** What a job prints about its own cgroup: memory limit, CFS quota (or cpu.max) and CPU set, whatever the layout. */
const SHOW_LIMITS = String.raw`
for line in $(cat /proc/self/cgroup); do
  ctl=$(echo "$line" | cut -d: -f2); p=$(echo "$line" | cut -d: -f3)
  case "$ctl" in
    memory) echo "mem=$(cat /sys/fs/cgroup/memory$p/memory.limit_in_bytes)";;
    cpu|cpu,cpuacct) echo "quota=$(cat /sys/fs/cgroup/$ctl$p/cpu.cfs_quota_us)";;
    cpuset) echo "cpuset=$(cat /sys/fs/cgroup/cpuset$p/cpuset.cpus)";;
    "") if [ -f /sys/fs/cgroup$p/memory.max ]; then echo "mem=$(cat /sys/fs/cgroup$p/memory.max)"; echo "cpumax=$(cat /sys/fs/cgroup$p/cpu.max)"; echo "cpuset=$(cat /sys/fs/cgroup$p/cpuset.cpus)"; fi;;
  esac
done`;

t.test('the limits are visible from inside the job, with the thread variables and XLURM_MEM', async (t) => {
  const d = await withConfig(t, '[resources]\n');
  const r = await d.run('xrun', ['-g', '0', '-c', '1', '--mem', '256M', 'bash', '-c', `${SHOW_LIMITS}\nenv | grep -E '^(XLURM_CPUS|OMP_NUM_THREADS|MKL_NUM_THREADS|MAX_JOBS|XLURM_MEM)=' | sort`],
    { env: { MKL_NUM_THREADS: '7' } });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /^mem=268435456$/m, 'memory limit 256M');
  t.ok(/^quota=100000$/m.test(r.stdout) || /^cpumax=100000 100000$/m.test(r.stdout), `one CPU of quota: ${r.stdout}`);
  t.match(r.stdout, /^cpuset=\d+$/m, 'pinned to one CPU');
  t.match(r.stdout, /^OMP_NUM_THREADS=1$/m);
  t.match(r.stdout, /^MAX_JOBS=1$/m);
  t.match(r.stdout, /^XLURM_CPUS=1$/m);
  t.match(r.stdout, /^MKL_NUM_THREADS=7$/m, "the submitter's own value wins");
  t.match(r.stdout, /^XLURM_MEM=256$/m, 'the limit in MiB');
  const [id] = (await d.jobs()).map((j) => j.id as number);
  const job = await d.job(id!);
  t.equal(job.cpus, 1);
  t.equal(job.mem, 256 * MiB);
  t.type(job.result.peak_memory, 'number', 'peak memory measured');
  t.type(job.result.cpu_seconds, 'number', 'CPU time measured');
  t.same(jobCgroups(d, id!), [], 'its cgroups are gone after the job');
  const plain = await d.run('xrun', ['-g', '0', 'bash', '-c', 'env | grep -c -E "^(OMP_NUM_THREADS|XLURM_MEM)=" || true']);
  t.equal(plain.stdout, '0\n', 'no variables without a request');
});

t.test("the CPU set comes from the NUMA node of the job's GPU (docs/behaviour.md §24.3)", async (t) => {
  if (os.availableParallelism() < 2) { t.pass('one CPU only: nothing to prefer'); return; }
  // A fake sysfs (the daemon's own XLURM_SYSFS_ROOT): GPU 0 at 0000:3b:00.0 on node 1, whose only CPU is 1.
  const sysfs = tempDir(t);
  fs.mkdirSync(path.join(sysfs, 'bus/pci/devices/0000:3b:00.0'), { recursive: true });
  fs.writeFileSync(path.join(sysfs, 'bus/pci/devices/0000:3b:00.0/numa_node'), '1\n');
  fs.mkdirSync(path.join(sysfs, 'devices/system/node/node1'), { recursive: true });
  fs.writeFileSync(path.join(sysfs, 'devices/system/node/node1/cpulist'), '1\n');
  const fake = fakeLibrary(t, 'nvidia', ['device 0 GPU-numa-0 "Fake H100"', 'device 1 GPU-numa-1 "Fake H100"', 'pci 0 0000:3b:00.0']);
  const file = path.join(tempDir(t), 'xlurm.toml');
  fs.writeFileSync(file, '[resources]\nmin_available = "0"\n');
  let d: Daemon | undefined;
  t.teardown(() => { if (d) removeCgroups(d); });
  d = await startDaemon(t, { backend: 'nvidia', args: ['--config', file], env: { ...fake.env, XLURM_SYSFS_ROOT: sysfs } });
  const near = await d.run('xrun', ['-i', '0', '-c', '1', 'bash', '-c', SHOW_LIMITS]);
  t.equal(near.code, 0, near.stderr);
  t.match(near.stdout, /^cpuset=1$/m, "GPU 0's node 1: CPU 1, not the first free CPU 0");
  const unknown = await d.run('xrun', ['-i', '1', '-c', '1', 'bash', '-c', SHOW_LIMITS]);
  t.equal(unknown.code, 0, unknown.stderr);
  t.match(unknown.stdout, /^cpuset=0$/m, 'a GPU whose node is unknown: the first free CPU, as before');
});

t.test('submission refusals (docs/behaviour.md §24.1), exit 69 with --immediate', async (t) => {
  const d = await withConfig(t, '[resources]\nmemory = "20G"\n');
  const cpus = os.availableParallelism();
  const many = await d.run('xrun', ['-g', '0', '-c', '64', 'true']);
  t.same([many.code, many.stderr], [1, `xlurm: requested 64 CPUs, but the host gives jobs at most ${cpus}\n`]);
  const big = await d.run('xbatch', ['-g', '0', '--mem', '64G', '--wrap', 'true']);
  t.same([big.code, big.stderr], [1, 'xlurm: requested 64G memory, but the host gives jobs at most 20G\n']);
  const never = await d.run('xrun', ['--immediate', '-g', '0', '--mem', '64G', 'true']);
  t.same([never.code, never.stderr], [69, 'xlurm: requested 64G memory, but the host gives jobs at most 20G\n']);
  const bad = await d.run('xrun', ['-g', '0', '--mem', '12X', 'true']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /invalid size '12X': use a number with K, M, G or T/);
  t.equal((await d.jobs()).length, 0, 'refused at submission: no job');
});

t.test('defaults from [resources]', async (t) => {
  const d = await withConfig(t, '[resources]\ndefault_cpus = 1\ndefault_memory = "128M"\n');
  const id = await d.batch('true', ['-g', '0']);
  const j = await d.waitState(id, 'COMPLETED');
  t.same([j.cpus, j.mem, j.spec.cpus, j.spec.mem], [1, 128 * MiB, 1, 128 * MiB]);
  const own = await d.waitState(await d.batch('true', ['-g', '0', '--mem', '64M']), 'COMPLETED');
  t.equal(own.mem, 64 * MiB, 'its own --mem wins');
});

t.test('admission: a second job waits until the memory is free again; --immediate exits 75', async (t) => {
  const d = await withConfig(t, '[resources]\nmemory = "1G"\n');
  const shown = JSON.parse((await d.run('xlurm', ['config', 'show', '--json'])).stdout).config.resources;
  t.match(shown, { cpus: 'all', memory: '1G', min_available: '0', memory_high_ratio: 0.85, swap: false, require_cgroup: false }, 'config show lists [resources]');
  const marker = path.join(tempDir(t), 'go');
  t.teardown(() => fs.writeFileSync(marker, ''));
  const first = await d.batch(waitMarker(marker), ['-g', '0', '--mem', '600M']);
  await d.waitState(first, 'RUNNING');
  const second = await d.batch('true', ['-g', '0', '--mem', '600M']);
  await waitFor(async () => (await d.job(second)).reason !== null, { what: 'a reason' });
  const pending = await d.job(second);
  t.equal(pending.state, 'PENDING');
  t.same(pending.reason, { code: 'Resources', message: `needs 600M memory: 424M of 1G free (job ${first} root 600M)` }, 'the holder named (docs/behaviour.md §28.6)');
  const now = await d.run('xrun', ['--immediate', '-g', '0', '--mem', '600M', 'true']);
  t.equal(now.code, 75, 'held now: 75');
  t.match(now.stderr, /could not start immediately/);
  fs.writeFileSync(marker, '');
  await d.waitState(second, 'COMPLETED');
});

t.test('MemAvailable: a job waits while the host has less than its memory beyond min_available', async (t) => {
  // A floor that MemTotal can meet beside the job (else it is refused at submission, §28.6) but
  // MemAvailable, less than MemTotal by what the host itself uses, cannot.
  const total = Number(/^MemTotal:\s+(\d+) kB$/m.exec(fs.readFileSync('/proc/meminfo', 'utf8'))![1]) * 1024;
  const floor = `${Math.floor(total / MiB) - 16}M`;
  const d = await withConfig(t, `[resources]\nmin_available = "${floor}"\n`);
  const id = await d.batch('true', ['-g', '0', '--mem', '1M']);
  await waitFor(async () => (await d.job(id)).reason !== null, { what: 'a reason' });
  t.match((await d.job(id)).reason, { code: 'Resources', message: /^needs 1M memory: \S+ available beyond the \S+ floor$/ });
  const never = await d.run('xrun', ['--immediate', '-g', '0', '--mem', '32M', 'true']);
  t.equal(never.code, 69, 'more than MemTotal can ever leave beside the floor: refused at submission (§28.6)');
  t.equal((await d.run('xcancel', [String(id)])).code, 0);
});

t.test('OUT_OF_MEMORY: the kernel kills a job over its limit, exit 137', async (t) => {
  const d = await withConfig(t, '[resources]\n');
  // tail keeps a line without newline in memory: it grows until the limit stops it.
  const r = await d.run('xrun', ['-g', '0', '--mem', '64M', 'bash', '-c', 'head -c 1G /dev/zero | tail > /dev/null']);
  t.equal(r.code, 137, r.stderr);
  t.match(r.stderr, /out of memory: the job exceeded its memory limit of 64M \(peak \d+(\.\d)?M\)/);
  const [j] = await d.jobs();
  const job = await d.job(j!.id as number);
  t.equal(job.state, 'OUT_OF_MEMORY');
  t.equal(job.result.exit_code, 137);
  t.ok(job.result.peak_memory > 32 * MiB && job.result.peak_memory <= 65 * MiB, `peak ${job.result.peak_memory}`);
  const detail = await d.run('xqueue', [String(job.id)]);
  t.match(detail.stdout, /^Job \d+: OutOfMemory$/m);
});

t.test('nothing escapes: a setsid descendant dies with its job', async (t) => {
  const d = await withConfig(t, '[resources]\n');
  const dir = tempDir(t);
  const pidFile = path.join(dir, 'escaped.pid');
  const r = await d.run('xrun', ['-g', '0', 'bash', '-c', `setsid bash -c 'echo $$ > ${pidFile}; exec sleep 1000' < /dev/null > /dev/null 2>&1 & while [ ! -s ${pidFile} ]; do sleep 0.01; done`]);
  t.equal(r.code, 0, r.stderr);
  const pid = Number(fs.readFileSync(pidFile, 'utf8'));
  t.ok(pid > 0);
  let alive = true;
  try { process.kill(pid, 0); } catch { alive = false; }
  t.notOk(alive, 'the escaped process is gone once the job has ended');
});

t.test('fail closed: a job that asks for memory does not start without its cgroup', async (t) => {
  const d = await withConfig(t, '[resources]\n', { XLURM_CGROUP_ROOT: '/proc/xlurm-no-such-dir' });
  const r = await d.run('xrun', ['-g', '0', '--mem', '64M', 'echo', 'ran']);
  t.equal(r.code, 1);
  t.match(r.stderr, /xlurm: cannot enforce the job's limits: cannot create cgroup \/proc\/xlurm-no-such-dir\/\S+: ENOENT/);
  t.notMatch(r.stdout, /ran/);
  const [j] = await d.jobs();
  t.match(await d.job(j!.id as number), { state: 'FAILED', result: { error: /^cannot enforce the job's limits: / } });
  const plain = await d.run('xrun', ['-g', '0', 'echo', 'ran']);
  t.same([plain.code, plain.stdout], [0, 'ran\n'], 'a job that asks for nothing still runs');
  const strict = await withConfig(t, '[resources]\nrequire_cgroup = true\n', { XLURM_CGROUP_ROOT: '/proc/xlurm-no-such-dir' });
  const s = await strict.run('xrun', ['-g', '0', 'echo', 'ran']);
  t.equal(s.code, 1, 'require_cgroup: no job runs without one');
  t.match(s.stderr, /cannot enforce the job's limits/);
});

t.test('a daemon restart adopts a running limited job: still limited, cleaned up at its end', async (t) => {
  const d = await withConfig(t, '[resources]\n');
  const marker = path.join(tempDir(t), 'go');
  t.teardown(() => fs.writeFileSync(marker, ''));
  const id = await d.batch(waitMarker(marker), ['-g', '0', '--mem', '128M']);
  await d.waitState(id, 'RUNNING');
  await waitFor(() => jobCgroups(d, id).length > 0, { what: 'the job\'s cgroup' });
  const dirs = jobCgroups(d, id);
  const limitFile = (ds: string[]) => ds.map((p) => [path.join(p, 'memory.limit_in_bytes'), path.join(p, 'memory.max')]).flat().find((f) => fs.existsSync(f))!;
  t.equal(fs.readFileSync(limitFile(dirs), 'utf8').trim(), String(128 * MiB));
  await d.kill();
  await d.start();
  t.equal((await d.job(id)).state, 'RUNNING', 'adopted');
  t.same(jobCgroups(d, id), dirs, 'its cgroups are untouched');
  t.equal(fs.readFileSync(limitFile(dirs), 'utf8').trim(), String(128 * MiB), 'still limited');
  fs.writeFileSync(marker, '');
  const j = await d.waitState(id, 'COMPLETED');
  t.type(j.result.peak_memory, 'number', 'measured by the new daemon');
  await waitFor(() => jobCgroups(d, id).length === 0, { what: 'its cgroups removed' });
  t.pass('cleaned up at the end');
});
