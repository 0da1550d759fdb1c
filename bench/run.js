#!/usr/bin/env node
// @ts-check
'use strict';
/**
 * xlurm benchmarks: `npm run bench [-- --quick] [MEASURE...]`.
 *
 *   node bench/run.js                 every measure, full mode (< 20 min)
 *   node bench/run.js --quick         every measure, fewer samples (< 2 min)
 *   node bench/run.js submit scale    only these measures (one command per measure)
 *   node bench/run.js --list          the measures
 *   --json FILE                       also write the rows as JSON
 *   --markdown                        print the table as Markdown
 *   --no-competitors                  skip Slurm and task-spooler
 *
 * Each measure starts its own daemon in a temporary XLURM_HOME. Slurm is used
 * when it is running (bash slurm-setup.sh start); task-spooler when `tsp` is
 * installed (a private queue server is started and stopped here).
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Slurm, Tsp } = require('./lib/competitors');
const { finish, render } = require('./lib/table');
const { DAEMON_DIST, ROOT } = require('./lib/xlurm');
const { out } = require('./lib/proc');

const MEASURES = ['startup', 'submit', 'latency', 'throughput', 'scale', 'schedule', 'memory', 'relay', 'devices', 'sim', 'chain', 'report', 'slurm', 'array', 'cgroup', 'stats', 'guard', 'bounded']
  .map((m) => require(`./measures/${m}`));

/**
 * @typedef {{
 *   quick: boolean, reps: number, log: (msg: string) => void,
 *   slurm: import('./lib/competitors').Slurm | { why: string },
 *   tsp: import('./lib/competitors').Tsp | { why: string },
 * }} Ctx
 */

function machine() {
  const cpu = os.cpus()[0]?.model ?? '?';
  let distro = '';
  try { distro = /PRETTY_NAME="([^"]+)"/.exec(fs.readFileSync('/etc/os-release', 'utf8'))?.[1] ?? ''; } catch { /* unknown */ }
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  return `${new Date().toISOString()}  ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${distro}, Linux ${os.release()}, Node ${process.version}, load ${load}`;
}

async function main() {
  const argv = process.argv.slice(2);
  const quick = argv.includes('--quick');
  const markdown = argv.includes('--markdown');
  const jsonAt = argv.indexOf('--json');
  const jsonFile = jsonAt >= 0 ? argv[jsonAt + 1] : undefined;
  const wanted = argv.filter((a, i) => !a.startsWith('--') && (jsonAt < 0 || i !== jsonAt + 1));
  if (argv.includes('--list')) {
    for (const m of MEASURES) process.stdout.write(`${m.id.padEnd(12)} ${m.title}\n`);
    return 0;
  }
  const unknown = wanted.filter((w) => !MEASURES.some((m) => m.id === w));
  if (unknown.length) {
    process.stderr.write(`unknown measure(s): ${unknown.join(', ')}; see --list\n`);
    return 2;
  }
  if (!fs.existsSync(path.join(DAEMON_DIST, 'main.js')) || !fs.existsSync(path.join(ROOT, 'native', 'build', 'Release', 'xlurm-stepd'))) {
    process.stderr.write('xlurm is not built: run `npm run build` first\n');
    return 1;
  }
  const t0 = Date.now();
  const log = (msg) => process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)}s] ${msg}\n`);
  const noComp = argv.includes('--no-competitors');
  /** @type {Ctx} */
  const ctx = {
    quick, reps: quick ? 3 : 5, log,
    slurm: noComp ? { why: 'skipped (--no-competitors)' } : Slurm.detect(),
    tsp: noComp ? { why: 'skipped (--no-competitors)' } : Tsp.detect(),
  };
  const header = `# xlurm bench (${quick ? 'quick' : 'full'})  ${machine()}`;
  process.stdout.write(`${header}\n# Slurm: ${'why' in ctx.slurm ? ctx.slurm.why : ctx.slurm.label}; task-spooler: ${'why' in ctx.tsp ? ctx.tsp.why : out(ctx.tsp.bin, ['-V'], { env: ctx.tsp.env }).split('\n')[0]}\n`);
  const rows = [];
  let failed = 0;
  for (const m of MEASURES) {
    if (wanted.length && !wanted.includes(m.id)) continue;
    const start = Date.now();
    try {
      for (const r of await m.run(ctx)) rows.push(finish(r));
    } catch (e) {
      failed++;
      log(`${m.id} failed: ${(/** @type {Error} */ (e)).stack}`);
      rows.push(finish({ measure: `${m.id}: FAILED (${(/** @type {Error} */ (e)).message.split('\n')[0]})`, unit: '', value: null }));
    }
    log(`${m.id} done in ${((Date.now() - start) / 1000).toFixed(1)} s`);
  }
  if ('stop' in ctx.tsp) ctx.tsp.stop();
  process.stdout.write('\n' + render(rows, markdown));
  const met = rows.filter((r) => r.met === true).length;
  const notMet = rows.filter((r) => r.met === false).length;
  const broken = failed ? `, ${failed} measure${failed > 1 ? 's' : ''} FAILED` : '';
  process.stdout.write(`\n${met} targets met, ${notMet} not met${broken}; ${((Date.now() - t0) / 1000).toFixed(0)} s; ratio = xlurm / baseline\n`);
  if (jsonFile) fs.writeFileSync(jsonFile, JSON.stringify({ header, quick, rows }, null, 2) + '\n');
  // A measure that could not run is a broken benchmark, not a slow result.
  return failed ? 1 : 0;
}

main().then((code) => { process.exitCode = code; }, (e) => { process.stderr.write(`${e?.stack ?? e}\n`); process.exitCode = 1; });
