/**
 * This process's descriptor limit, changed the way an administrator would: prlimit(1) from
 * outside (util-linux). Node has no setrlimit, and the addon exports only what the daemon uses
 * (getNofileLimit).
 */
import * as fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { getNofileLimit } from '../../native/ts/index';

const limitText = (v: number): string => (v >= Number.MAX_SAFE_INTEGER ? 'unlimited' : String(v));

/** Sets this process's soft RLIMIT_NOFILE (the hard one stays). Needs room for prlimit's pipes. */
export function setSoftNofileLimit(soft: number): void {
  execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${limitText(soft)}:`], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/**
 * Leaves this process exactly `free` descriptors to open until the returned function is called:
 * the soft limit is lowered just above the descriptors in use and the rest filled with
 * /dev/null. The release closes the fillers first, so that restoring the limit has room.
 */
export function exhaustDescriptors(free: number): () => void {
  const [soft] = getNofileLimit();
  const highest = Math.max(...fs.readdirSync('/proc/self/fd').map(Number));
  setSoftNofileLimit(highest + 64);
  const fillers: number[] = [];
  const release = (): void => {
    for (const fd of fillers.splice(0)) fs.closeSync(fd);
    setSoftNofileLimit(soft);
  };
  try {
    for (;;) fillers.push(fs.openSync('/dev/null', 'r'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EMFILE') {
      release();
      throw e;
    }
  }
  for (let i = 0; i < free; i++) fs.closeSync(fillers.pop()!);
  return release;
}
