/**
 * Writing `metrics_file` so that node_exporter's textfile collector never
 * reads half of it (docs/behaviour.md §26.3): the text goes to a temporary
 * file in the same directory (its name does not end in `.prom`, so the
 * collector ignores it), then is renamed over the old one, which replaces
 * it in one step. Not synced: readers never see a partial file either way,
 * and after a crash the next sample rewrites it. Readable by everyone (the
 * collector runs as its own account); the daemon's umask would hide it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

let seq = 0;

export async function writeAtomically(file: string, text: string): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${++seq}.tmp`);
  let fh: fs.promises.FileHandle | undefined;
  try {
    fh = await fs.promises.open(tmp, 'w', 0o644);
    await fh.writeFile(text);
    await fh.chmod(0o644);
    await fh.close();
    fh = undefined;
    await fs.promises.rename(tmp, file);
  } catch (e) {
    if (fh) await fh.close().catch(() => undefined);
    await fs.promises.unlink(tmp).catch(() => undefined);
    throw e;
  }
}
