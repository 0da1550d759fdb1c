/**
 * The chaos workload for as long as asked (`npm run soak -- --seed N
 * --duration SECONDS`, see bench/soak.js). Not part of `npm test`.
 */
import t from 'tap';
import * as fs from 'node:fs';
import { runChaos } from '../helpers/chaos';

const seed = Number(process.env.XLURM_SOAK_SEED ?? 1);
const seconds = Number(process.env.XLURM_SOAK_DURATION ?? 300);

t.test(`soak: seed ${seed}, ${seconds} s of daemon and supervisor SIGKILLs`, async (t) => {
  const report = await runChaos({
    seed,
    durationMs: seconds * 1000,
    rate: 12,
    maxRunning: 8,
    victims: Math.max(4, Math.round(seconds / 15)),
    killEveryMs: [2000, 8000],
    settleMs: 300000,
    teardown: (fn) => t.teardown(fn),
    log: (line) => t.comment(line),
  });
  t.comment(JSON.stringify({ ...report, violations: report.violations.length }));
  if (process.env.XLURM_SOAK_JSON) fs.writeFileSync(process.env.XLURM_SOAK_JSON, JSON.stringify(report, null, 2) + '\n');
  t.same(report.violations, [], 'no violations');
  t.ok(report.accepted > 0, `${report.accepted} jobs accepted`);
});
