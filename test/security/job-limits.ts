// Extensions 28.5-28.7 and 28.12, class "Escaping a job's limits": a root daemon on this host's
// real cgroups, jobs and notifications as the real `nobody` and `daemon` accounts, two fake GPUs
// whose nodes are stand-ins (mknod copies of /dev/full 1:7 and /dev/zero 1:5, mode 0666, so only
// the cgroup can refuse them). Each case is a way out of a job's limits that used to work:
// a job without --mem had no memory cap; a fork loop had no pids cap; --notify ran in the
// daemon's own cgroup, could open any device node, and its setsid children outlived it;
// /tmp was shared by every user's jobs; a --mem that can never be admitted waited for ever;
// a device job whose isolation failed ran without it.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hasCgroups, removeCgroups } from '../helpers/cgroups';
import type { Daemon } from '../helpers/daemon';
import { fakeLibrary } from '../helpers/fixtures';
import { MULTIUSER_SKIP, accounts, as, rootDaemon, sharedDir, workDir } from '../helpers/multiuser';
import { pidAlive, waitFor } from '../helpers/wait';
import type { Tap } from '../helpers/tap';

const skip = MULTIUSER_SKIP || (!hasCgroups && 'no cgroup hierarchy mounted');
if (skip) {
  t.plan(0, skip);
  process.exit(0);
}

const G = 1024 ** 3;
const gpus = ['device 0 GPU-1501a7ed-0000-4000-8000-000000000000 "Fake H100 80GB"', 'device 1 GPU-1501a7ed-0000-4000-8000-000000000001 "Fake H100 80GB"', 'minor 0 0', 'minor 1 1'];

/** A root daemon on two fake GPUs with stand-in nodes, `toml` in its [resources] table. */
async function limitedDaemon(t: Tap, toml = '', env: Record<string, string> = {}): Promise<{ d: Daemon; nodes: string[] }> {
  const dir = sharedDir(t, 0o755, 'xl-lim-devs');
  const nodes = [path.join(dir, 'nvidia0'), path.join(dir, 'nvidia1')];
  for (const [p, minor] of [[nodes[0]!, '7'], [nodes[1]!, '5']] as const) {
    const r = spawnSync('mknod', ['-m', '0666', p, 'c', '1', minor], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`mknod ${p}: ${r.stderr}`);
  }
  const fake = fakeLibrary(t, 'nvidia', gpus);
  const file = path.join(sharedDir(t, 0o755, 'xl-lim-cfg'), 'xlurm.toml');
  fs.writeFileSync(file, `[resources]\n${/min_available/.test(toml) ? '' : 'min_available = "0"\n'}${toml}`);
  let d: Daemon | undefined;
  t.teardown(() => { if (d) removeCgroups(d); });
  d = await rootDaemon(t, { backend: 'nvidia', env: { ...fake.env, XLURM_DEV_DIR: dir, ...env }, args: ['--config', file] });
  return { d, nodes };
}

/**
 * The memory limit and pids.max of the cgroups listed in a /proc/<pid>/cgroup text (v1 controllers
 * on the hybrid layout, else v2), read here as root: the daemon's cgroup tree is not readable by
 * the jobs' users.
 */
function limitsOf(procCgroup: string): { mem: string | undefined; pids: string | undefined } {
  const out: { mem: string | undefined; pids: string | undefined } = { mem: undefined, pids: undefined };
  const read = (f: string) => { try { return fs.readFileSync(f, 'utf8').trim(); } catch { return undefined; } };
  for (const line of procCgroup.split('\n')) {
    const [, ctl, p] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (ctl === 'memory') out.mem = read(`/sys/fs/cgroup/memory${p}/memory.limit_in_bytes`);
    if (ctl === 'pids') out.pids = read(`/sys/fs/cgroup/pids${p}/pids.max`);
    if (ctl === '' && fs.existsSync(`/sys/fs/cgroup${p}/memory.max`)) { out.mem = read(`/sys/fs/cgroup${p}/memory.max`); out.pids = read(`/sys/fs/cgroup${p}/pids.max`); }
  }
  return out;
}

/** A job of uid/gid that lists its cgroups and is held until their limits are read (here, as root). */
async function jobLimits(t: Tap, d: Daemon, uid: number, gid: number, args: string[] = []): Promise<{ mem: string | undefined; pids: string | undefined }> {
  const work = workDir(t);
  const id = await d.batch(`cat /proc/self/cgroup > ${work}/cg; echo END >> ${work}/cg; while [ ! -e ${work}/go ]; do sleep 0.05; done`,
    ['-g', '0', ...args], { uid, gid, cwd: work });
  const l = limitsOf(await readWhenDone(path.join(work, 'cg')));
  fs.writeFileSync(path.join(work, 'go'), '');
  await d.waitState(id, 'COMPLETED');
  return l;
}

/** Opens each node once; one line per node: `ok` or the error. */
const probe = (nodes: readonly string[]) => nodes.map((n) => `head -c1 ${n} >/dev/null 2>/tmp/.e$$ && echo ok || sed 's/.*: //' /tmp/.e$$; rm -f /tmp/.e$$`).join('\n');

const readWhenDone = (file: string) => waitFor(() => {
  try { const s = fs.readFileSync(file, 'utf8'); return s.endsWith('END\n') ? s : undefined; } catch { return undefined; }
}, { what: file, timeout: 20000 });

t.test('a job without --mem is capped at [resources] memory, and all jobs together too', async (t) => {
  const { nobody } = accounts();
  const { d } = await limitedDaemon(t, 'memory = "2G"\n');
  t.equal((await jobLimits(t, d, nobody.uid, nobody.gid)).mem, String(2 * G), "its own cgroup's limit is [resources] memory");
  t.equal((await jobLimits(t, d, nobody.uid, nobody.gid, ['--mem', '64M'])).mem, String(64 * 1024 * 1024), 'its own --mem where it has one');
  const base = fs.readdirSync('/sys/fs/cgroup/memory/xlurm').map((n) => path.join('/sys/fs/cgroup/memory/xlurm', n))
    .find((b) => fs.existsSync(path.join(b, 'memory.limit_in_bytes')) && fs.readFileSync(path.join(b, 'memory.limit_in_bytes'), 'utf8').trim() === String(2 * G));
  t.ok(base, "the daemon's subtree is limited to [resources] memory as well");
});

t.test('pids_max: 4096 by default, and a fork loop stops inside the job (the host goes on)', async (t) => {
  const { nobody } = accounts();
  const { d } = await limitedDaemon(t);
  t.equal((await jobLimits(t, d, nobody.uid, nobody.gid)).pids, '4096', 'pids.max 4096 without a setting');
  const small = await limitedDaemon(t, 'pids_max = 40\n');
  // perl: fork(2) itself, without a shell's retries; each child sleeps until the job ends.
  const loop = `/usr/bin/perl -e 'my $n = 0; while (1) { my $p = fork; if (!defined $p) { printf "stopped after %d errno %d\\n", $n, $!+0; exit 0 } if ($p == 0) { sleep 60; exit 0 } $n++ }'`;
  const f = await small.d.run('xrun', ['-g', '0', 'bash', '-c', loop], as(nobody, { cwd: '/' }));
  t.match(f.stdout, /^stopped after (\d+) errno 11$/m, 'fork fails with EAGAIN');
  t.ok(Number(/after (\d+)/.exec(f.stdout)?.[1]) < 40, 'below the limit');
  t.equal(f.code, 0, 'the job itself ended normally, its sleepers killed with it');
  t.equal((await small.d.run('xlurm', ['status'])).code, 0, 'the daemon still serves');
});

t.test('--notify runs in a cgroup of its own, opens no device node, and its setsid child dies at its end', async (t) => {
  const { nobody } = accounts();
  const { d, nodes } = await limitedDaemon(t);
  const work = workDir(t);
  const out = path.join(work, 'notify.out');
  const go = path.join(work, 'go');
  const notify = [
    `exec > ${out} 2>&1`,
    'cat /proc/self/cgroup',
    probe(nodes),
    `setsid sleep 1000 < /dev/null > /dev/null 2>&1 & echo "child $!"`,
    'echo END',
    `while [ ! -e ${go} ]; do sleep 0.05; done`,
  ].join('\n');
  const id = await d.batch(probe(nodes), ['-i', '0', '--mem', '256M', '--notify', notify], as(nobody, { cwd: work }));
  const j = await d.waitState(id, 'COMPLETED');
  const note = await readWhenDone(out);
  const log = (await d.run('xqueue', [String(id), '--log'], as(nobody, { cwd: work }))).stdout;
  t.match(log, /^ok\nOperation not permitted\n/, 'the job itself opens its own GPU only');
  t.match(note, new RegExp(`^\\d+:[^:]*memory[^:]*:/xlurm/[0-9a-f]{12}/notify-${id}$`, 'm'), "its own cgroup: notify-<id>, not the daemon's");
  t.notMatch(note, new RegExp(`/job-${id}$`, 'm'), "nor the job's");
  t.same(limitsOf(note), { mem: String(256 * 1024 * 1024), pids: '4096' }, "the job's memory and pids limits");
  t.match(note, /^Operation not permitted\nOperation not permitted\n/m, "no accelerator node at all, not even the job's own");
  const child = Number(/^child (\d+)$/m.exec(note)?.[1]);
  t.ok(child > 0 && pidAlive(child), 'its setsid child runs while it does');
  fs.writeFileSync(go, '');
  await waitFor(() => !pidAlive(child), { what: "the notification's setsid child to be killed", timeout: 15000 });
  t.pass('the setsid child is gone once the notification ended');
  t.equal(j.state, 'COMPLETED');
});

t.test('private_tmp: each job sees its own empty 0700 /tmp, another cannot see it, and it is gone at the end', async (t) => {
  const { nobody, daemon } = accounts();
  const { d } = await limitedDaemon(t, 'private_tmp = true\nprivate_tmp_size = "64M"\n');
  // Not under /tmp: the jobs' own /tmp hides everything there, their working directory too.
  const work = fs.mkdtempSync('/var/tmp/xl-lim-work-');
  fs.chmodSync(work, 0o777);
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const go = path.join(work, 'go');
  const a = path.join(work, 'a.out');
  const b = path.join(work, 'b.out');
  fs.writeFileSync(`/tmp/xl-lim-host-${process.pid}`, 'host\n');
  t.teardown(() => fs.rmSync(`/tmp/xl-lim-host-${process.pid}`, { force: true }));
  const first = await d.batch([
    `exec > ${a} 2>&1`, 'stat -c "%u %a" /tmp /dev/shm', 'ls -A /tmp | wc -l', 'echo secret > /tmp/mine', 'echo $$ > ' + path.join(work, 'a.pid'),
    'echo END', `while [ ! -e ${go} ]; do sleep 0.05; done`,
  ].join('\n'), ['-g', '0'], as(nobody, { cwd: work }));
  const seen = await readWhenDone(a);
  t.match(seen, /^65534 700\n65534 700\n0\n/, 'owned by the job, mode 0700, empty (the host file is not seen)');
  const pid = Number(fs.readFileSync(path.join(work, 'a.pid'), 'utf8'));
  const ns = fs.readlinkSync(`/proc/${pid}/ns/mnt`);
  t.not(ns, fs.readlinkSync('/proc/self/ns/mnt'), 'a mount namespace of its own');
  t.notOk(fs.existsSync('/tmp/mine'), "the job's file is not in the host's /tmp");
  const second = await d.batch([`exec > ${b} 2>&1`, 'stat -c "%u %a" /tmp', 'ls -A /tmp | wc -l', 'echo END'].join('\n'), ['-g', '0'], as(daemon, { cwd: work }));
  await d.waitState(second, 'COMPLETED');
  t.equal(await readWhenDone(b), '1 700\n0\nEND\n', "another user's job has its own, and sees nothing of the first's");
  fs.writeFileSync(go, '');
  await d.waitState(first, 'COMPLETED');
  // The tmpfs lives only as long as a process of its namespace does.
  await waitFor(() => !fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).some((p) => {
    try { return fs.readlinkSync(`/proc/${p}/ns/mnt`) === ns; } catch { return false; }
  }), { what: "no process left in the first job's mount namespace", timeout: 15000 });
  t.pass("the first job's /tmp is gone with its namespace: nothing to remove by path");
});

t.test('a --mem admission can never start is refused at submission: --immediate exits 69', async (t) => {
  const { nobody } = accounts();
  const memTotal = Number(/^MemTotal:\s+(\d+) kB$/m.exec(fs.readFileSync('/proc/meminfo', 'utf8'))![1]) * 1024;
  const { d } = await limitedDaemon(t, `memory = "${Math.floor(memTotal / 1024 / 1024)}M"\nmin_available = "8G"\n`);
  const mem = `${Math.floor((memTotal - 8 * G) / 1024 / 1024) + 1024}M`;
  const r = await d.run('xrun', ['--immediate', '-g', '0', '--mem', mem, 'true'], as(nobody, { cwd: '/' }));
  t.equal(r.code, 69, r.stderr);
  t.match(r.stderr, /needs \S+ memory; at most \S+ can ever be given here \(min_available 8G\)/);
  t.same(await d.jobs(), [], 'nothing stored');
});

t.test("isolation fails closed: a device job whose cgroup cannot be made is refused, and status says it is failing", async (t) => {
  const { nobody } = accounts();
  // Isolation is found (the host's devices controller), but no job cgroup can be made under this root.
  const { d, nodes } = await limitedDaemon(t, '', { XLURM_CGROUP_ROOT: '/proc/xlurm-no-such-dir' });
  const r = await d.run('xrun', ['-i', '0', 'sh', '-c', `echo ran; ${probe(nodes)}`], as(nobody, { cwd: '/' }));
  t.equal(r.code, 1);
  t.notMatch(r.stdout, /ran/, 'its command never ran');
  t.match(r.stderr, /cannot enforce the job's limits: cannot create cgroup \/proc\/xlurm-no-such-dir\/\S+: ENOENT/);
  const st = (await d.run('xlurm', ['status'])).stdout;
  t.match(st, /^device isolation: failing \(cannot create cgroup \/proc\/xlurm-no-such-dir\/\S+: ENOENT[^;]*; 1 job\(s\) refused since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)$/m);
  t.match((await d.run('xinfo', [])).stderr, /^device isolation: failing \(/m, 'xinfo says so on stderr');
  const free = await d.run('xrun', ['-i', '0', 'true'], as(nobody, { cwd: '/' }));
  t.equal(free.code, 1, 'the devices were released: the next job gets the same GPU (and is refused the same way)');
  t.match((await d.run('xlurm', ['status'])).stdout, /2 job\(s\) refused/);
  const cpu = await d.run('xrun', ['-g', '0', 'echo', 'cpu'], as(nobody, { cwd: '/' }));
  t.same([cpu.code, cpu.stdout], [0, 'cpu\n'], 'a CPU-only job is not affected');
  const off = await limitedDaemon(t, 'device_isolation = false\n', { XLURM_CGROUP_ROOT: '/proc/xlurm-no-such-dir' });
  const ran = await off.d.run('xrun', ['-i', '0', 'echo', 'ran'], as(nobody, { cwd: '/' }));
  t.same([ran.code, ran.stdout], [0, 'ran\n'], 'device_isolation = false runs device jobs without isolation');
});
