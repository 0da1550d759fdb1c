// accounting/settings.ts and the [accounting] table of the configuration file (docs/behaviour.md
// §26.2, §26.3): defaults, durations, "0", an absolute metrics_file, what a reload reports.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDaemonArgs } from '../../../../packages/daemon/src/config/args';
import { loadDaemonConfig } from '../../../../packages/daemon/src/config/daemon';
import { ConfigFileError } from '../../../../packages/daemon/src/config/load';
import type { Tap } from '../../../helpers/tap';
import { DEFAULT_ACCOUNTING, accountingSettings, changedAccountingKeys } from '../../../../packages/daemon/src/accounting/settings';

function load(t: Tap, text: string) {
  const dir = t.testdir({ 'xlurm.toml': text });
  return loadDaemonConfig(parseDaemonArgs([]), { file: path.join(dir, 'xlurm.toml'), named: true });
}

function problem(t: Tap, text: string): string {
  try { load(t, text); } catch (e) { if (e instanceof ConfigFileError) return e.message; throw e; }
  return '';
}

t.test('defaults: every 30 s, kept 90 days, no metrics file', async (t) => {
  t.same(DEFAULT_ACCOUNTING, { sampleInterval: 30, retentionSecs: 90 * 86400, metricsFile: '' });
  t.equal(load(t, '').accounting, undefined, 'no table: the defaults, and config show leaves it out');
  t.same(accountingSettings(undefined), DEFAULT_ACCOUNTING);
});

t.test('the table', async (t) => {
  t.same(load(t, '[accounting]\nsample_interval = "1m"\nretention = "7d"\nmetrics_file = "/var/lib/x/xlurm.prom"\n').accounting,
    { sampleInterval: 60, retentionSecs: 7 * 86400, metricsFile: '/var/lib/x/xlurm.prom' });
  t.same(load(t, '[accounting]\nsample_interval = "0"\n').accounting!.sampleInterval, 0, '"0" turns sampling off');
  t.same(load(t, '[accounting]\nsample_interval = 5\nmetrics_file = ""\n').accounting, { ...DEFAULT_ACCOUNTING, sampleInterval: 5 });
});

t.test('problems name the file, line and key', async (t) => {
  t.match(problem(t, '[accounting]\nmetrics_file = "rel.prom"\n'), /xlurm\.toml:2: accounting\.metrics_file: must be an absolute path: rel\.prom/);
  t.match(problem(t, '[accounting]\nretention = "0"\n'), /accounting\.retention: invalid duration '0'/);
  t.match(problem(t, '[accounting]\nsample_interval = "soon"\n'), /accounting\.sample_interval: invalid duration 'soon'/);
  t.match(problem(t, '[accounting]\nsample_every = "1s"\n'), /accounting\.sample_every: unknown key/);
});

t.test('what a reload reports as changed', async (t) => {
  t.same(changedAccountingKeys(undefined, undefined), []);
  t.same(changedAccountingKeys(undefined, DEFAULT_ACCOUNTING), [], 'the table written with its defaults changes nothing');
  t.same(changedAccountingKeys(DEFAULT_ACCOUNTING, { sampleInterval: 1, retentionSecs: 60, metricsFile: '/m' }),
    ['accounting.sample_interval', 'accounting.retention', 'accounting.metrics_file']);
});
