/**
 * State directory initialisation (docs/behaviour.md §7.2), shared by the daemon, `start`
 * and `clean`. Plain fs calls: no native code needed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { XlurmError } from './errors';
import { statePaths } from './paths';

function fail(message: string): never { throw new XlurmError('STORAGE', message); }

/**
 * As root, every existing ancestor must be a root-owned directory that is not
 * group/other-writable unless sticky (so /tmp is fine): otherwise another user
 * could swap a path component under the root daemon, which re-resolves its
 * paths on every open. Components are examined with lstat(2), not stat(2): a
 * symbolic link is a component too, and whoever owns it can re-point it later
 * (even in sticky /tmp). A link is accepted only when root owns it, and the
 * directories it leads to must pass the same test.
 */
function checkTrustedAncestors(home: string): void {
  const parent = path.dirname(home);
  checkChain(parent);
  const real = resolveExisting(parent);
  if (real !== parent) checkChain(real);
}

function checkChain(start: string): void {
  let dir = start;
  for (;;) {
    let st: fs.Stats | undefined;
    try { st = fs.lstatSync(dir); } catch { st = undefined; }
    if (st) {
      const writable = (st.mode & 0o022) !== 0;
      const sticky = (st.mode & 0o1000) !== 0;
      const trusted = st.uid === 0 && (st.isSymbolicLink() || (st.isDirectory() && (!writable || sticky)));
      if (!trusted) fail(`root daemon state must be under trusted root-owned directories: ${dir}`);
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
}

/** `p` with every symbolic link in its existing part resolved (realpath(3) of the deepest existing ancestor). */
function resolveExisting(p: string): string {
  const tail: string[] = [];
  let dir = p;
  for (;;) {
    try { return path.join(fs.realpathSync(dir), ...tail); } catch { /* not there (yet) */ }
    const up = path.dirname(dir);
    if (up === dir) return p;
    tail.unshift(path.basename(dir));
    dir = up;
  }
}

/** Create/check `$XLURM_HOME` and `jobs/` with the modes of docs/behaviour.md §7.1. */
export function initStateDir(home: string): void {
  const euid = process.geteuid!();
  if (euid === 0) checkTrustedAncestors(home);
  try {
    fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  } catch {
    fail('cannot create state directory; start the shared daemon with sudo');
  }
  const st = fs.lstatSync(home);
  if (!st.isDirectory() || st.uid !== euid) fail('XLURM_HOME must be a directory owned by the daemon account');
  if ((st.mode & 0o022) !== 0) fail('XLURM_HOME must not be writable by other users');
  fs.chmodSync(home, 0o755);
  const jobs = statePaths(home).jobs;
  try { fs.mkdirSync(jobs, { mode: 0o700 }); } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') fail('cannot create state directory; start the shared daemon with sudo');
  }
  const js = fs.lstatSync(jobs);
  if (!js.isDirectory() || js.uid !== euid) fail('invalid jobs directory owner');
  fs.chmodSync(jobs, 0o700);
}
