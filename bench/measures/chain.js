// @ts-check
'use strict';
/**
 * Dependencies (docs/behaviour.md §23.1): a chain of N `afterok` jobs of
 * `true` (each depends on the one before) end to end, against N independent
 * `true` jobs, both on one slot (--max-running 1), so both run strictly one
 * after another and the difference is what the dependency costs: the
 * dependent's gate opening when its parent's result is committed, and the
 * pass that starts it. Each run: all N submitted back to back from one
 * client, timed from the first submit to the newest result file's mtime
 * (as the throughput measure does). Target: the chain at ≥ 50 % of the
 * independent jobs' throughput.
 */
const fs = require('node:fs');
const path = require('node:path');
const { nowMs, over } = require('../lib/stats');
const { poll, request, startDaemon, submission } = require('../lib/xlurm');

/** @param {import('../lib/xlurm').Daemon} d @param {number} n @param {boolean} chained */
async function oneRun(d, n, chained) {
  const before = (await d.counts()).COMPLETED ?? 0;
  const ids = [];
  const t0 = nowMs();
  const wall0 = Date.now();
  for (let i = 0; i < n; i++) {
    const prev = ids[ids.length - 1];
    const body = submission(['true'], chained && prev !== undefined ? { name: 'chain', dependency: `afterok:${prev}` } : { name: 'chain' });
    const r = await request(d.socket, 'submit', body);
    if (!r.ok) throw new Error(JSON.stringify(r.error));
    ids.push(/** @type {{id: number}} */ (r.result).id);
  }
  await poll(async () => {
    const c = await d.counts();
    if (c.FAILED || c.CANCELLED) throw new Error(`${c.FAILED ?? 0} failed, ${c.CANCELLED ?? 0} cancelled`);
    return (c.COMPLETED ?? 0) - before >= n;
  }, { timeoutMs: 600000, intervalMs: 50, what: `${n} jobs` });
  const last = Math.max(...ids.map((id) => fs.statSync(path.join(d.home, 'jobs', `${id}.result`)).mtimeMs));
  const elapsed = last - wall0;
  if (!(elapsed > 0) || elapsed > nowMs() - t0 + 1000) throw new Error(`implausible end of the run (${elapsed} ms)`);
  return n / (elapsed / 1000);
}

/** @param {import('../run').Ctx} ctx */
async function run(ctx) {
  const n = 1000;
  const chain = [];
  const independent = [];
  const d = await startDaemon({ backend: 'none', maxRunning: 1 });
  try {
    for (let r = 0; r < (ctx.quick ? 1 : 3); r++) {
      ctx.log(`${n} independent × true on one slot, rep ${r + 1}`);
      independent.push(await oneRun(d, n, false));
      ctx.log(`chain of ${n} afterok × true on one slot, rep ${r + 1}`);
      chain.push(await oneRun(d, n, true));
    }
  } finally { await d.stop(); }
  return [{
    measure: `chain of ${n} afterok × true (one slot)`, unit: 'jobs/s', value: over(chain),
    base: { label: `${n} independent × true (one slot)`, value: over(independent).median },
    target: { text: '≥ 50 % of independent', on: /** @type {const} */ ('ratio'), min: 0.5 },
  }];
}

module.exports = { id: 'chain', title: 'a chain of 1000 afterok jobs against 1000 independent ones, one slot', run };
