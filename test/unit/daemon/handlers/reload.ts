// Reloading the configuration (handlers/reload.ts, Core.applyConfig): a valid
// file takes effect for later decisions, an invalid one or a changed backend
// changes nothing, options given at start keep winning, and only the
// administrator may reload. Uses the unit-test Core (test/helpers/core.ts).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDaemonArgs } from '../../../../packages/daemon/src/config/args';
import { loadDaemonConfig } from '../../../../packages/daemon/src/config/daemon';
import { reload, reloadConfig } from '../../../../packages/daemon/src/handlers/reload';
import { config } from '../../../../packages/daemon/src/handlers/config';
import type { Ctx } from '../../../../packages/daemon/src/handlers/types';
import type { Caller } from '../../../../packages/daemon/src/core';
import { alice, aliceCaller, makeCore, rootCaller, spec, startedBy, type TestCore } from '../../../helpers/core';

/** A Core whose settings come from `file` (written with `text`), with these start options. */
async function coreWithFile(t: Parameters<typeof makeCore>[0], text: string, argv: string[] = ['--backend', 'none'], devices = 0) {
  const tc = await makeCore(t, { devices, maxRunning: 1 });
  const file = path.join(tc.dir, 'xlurm.toml');
  fs.writeFileSync(file, text);
  tc.core.applyConfig(loadDaemonConfig(parseDaemonArgs(argv), { file, named: true }));
  return { ...tc, file };
}

const ctx = (tc: TestCore, caller: Caller): Ctx => ({ core: tc.core, caller, shutdownAfterReply: () => undefined });

t.test('max_running applies live: pending jobs start, running ones are untouched', async (t) => {
  const tc = await coreWithFile(t, '[daemon]\nmax_running = 1\n');
  const a = await tc.core.submit(alice, spec());
  const b = await tc.core.submit(alice, spec());
  await startedBy(tc, a.id);
  t.equal(tc.core.current(b.id)!.state, 'PENDING', 'max_running 1 holds b');
  fs.writeFileSync(tc.file, '[daemon]\nmax_running = 2\n');
  t.same(reloadConfig(tc.core), { file: tc.file, changed: ['daemon.max_running'] });
  await startedBy(tc, b.id);
  t.same(tc.runner.calls.filter((c) => c[0] === 'cancel'), [], 'nothing running was touched');
  t.equal(tc.core.cfg.maxRunning, 2);
  t.match(tc.logs.at(-1), `configuration reloaded from ${tc.file}; changed daemon.max_running`);
});

t.test('an invalid file changes nothing', async (t) => {
  const tc = await coreWithFile(t, '[daemon]\nmax_running = 3\n');
  const before = tc.core.cfg;
  fs.writeFileSync(tc.file, '[daemon]\nmax_running = 5\nbogus = 1\n');
  t.throws(() => reloadConfig(tc.core), {
    code: 'INVALID_CONFIG',
    message: `${tc.file}:3: daemon.bogus: unknown key (known keys of [daemon]: backend, max_running, retention, exclude_device_ids, max_connections, max_connections_per_user)`,
  });
  t.equal(tc.core.cfg, before);
  fs.rmSync(tc.file);
  t.throws(() => reloadConfig(tc.core), { code: 'INVALID_CONFIG', message: `${tc.file}: cannot read the configuration file: no such file` },
    'a named file that went away is an error, not the defaults');
  t.equal(tc.core.cfg.maxRunning, 3);
});

t.test('daemon.backend cannot change live', async (t) => {
  const tc = await coreWithFile(t, '[daemon]\nbackend = "none"\nmax_running = 2\n', []);
  fs.writeFileSync(tc.file, '[daemon]\nbackend = "nvidia"\nmax_running = 4\n');
  t.throws(() => reloadConfig(tc.core), { code: 'RELOAD_REFUSED', message: 'reload cannot change daemon.backend; restart the daemon when the queue is idle' });
  t.equal(tc.core.cfg.maxRunning, 2, 'nor anything else');
});

t.test('options given at start still win after a reload', async (t) => {
  const tc = await coreWithFile(t, '[daemon]\nmax_running = 3\nretention = "1h"\n', ['--backend', 'none', '--max-running', '7']);
  t.equal(tc.core.cfg.maxRunning, 7);
  t.equal(tc.core.cfg.retentionSecs, 3600, 'what no option sets comes from the file');
  fs.writeFileSync(tc.file, '[daemon]\nmax_running = 9\nretention = "2h"\n');
  t.same(reloadConfig(tc.core).changed, ['daemon.retention']);
  t.equal(tc.core.cfg.maxRunning, 7);
  t.equal(tc.core.cfg.retentionSecs, 7200);
  const view = config(ctx(tc, aliceCaller), {}) as Exclude<ReturnType<typeof config>, Promise<unknown> | { stream: unknown }>;
  // Every table is shown, those the file lacks with their defaults.
  const { accounting, resources, sharing, ...fromFile } = view.config as Record<string, Record<string, unknown>>;
  t.same({ ...view, config: fromFile }, {
    file: tc.file, found: true, from_flags: ['daemon.backend', 'daemon.max_running'],
    config: { daemon: { backend: 'none', max_running: 7, retention: '2h', exclude_device_ids: [] }, limits: { kill_grace: '1s', max_array_tasks: 10000, max_request_bytes: '3M', users: { 'default.pending_jobs': 10000 } }, devices: { group_affinity: 'prefer', groups: {} }, scheduler: { mode: 'greedy', reserve_min_devices: 2, max_running_by_size: {}, fair_share: true, fair_share_half_life: '7d' } },
  }, 'config show: any user');
  t.same(accounting, { sample_interval: '30s', retention: '90d', metrics_file: '' }, 'a table the file lacks: its defaults');
  t.same(sharing, { enabled: false });
  t.match(resources, { cpus: 'all', swap: false, default_cpus: 0 });
});

t.test('exclusions: a reload applies what changed in the list; other ids keep what exclude/include did', async (t) => {
  const tc = await coreWithFile(t, '[daemon]\nexclude_device_ids = [0, 1]\n', ['--backend', 'none'], 4);
  t.same(tc.core.excludedIds(), [0, 1]);
  tc.core.include([1]); // at run time
  tc.core.exclude([3]);
  t.same(tc.core.excludedIds(), [0, 3]);
  fs.writeFileSync(tc.file, '[daemon]\nexclude_device_ids = [0, 1]\n');
  t.same(reloadConfig(tc.core).changed, [], 'an unchanged list changes nothing');
  t.same(tc.core.excludedIds(), [0, 3], 'the run-time include of 1 and exclude of 3 stay');
  fs.writeFileSync(tc.file, '[daemon]\nexclude_device_ids = [1, 2]\n');
  t.same(reloadConfig(tc.core).changed, ['daemon.exclude_device_ids']);
  t.same(tc.core.excludedIds(), [2, 3], '0 left the list (included again), 2 joined it (excluded); 1 stayed in it, so its run-time include stands; 3 untouched');
  fs.writeFileSync(tc.file, '[daemon]\nexclude_device_ids = [1, 9]\n');
  t.throws(() => reloadConfig(tc.core), { code: 'INVALID_CONFIG', message: `${tc.file}:2: daemon.exclude_device_ids: unknown device ID 9` });
  t.same(tc.core.excludedIds(), [2, 3], 'unchanged');
});

t.test('only the administrator may reload', async (t) => {
  const tc = await coreWithFile(t, '');
  t.throws(() => reload(ctx(tc, aliceCaller), {}), { code: 'NOT_ADMIN', message: 'only the administrator may reload the configuration' });
  t.same(reload(ctx(tc, rootCaller), {}), { file: tc.file, changed: [] });
});

t.test('a changed [sharing] is listed, not "nothing changed"', async (t) => {
  const tc = await coreWithFile(t, '[sharing]\nenabled = false\n');
  fs.writeFileSync(tc.file, '[sharing]\nenabled = true\n');
  t.same(reloadConfig(tc.core).changed, ['sharing.enabled']);
  t.match(tc.logs.at(-1), `configuration reloaded from ${tc.file}; changed sharing.enabled`);
  fs.writeFileSync(tc.file, '[sharing]\nenabled = true\n[sharing.nvidia]\nlibrary = "/opt/hami/libvgpu.so"\n');
  t.same(reloadConfig(tc.core).changed, ['sharing.nvidia'], 'a vendor table that came');
  t.same(reloadConfig(tc.core).changed, [], 'the same file again');
  t.match(tc.logs.at(-1), '; nothing changed');
  fs.writeFileSync(tc.file, '');
  t.same(reloadConfig(tc.core).changed, ['sharing.enabled', 'sharing.nvidia'], 'the table removed');
});
