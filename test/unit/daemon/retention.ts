// History cleanup (retention.ts; docs/behaviour.md §7.4): terminal jobs older than the
// retention lose their files, then their rows; a file that cannot be removed keeps every row.
// Uses the unit-test Core (test/helpers/core.ts).
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { jobPaths } from '@xlurm/protocol';
import { cleanupHistory, runCleanup } from '../../../packages/daemon/src/retention';
import { alice, makeCore, spec, startedBy, type TestCore } from '../../helpers/core';

const WEEK = 7 * 86400;

/** A job that ran and finished at `finishedAt`, with a log and a result on disk. */
async function finished(tc: TestCore, finishedAt: number): Promise<number> {
  const j = await tc.core.submit(alice, spec());
  await startedBy(tc, j.id);
  tc.core.complete(j.id, { state: 'COMPLETED', exit_code: 0, finished_at: finishedAt, error: null });
  const p = jobPaths(tc.dir, j.id);
  fs.writeFileSync(p.log, 'out\n');
  fs.writeFileSync(p.result, '{}');
  return j.id;
}

t.test('expired jobs lose files and rows; recent, pending and running ones stay', async (t) => {
  const tc = await makeCore(t, { maxRunning: 8 });
  // Finished after they started (Core never lets a job end earlier), then a week passes.
  const t0 = tc.core.now();
  const old = await finished(tc, t0);
  const edge = await finished(tc, t0 + 100);
  const recent = await finished(tc, t0 + 101);
  tc.core.now = () => t0 + 100 + WEEK;
  fs.writeFileSync(path.join(tc.dir, 'jobs', `${old}.tmp.4242`), 'left by a killed writer');
  const running = await tc.core.submit(alice, spec());
  await startedBy(tc, running.id);
  t.equal(cleanupHistory(tc.core), 2);
  for (const id of [old, edge]) {
    t.equal(tc.store.get(id), undefined, `job ${id}: row removed`);
    t.notOk(fs.existsSync(jobPaths(tc.dir, id).log), `job ${id}: log removed`);
    t.notOk(fs.existsSync(jobPaths(tc.dir, id).result), `job ${id}: result removed`);
  }
  t.notOk(fs.existsSync(path.join(tc.dir, 'jobs', `${old}.tmp.4242`)), 'temporary files too');
  t.ok(tc.store.get(recent), 'within the retention');
  t.ok(fs.existsSync(jobPaths(tc.dir, recent).log));
  t.equal(tc.store.get(running.id)!.state, 'RUNNING');
  t.equal(cleanupHistory(tc.core), 0, 'nothing left to do');
});

t.test('more than one batch of expired jobs is removed in one pass', async (t) => {
  const tc = await makeCore(t);
  const n = 1001;
  for (let i = 0; i < n; i++) {
    const j = tc.store.insert(alice, spec(), 1);
    tc.store.markRunning(j.id, [], 1);
    tc.store.finish(j.id, { state: 'FAILED', exit_code: 1, finished_at: 2, error: null });
  }
  t.equal(cleanupHistory(tc.core), n);
  t.same(tc.store.counts(), {});
});

t.test('a file that cannot be removed aborts the pass with every row kept; the next pass retries', async (t) => {
  const tc = await makeCore(t);
  const id = await finished(tc, tc.core.now());
  tc.core.now = () => Math.floor(Date.now() / 1000) + WEEK + 1;
  const log = jobPaths(tc.dir, id).log;
  fs.rmSync(log);
  fs.mkdirSync(log); // unlink(2) of a non-empty directory fails
  fs.writeFileSync(path.join(log, 'x'), '');
  runCleanup(tc.core);
  t.ok(tc.store.get(id), 'the row is kept');
  t.match(tc.logs.at(-1), /^history cleanup: .*\.log/);
  fs.rmSync(log, { recursive: true });
  runCleanup(tc.core);
  t.equal(tc.store.get(id), undefined);
  t.equal(tc.logs.at(-1), 'history cleanup: removed 1 job(s)');
});
