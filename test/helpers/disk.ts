/**
 * A small file system the test can fill: a tmpfs mounted in a temporary
 * directory (root only), plus helpers that fill it to the last byte.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { IS_ROOT } from './env';

/** Mount a tmpfs of `size` bytes (mode 0755); `why` says why not where that is not permitted. */
export function mountTmpfs(tap: { teardown(fn: () => unknown): void }, size: number): { dir: string; why?: undefined } | { dir?: undefined; why: string } {
  if (!IS_ROOT) return { why: 'mounting a tmpfs needs root' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xl-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (e) {
    fs.rmdirSync(dir);
    return { why: `mount -t tmpfs is not permitted here: ${String((e as { stderr?: Buffer }).stderr ?? e).trim()}` };
  }
  tap.teardown(() => {
    try { execFileSync('umount', ['-l', dir], { stdio: 'pipe' }); } catch { /* already gone */ }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { dir };
}

/** Append to `file` until the file system refuses another byte. */
export function fillSlack(file: string, text = '#\n'): void {
  const fd = fs.openSync(file, 'a');
  const chunk = Buffer.alloc(64 * 1024, text);
  try {
    for (let n = chunk.length; n >= text.length; n >>= 1) {
      const piece = chunk.subarray(0, n - (n % text.length));
      for (;;) { try { fs.writeSync(fd, piece); } catch { break; } }
    }
  } finally { fs.closeSync(fd); }
}

/** Fill the file system holding `dir` with `dir/filler`; returns the filler's path (unlink it to free the space). */
export function fill(dir: string): string {
  const file = path.join(dir, 'filler');
  fillSlack(file, 'U');
  return file;
}
