/**
 * Writing `metrics_file` so that node_exporter's textfile collector never
 * reads half of it (docs/behaviour.md §26.3): the text goes to a temporary
 * file in the same directory (its name does not end in `.prom`, so the
 * collector ignores it), then is renamed over the old one, which replaces
 * it in one step. Not synced: readers never see a partial file either way,
 * and after a crash the next sample rewrites it. Readable by everyone (the
 * collector runs as its own account); the daemon's umask would hide it.
 *
 * Through safe-fs.ts (extensions 28.1): the temporary name is unpredictable
 * and created O_EXCL relative to the directory's descriptor, so a link
 * planted under any name makes root neither write nor chmod another file;
 * the directory itself is held to 28.1's ownership rule at start and reload
 * (config/dirs.ts).
 */
import * as path from 'node:path';
import { SafeDir } from '../safe-fs';

export async function writeAtomically(file: string, text: string): Promise<void> {
  const dir = SafeDir.open(path.dirname(file));
  try {
    await dir.writeAtomicAsync(path.basename(file), text, 0o644);
  } finally {
    dir.close();
  }
}
