/**
 * History cleanup (spec 7.4): terminal jobs whose result is older than the
 * retention lose their files, then their rows. Files first: a failed
 * deletion aborts the pass with the store unchanged, and the next pass retries.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { jobPaths, statePaths } from '@xlurm/protocol';
import type { Core } from './core';

export const CLEANUP_INTERVAL_MS = 60_000;

function unlinkIfPresent(file: string): void {
  try { fs.unlinkSync(file); } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

export function cleanupHistory(core: Core): number {
  const cutoff = core.now() - core.cfg.retentionSecs;
  let removed = 0;
  for (;;) {
    const ids = core.expiredIds(cutoff);
    if (ids.length === 0) break;
    const jobsDir = statePaths(core.home).jobs;
    const wanted = new Set(ids.map(String));
    let tmpFiles: string[] = [];
    try {
      tmpFiles = fs.readdirSync(jobsDir).filter((f) => {
        const m = /^(\d+)\.tmp\.\d+$/.exec(f);
        return m !== null && wanted.has(m[1]!);
      });
    } catch { tmpFiles = []; }
    for (const id of ids) {
      const p = jobPaths(core.home, id);
      // .spec: left only when a daemon died between writing a start's spec and unlinking it.
      for (const f of [p.log, p.lock, p.result, p.cancel, path.join(jobsDir, `${id}.json`), path.join(jobsDir, `${id}.spec`)]) unlinkIfPresent(f);
    }
    for (const f of tmpFiles) unlinkIfPresent(path.join(jobsDir, f));
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
