#!/usr/bin/env node
// @ts-check
'use strict';
/**
 * Crash-chaos soak: `npm run soak -- [--seed N] [--duration SECONDS] [--json FILE]`.
 *
 * Runs the workload of test/robustness/chaos.ts (short jobs with mixed exit
 * codes, cancellations and time-outs; the daemon SIGKILLed and restarted at
 * seeded moments; some supervisors SIGKILLed) for the given duration, then
 * audits every submission. The same seed gives the same workload and fault
 * schedule (timing on a busy machine still varies). Exits non-zero on any
 * violation. Run as root or as the daemon's account, after `npm run build`.
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const opts = { seed: String(Date.now() % 100000), duration: '300', json: '' };
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const [flag, inline] = args[i].startsWith('--') && args[i].includes('=') ? args[i].split(/=(.*)/s) : [args[i], undefined];
  const value = () => inline ?? args[++i] ?? '';
  if (flag === '--seed') opts.seed = value();
  else if (flag === '--duration') opts.duration = value();
  else if (flag === '--json') opts.json = path.resolve(value());
  else if (flag === '-h' || flag === '--help') {
    process.stdout.write('usage: npm run soak -- [--seed N] [--duration SECONDS] [--json FILE]\n');
    process.exit(0);
  } else {
    process.stderr.write(`soak: unknown option ${args[i]}\n`);
    process.exit(2);
  }
}
if (!/^\d+$/.test(opts.seed) || !/^\d+$/.test(opts.duration) || Number(opts.duration) < 10) {
  process.stderr.write('soak: --seed must be a non-negative integer and --duration at least 10 (seconds)\n');
  process.exit(2);
}
process.stdout.write(`soak: seed ${opts.seed}, ${opts.duration} s (replay with --seed ${opts.seed})\n`);
const tap = path.join(root, 'node_modules', '.bin', 'tap');
const r = spawnSync(tap, ['--disable-coverage', '--timeout', String(Number(opts.duration) + 600), '-R', 'tap', 'test/soak/soak.ts'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, XLURM_SOAK_SEED: opts.seed, XLURM_SOAK_DURATION: opts.duration, XLURM_SOAK_JSON: opts.json },
});
process.exit(r.status ?? 1);
