// Per-user limits (docs/behaviour.md §22.4): the tables, the admit step's UserLimit, the messages.
import t from 'tap';
import { describeUserLimits, explainUserLimit, hasUserLimits, limitsOf, pendingLimitMessage, userLimitHit, userLimitsFromFile } from '../../../../packages/daemon/src/scheduler/user-limits';
import { schedule, type PendingJob } from '../../../../packages/daemon/src/scheduler/schedule';
import { sizeBytes } from '@xlurm/protocol';
import type { Device } from '@xlurm/protocol';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readConfigFile } from '../../../../packages/daemon/src/config/load';
import { loadDaemonConfig } from '../../../../packages/daemon/src/config/daemon';
import { parseDaemonArgs } from '../../../../packages/daemon/src/config/args';

const G = 1024 ** 3;
const table = userLimitsFromFile({ default: { running_jobs: 2, memory: '64G' }, alice: { devices: 4, cpus: 32, running_jobs: 0 } }, sizeBytes);
const job = (id: number, owner: string, count: number, extra: Partial<PendingJob> = {}): PendingJob =>
  ({ id, owner, uid: owner === 'root' ? 0 : 1000, count, kind: null, timeLimit: null, ...extra });

t.test('a user\'s own table replaces default key by key (§28.2), a key in neither has its built-in default; root has none; 0 is unlimited', async (t) => {
  t.same(limitsOf(table, 'alice', 1000), { runningJobs: 0, devices: 4, cpus: 32, memory: 64 * G, pendingJobs: 10000 });
  t.same(limitsOf(table, 'bob', 1001), { runningJobs: 2, devices: 0, cpus: 0, memory: 64 * G, pendingJobs: 10000 });
  t.equal(limitsOf(table, 'root', 0), undefined);
  t.ok(hasUserLimits(table));
  t.notOk(hasUserLimits(userLimitsFromFile({ default: { devices: 0 } }, sizeBytes)), 'pending_jobs alone needs no holdings in the pass');
  t.same(describeUserLimits(table), {
    'limits.users.default.running_jobs': '2', 'limits.users.default.memory': '64G', 'limits.users.default.pending_jobs': '10000',
    'limits.users.alice.running_jobs': '0', 'limits.users.alice.devices': '4', 'limits.users.alice.cpus': '32',
  });
  // Precedence of pending_jobs: the user's own, else default's, else 10000; 0 in the user's table: unlimited for them alone.
  const p = userLimitsFromFile({ default: { pending_jobs: 50 }, carol: { pending_jobs: 0 }, dave: { running_jobs: 1 } }, sizeBytes);
  t.equal(limitsOf(p, 'carol', 1002)!.pendingJobs, 0);
  t.equal(limitsOf(p, 'dave', 1003)!.pendingJobs, 50, "dave's table sets no pending_jobs: default's");
  t.equal(limitsOf(p, 'erin', 1004)!.pendingJobs, 50);
  t.equal(limitsOf(userLimitsFromFile(undefined, sizeBytes), 'erin', 1004)!.pendingJobs, 10000, 'no table at all: the built-in 10000');
  t.equal(limitsOf(userLimitsFromFile({ dave: { devices: 2 } }, sizeBytes), 'dave', 1003)!.pendingJobs, 10000);
  t.same(describeUserLimits(p), {
    'limits.users.default.pending_jobs': '50', 'limits.users.carol.pending_jobs': '0', 'limits.users.dave.running_jobs': '1',
  });
});

t.test('which limit a start would exceed, and the words for it', async (t) => {
  const alice = limitsOf(table, 'alice', 1000)!;
  const bob = limitsOf(table, 'bob', 1001)!;
  t.equal(userLimitHit(job(1, 'alice', 2), alice, { jobs: 9, devices: 2, cpus: 0, memory: 0 }), null, '2 + 2 devices is the limit');
  t.equal(userLimitHit(job(1, 'alice', 1), alice, { jobs: 9, devices: 4, cpus: 0, memory: 0 }), 'devices');
  t.equal(userLimitHit(job(1, 'alice', 0), alice, { jobs: 9, devices: 4, cpus: 0, memory: 0 }), null, 'a CPU-only job holds no device');
  t.equal(userLimitHit(job(1, 'alice', 0, { cpus: 8 }), alice, { jobs: 1, devices: 0, cpus: 30, memory: 0 }), 'cpus');
  t.equal(userLimitHit(job(1, 'bob', 0), bob, { jobs: 2, devices: 0, cpus: 0, memory: 0 }), 'jobs');
  t.equal(userLimitHit(job(1, 'bob', 0, { mem: G }), bob, { jobs: 1, devices: 0, cpus: 0, memory: 64 * G }), 'memory');
  t.same(explainUserLimit('alice', 'jobs', { ...alice, runningJobs: 8 }, { jobs: 8, devices: 0, cpus: 0, memory: 0 }), { code: 'UserLimit', message: 'alice runs 8 jobs (limit 8)' });
  t.same(explainUserLimit('alice', 'devices', alice, { jobs: 2, devices: 4, cpus: 0, memory: 0 }).message, 'alice runs 4 devices (limit 4)');
  t.same(explainUserLimit('alice', 'cpus', alice, { jobs: 2, devices: 0, cpus: 32, memory: 0 }).message, 'alice holds 32 CPUs (limit 32)');
  t.same(explainUserLimit('alice', 'memory', bob, { jobs: 1, devices: 0, cpus: 0, memory: 64 * G }).message, 'alice holds 64G memory (limit 64G)');
  t.equal(pendingLimitMessage('alice', 1000, 1000), 'alice already has 1000 pending jobs (limit 1000)');
});

const gpus: Device[] = Array.from({ length: 8 }, (_, i) => ({ kind: 'nvidia', id: i, name: 'G', visible: `GPU-${i}`, npu: null, chip: null }));
const free = new Set(gpus.map((d) => `nvidia:${d.id}`));

t.test('a pass: jobs over a limit wait with UserLimit (counting this pass\'s starts); others and root go on', async (t) => {
  const pending = [job(1, 'alice', 2), job(2, 'alice', 2), job(3, 'alice', 1), job(4, 'bob', 1), job(5, 'root', 2)];
  const pass = schedule({ pending, running: 0, maxRunning: 32, inventory: gpus, free, userLimits: table, byUser: new Map() });
  t.same(pass.decisions.map((d) => d.id), [1, 2, 5, 4], 'alice gets 4 devices, then her third job waits; root is exempt');
  t.same(pass.reasonOf(pending[2]!), { code: 'UserLimit', message: 'alice runs 4 devices (limit 4)' });
  const held = new Map([['bob', { jobs: 2, devices: 2, cpus: 0, memory: 0 }]]);
  const p2 = schedule({ pending: [job(4, 'bob', 1)], running: 2, maxRunning: 32, inventory: gpus, free, userLimits: table, byUser: held });
  t.same(p2.decisions, []);
  t.same(p2.reasonOf(job(4, 'bob', 1)), { code: 'UserLimit', message: 'bob runs 2 jobs (limit 2)' });
});

t.test('the configuration file: [limits.users.*] checked key by key, with its line', async (t) => {
  const dir = t.testdir();
  const bad = path.join(dir, 'bad.toml');
  fs.writeFileSync(bad, '[limits.users.alice]\ndevices = -1\nbogus = 3\nmemory = "12X"\n');
  t.throws(() => readConfigFile(bad, true), { message: new RegExp([
    `${bad}:2: limits.users.alice.devices: must be at least 0, not -1`,
    `${bad}:3: limits.users.alice.bogus: unknown key`,
    `${bad}:4: limits.users.alice.memory: invalid size '12X': use a number with K, M, G or T`,
  ].map((l) => l.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^]*')) });
  const good = path.join(dir, 'good.toml');
  fs.writeFileSync(good, '[scheduler]\nfair_share = false\nfair_share_half_life = "1d"\n[limits.users.default]\nmemory = "64G"\n[limits.users.alice]\ndevices = 8\n');
  const c = loadDaemonConfig(parseDaemonArgs([]), { file: good, named: true });
  t.equal(c.fairShare, false);
  t.equal(c.fairShareHalfLife, 86400);
  t.same(limitsOf(c.userLimits, 'bob', 1001), { runningJobs: 0, devices: 0, cpus: 0, memory: 64 * G, pendingJobs: 10000 });
  t.same(limitsOf(c.userLimits, 'alice', 1000), { runningJobs: 0, devices: 8, cpus: 0, memory: 64 * G, pendingJobs: 10000 }, "alice's memory: default's (§28.2)");
});
