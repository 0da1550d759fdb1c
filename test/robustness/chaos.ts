/**
 * Crash chaos (bounded to about a minute): a few hundred short jobs through
 * the protocol while the daemon is SIGKILLed and restarted at seeded moments
 * and a few supervisors are SIGKILLed; then every submission is accounted
 * for, no job ran twice, and what the daemon reports matches what each job
 * recorded itself. `npm run soak -- --seed N --duration S` runs the same
 * workload for longer.
 */
import t from 'tap';
import { runChaos } from '../helpers/chaos';

const SEED = Number(process.env.XLURM_CHAOS_SEED ?? 7);

t.test('jobs survive daemon and supervisor SIGKILLs: nothing lost, nothing run twice', async (t) => {
  const report = await runChaos({
    seed: SEED,
    durationMs: 30000,
    maxJobs: 300,
    rate: 12,
    maxRunning: 8,
    victims: 4,
    killEveryMs: [2500, 6000],
    teardown: (fn) => t.teardown(fn),
    log: (line) => t.comment(line),
  });
  const { violations, ...figures } = report;
  t.comment(JSON.stringify(figures));
  t.same(violations, [], 'no violations');
  t.ok(report.daemonKills >= 3, `the daemon was killed ${report.daemonKills} times`);
  t.equal(report.supervisorKills, 4, 'four supervisors were killed');
  t.ok(report.accepted >= 100, `${report.accepted} jobs accepted`);
  t.ok((report.states.COMPLETED ?? 0) > 0 && (report.states.TIMED_OUT ?? 0) > 0 && (report.states.CANCELLED ?? 0) > 0,
    'the mix reached COMPLETED, TIMED_OUT and CANCELLED');
});
