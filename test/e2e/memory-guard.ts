// The low-memory guard end to end (docs/behaviour.md §24.7): a floor far above the host's
// MemAvailable, so the first sample is already low; the running job (no --mem: all its memory
// counts) is stopped with SIGTERM and ends OUT_OF_MEMORY, exit 70, with the guard's error. A job
// within its request is never stopped. As root on a host with cgroups (CI): the guard measures
// jobs through their cgroups.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hasCgroups, removeCgroups } from '../helpers/cgroups';
import { startDaemon, type Daemon } from '../helpers/daemon';
import { waitFor } from '../helpers/wait';
import type { Scope as Tap } from '../helpers/tap';

const isRoot = process.geteuid?.() === 0;
if (!isRoot || !hasCgroups) {
  t.plan(0, isRoot ? 'no cgroup hierarchy mounted' : 'needs root (CI runs as root)');
  process.exit(0);
}

function tempDir(t: Tap): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-guard-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}


async function guardedDaemon(t: Tap, resources: string): Promise<Daemon> {
  const file = path.join(tempDir(t), 'xlurm.toml');
  fs.writeFileSync(file, `[resources]\nmin_available = "0"\n${resources}`);
  let d: Daemon | undefined;
  t.teardown(() => { if (d) removeCgroups(d); });
  d = await startDaemon(t, { backend: 'none', args: ['--config', file] });
  return d;
}

t.test('below the floor: the job is stopped, OUT_OF_MEMORY, exit 70, the guard\'s error', async (t) => {
  const d = await guardedDaemon(t, 'low_memory_floor = "1000T"\nlow_memory_samples = 1\n');
  const dir = tempDir(t);
  const id = await d.batch(`trap 'echo got TERM > ${dir}/term; exit 0' TERM; while :; do sleep 0.1; done`, ['-g', '0']);
  await d.waitState(id, 'RUNNING');
  const j = await d.waitState(id, 'OUT_OF_MEMORY', 15000);
  t.equal(j.result.exit_code, 70);
  t.match(j.result.error, /^stopped by the low-memory guard: MemAvailable \d+(\.\d)?[KMGT]? below 1000T for 2 s$/);
  t.equal(fs.readFileSync(path.join(dir, 'term'), 'utf8'), 'got TERM\n', 'SIGTERM first: the job could clean up (and exit 0: still OUT_OF_MEMORY)');
  await waitFor(() => /low-memory guard: job \d+: stopped by the low-memory guard: .* \(it used [^)]+\)/.test(d.output), { what: 'the log line' });
  const q = await d.run('xqueue', [String(id)]);
  t.match(q.stdout, /^Job \d+: OutOfMemory\n[^]*\nExit code: 70\nError: stopped by the low-memory guard: MemAvailable /m, 'xqueue shows it');
});

t.test('a job within its request is left alone', async (t) => {
  const d = await guardedDaemon(t, 'low_memory_floor = "1000T"\nlow_memory_samples = 1\n');
  const id = await d.batch('sleep 30', ['-g', '0', '--mem', '1G']);
  await d.waitState(id, 'RUNNING');
  await waitFor(() => /no job uses more memory than it asked for/.test(d.output), { what: 'the guard has sampled and declined', timeout: 10000 });
  t.equal((await d.job(id)).state, 'RUNNING');
  await d.run('xcancel', [String(id)]);
  await d.waitState(id, 'CANCELLED');
});
