import * as fs from 'node:fs';
import * as path from 'node:path';

/** Write a file atomically: temp file (0600), fsync, rename, fsync the directory. */
export function writeFileAtomic(file: string, data: string): void {
  const tmp = `${file.replace(/\.[^./]*$/, '')}.tmp.${process.pid}`;
  const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC, 0o600);
  try {
    try {
      fs.writeSync(fd, data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (e) {
    try { fs.unlinkSync(tmp); } catch { /* never created or already gone */ }
    throw e;
  }
  const dfd = fs.openSync(path.dirname(file), 'r');
  try { fs.fsyncSync(dfd); } finally { fs.closeSync(dfd); }
}
