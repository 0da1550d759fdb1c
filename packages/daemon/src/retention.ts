/**
 * History cleanup (docs/behaviour.md §7.4): terminal jobs whose result is older than the
 * retention lose their files, then their rows. Files first: a failed
 * deletion aborts the pass with the store unchanged, and the next pass retries.
 */
import type { Core } from './core';
import { JobFiles } from './runner/job-files';

export const CLEANUP_INTERVAL_MS = 60_000;

export function cleanupHistory(core: Core): number {
  const cutoff = core.now() - core.cfg.retentionSecs;
  const files = new JobFiles(core.home);
  let removed = 0;
  for (;;) {
    const ids = core.expiredIds(cutoff);
    if (ids.length === 0) break;
    files.remove(ids);
    core.removeJobs(ids);
    removed += ids.length;
    if (ids.length < 1000) break;
  }
  return removed;
}

export function runCleanup(core: Core): void {
  try {
    const n = cleanupHistory(core);
    if (n) core.log(`history cleanup: removed ${n} job(s)`);
  } catch (e) {
    core.log(`history cleanup: ${(e as Error).message}`);
  }
}
