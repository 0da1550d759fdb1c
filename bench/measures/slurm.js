// @ts-check
'use strict';
/**
 * Client mode on Slurm (docs/behaviour.md §27.1): `xbatch` and `xqueue` with
 * `[cluster] engine = "slurm"` against the Slurm command each one wraps
 * (`sbatch`, `squeue --json`), timed side by side in one run, interleaved call
 * by call, with `node -e 0` beside them (the runtime's own floor, which every
 * xlurm client pays and a Slurm command does not). Needs a running Slurm that
 * the clients reach (its slurm.conf, or SLURM_CONF); skipped with the reason
 * otherwise. Jobs are submitted held and cancelled at the end.
 */
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { compare, which } = require('../lib/proc');
const { CLI_BIN, baseEnv, tempDir } = require('../lib/xlurm');

const NAME = 'xlbench-slurm';
/** The programs measured: this tree's, or (XLURM_BENCH_CLI_BIN) another build's, e.g. an installed release. */
const BIN = process.env.XLURM_BENCH_CLI_BIN || CLI_BIN;

/** Why Slurm cannot be measured here, or undefined. */
function missing() {
  if (!which('sbatch') || !which('squeue') || !which('scontrol')) return 'Slurm not installed';
  const r = spawnSync('scontrol', ['ping'], { encoding: 'utf8', timeout: 5000 });
  if (!/is UP/.test(r.stdout ?? '')) return 'Slurm not running (no slurmctld answers scontrol ping; SLURM_CONF names another cluster)';
  return undefined;
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const why = missing();
  const rows = (/** @type {Record<string, any>[]} */ ([]));
  const labels = ['slurm mode: xbatch --hold -g 0 --wrap true vs sbatch', 'slurm mode: xqueue vs squeue --json'];
  if (why) return labels.map((measure) => ({ measure, unit: 'ms', value: null, base: { label: 'Slurm', value: null, note: why } }));
  const dir = tempDir('xlb-slurm-mode');
  const conf = path.join(dir, 'xlurm.toml');
  fs.writeFileSync(conf, '[cluster]\nengine = "slurm"\ngres = { nv = "gpu" }\n');
  const env = baseEnv({ XLURM_CONFIG: conf, XLURM_HOME: path.join(dir, 'home'), ...(process.env.SLURM_CONF ? { SLURM_CONF: process.env.SLURM_CONF } : {}) });
  const cwd = dir;
  const node = { label: 'node -e 0', argv: [process.execPath, '-e', '0'], env, cwd };
  const o = { calls: ctx.quick ? 8 : 20, reps: ctx.reps, warmup: 2 };
  try {
    ctx.log('slurm mode: xbatch vs sbatch (held jobs, interleaved with node -e 0)');
    const xbatch = { label: 'xbatch', argv: [process.execPath, path.join(BIN, 'xbatch'), '--hold', '-g', '0', '-n', NAME, '--wrap', 'true'], env, cwd };
    // What xbatch passes, spelled as a user would type it.
    const sbatch = { label: 'sbatch', argv: ['sbatch', '--parsable', '--hold', `--job-name=${NAME}`, '--export=ALL', `--chdir=${cwd}`, '--wrap=true'], env, cwd };
    const [xb, sb, n1] = compare([xbatch, sbatch, node], o);
    rows.push({
      measure: labels[0], unit: 'ms', value: xb, base: { label: 'sbatch --parsable', value: sb.median },
      target: { text: '≤ 1.2× sbatch', on: /** @type {const} */ ('ratio'), max: 1.2 },
    });
    ctx.log('slurm mode: xqueue vs squeue --json');
    const xqueue = { label: 'xqueue', argv: [process.execPath, path.join(BIN, 'xqueue')], env, cwd };
    const squeue = { label: 'squeue --json', argv: ['squeue', '--json'], env, cwd };
    const [xq, sq, n2] = compare([xqueue, squeue, node], o);
    rows.push({
      measure: `${labels[1]} (${queued(env)} jobs queued)`, unit: 'ms', value: xq, base: { label: 'squeue --json', value: sq.median },
      target: { text: '≤ 1.2× squeue --json', on: /** @type {const} */ ('ratio'), max: 1.2 },
    });
    rows.push({ measure: 'slurm mode: node -e 0 (the floor every xlurm client pays)', unit: 'ms', value: n1, base: { label: 'sbatch --parsable', value: sb.median } });
    rows.push({ measure: 'slurm mode: xbatch minus node -e 0', unit: 'ms', value: diff(xb, n1), base: { label: 'sbatch --parsable', value: sb.median } });
    rows.push({ measure: 'slurm mode: xqueue minus node -e 0', unit: 'ms', value: diff(xq, n2), base: { label: 'squeue --json', value: sq.median } });
    return rows;
  } finally {
    spawnSync('scancel', [`--name=${NAME}`], { env });
  }
}

/** A client's median less the floor's, as a one-point value. @param {{ median: number, n: number }} a @param {{ median: number }} b */
function diff(a, b) {
  const d = a.median - b.median;
  return { median: d, min: d, max: d, n: a.n };
}

/** @param {NodeJS.ProcessEnv} env */
function queued(env) {
  return (spawnSync('squeue', ['-h', '-o', '%i'], { encoding: 'utf8', env }).stdout ?? '').split('\n').filter(Boolean).length;
}

module.exports = { id: 'slurm', title: 'client mode on Slurm: xbatch and xqueue against sbatch and squeue --json', run };
