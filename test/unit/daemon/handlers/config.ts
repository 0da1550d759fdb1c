// `config` (handlers/config.ts): the effective settings for any user, where each came from.
// Uses the unit-test Core (test/helpers/core.ts).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDaemonArgs } from '../../../../packages/daemon/src/config/args';
import { loadDaemonConfig } from '../../../../packages/daemon/src/config/daemon';
import { config } from '../../../../packages/daemon/src/handlers/config';
import { aliceCaller, bobCaller, ctxOf, makeCore } from '../../../helpers/core';

type View = Exclude<ReturnType<typeof config>, Promise<unknown> | { stream: unknown }>;
const view = (r: ReturnType<typeof config>) => r as View;
/** The view without the tables shown at their defaults when the file lacks them (checked once below). */
function fileTables(v: View): View {
  const { accounting: _a, resources: _r, sharing: _s, ...rest } = v.config as Record<string, unknown>;
  return { ...v, config: rest as View['config'] };
}

t.test('no file: the defaults, and the options given at start', async (t) => {
  const tc = await makeCore(t, { maxRunning: 3 });
  const all = view(config(ctxOf(tc.core, aliceCaller), {}));
  const shown = all.config as Record<string, any>;
  t.same([shown.accounting, shown.sharing], [{ sample_interval: '30s', retention: '90d', metrics_file: '' }, { enabled: false }], 'every table, those the file lacks at their defaults');
  t.match(shown.resources, { cpus: 'all', swap: false, default_cpus: 0, default_memory: '0' });
  t.same(fileTables(all), {
    file: path.join(tc.dir, 'no-such.toml'), found: false, from_flags: ['daemon.backend', 'daemon.max_running'],
    config: { daemon: { backend: 'none', max_running: 3, retention: '7d', exclude_device_ids: [] }, limits: { kill_grace: '1s', max_array_tasks: 10000, max_request_bytes: '3M', users: { 'default.pending_jobs': 10000 } }, devices: { group_affinity: 'prefer', groups: {} }, scheduler: { mode: 'greedy', reserve_min_devices: 2, max_running_by_size: {}, fair_share: true, fair_share_half_life: '7d' } },
  });
});

t.test('from a file: its values, in their written form; a copy of the exclusion list', async (t) => {
  const tc = await makeCore(t, { devices: 4 });
  const file = path.join(tc.dir, 'xlurm.toml');
  fs.writeFileSync(file, '[daemon]\nbackend = "none"\nmax_running = 5\nretention = 90\nexclude_device_ids = [3, 1]\n');
  tc.core.applyConfig(loadDaemonConfig(parseDaemonArgs([]), { file, named: true }));
  const v = view(config(ctxOf(tc.core, bobCaller), {}));
  t.same(fileTables(v), {
    file, found: true, from_flags: [],
    config: { daemon: { backend: 'none', max_running: 5, retention: '90s', exclude_device_ids: [3, 1] }, limits: { kill_grace: '1s', max_array_tasks: 10000, max_request_bytes: '3M', users: { 'default.pending_jobs': 10000 } }, devices: { group_affinity: 'prefer', groups: {} }, scheduler: { mode: 'greedy', reserve_min_devices: 2, max_running_by_size: {}, fair_share: true, fair_share_half_life: '7d' } },
  }, 'any user; nothing set by an option');
  v.config.daemon.exclude_device_ids.push(0);
  t.same(tc.core.cfg.excludeIds, [3, 1], "the reply is not the daemon's own list");
});

t.test('[devices]: the affinity and the declared groups in the file\'s syntax', async (t) => {
  const tc = await makeCore(t, { devices: 4 });
  const file = path.join(tc.dir, 'xlurm.toml');
  fs.writeFileSync(file, '[daemon]\nbackend = "none"\n[devices]\ngroup_affinity = "require"\n[devices.groups]\nnv = "3,0-1;2"\n');
  tc.core.applyConfig(loadDaemonConfig(parseDaemonArgs([]), { file, named: true }));
  t.same(view(config(ctxOf(tc.core, aliceCaller), {})).config.devices, { group_affinity: 'require', groups: { nv: '0-1,3;2' } });
});

t.test('[scheduler]: the mode, reserve_min_devices and the size caps by device count', async (t) => {
  const tc = await makeCore(t, { devices: 4 });
  const file = path.join(tc.dir, 'xlurm.toml');
  fs.writeFileSync(file, '[daemon]\nbackend = "none"\n[scheduler]\nmode = "reserve"\nreserve_min_devices = 4\nmax_running_by_size = { 8 = 1, 2 = 3 }\n');
  t.same(tc.core.applyConfig(loadDaemonConfig(parseDaemonArgs([]), { file, named: true })),
    ['daemon.max_running', 'scheduler.mode', 'scheduler.reserve_min_devices', 'scheduler.max_running_by_size'], 'the file has no max_running: its default');
  t.same(view(config(ctxOf(tc.core, aliceCaller), {})).config.scheduler, { mode: 'reserve', reserve_min_devices: 4, max_running_by_size: { 2: 3, 8: 1 }, fair_share: true, fair_share_half_life: '7d' });
});
