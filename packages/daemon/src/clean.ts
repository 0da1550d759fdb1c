/**
 * `xlurm clean` (docs/behaviour.md §2.2.5): offline removal of job logs and daemon.log.
 * State, results and history stay.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { XlurmError, initStateDir, statePaths } from '@xlurm/protocol';
import { flockExclusive } from '@xlurm/native';
import { isJobLog } from './runner/job-files';
import { withDir } from './safe-fs';

export function clean(home: string, out: (line: string) => void): void {
  initStateDir(home);
  const p = statePaths(home);
  const lockFd = fs.openSync(p.daemonLock, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
  try {
    if (!flockExclusive(lockFd)) throw new XlurmError('STORAGE', 'xlurm is running; stop the scheduler before cleaning logs');
    if (fs.existsSync(p.db)) {
      let running: number[];
      try {
        const db = new Database(p.db, { readonly: true, fileMustExist: true });
        try {
          running = (db.prepare(`SELECT id FROM jobs WHERE state = 'RUNNING' ORDER BY id`).all() as { id: number }[]).map((r) => r.id);
        } finally { db.close(); }
      } catch (e) {
        throw new XlurmError('STORAGE', `cannot read job database ${p.db}: ${(e as Error).message}`);
      }
      if (running.length) throw new XlurmError('JOBS_RUNNING', `cannot clean logs while jobs are running: ${running.join(', ')}`);
    }
    // By descriptor (safe-fs.ts, extensions 28.1): each entry of jobs/ is unlinked there, never followed.
    let removed = 0;
    withDir(p.jobs, (d) => {
      for (const name of fs.readdirSync(p.jobs)) {
        if (!isJobLog(name)) continue;
        try {
          if (d.remove(name)) removed++;
        } catch {
          throw new XlurmError('STORAGE', `cannot remove ${path.join(p.jobs, name)}`);
        }
      }
    });
    let hadLog = true;
    try { fs.unlinkSync(p.daemonLog); } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') hadLog = false;
      else throw new XlurmError('STORAGE', `cannot remove ${p.daemonLog}`);
    }
    out(hadLog ? `Removed ${removed} job log(s) and daemon.log.` : `Removed ${removed} job log(s); daemon.log was already absent.`);
  } finally {
    fs.closeSync(lockFd);
  }
}
