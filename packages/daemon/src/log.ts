/**
 * Daemon log lines on stderr (daemon.log under `xlurm start`), with a UTC
 * timestamp. Logging never takes the daemon down: a line that cannot be
 * written (daemon.log on a full disk, a pipe whose reader went away) is
 * counted, and the next line that can be written says how many were lost.
 */
import * as fs from 'node:fs';

let lost = 0;
let lostWhy = '';
let stderrIsFile: boolean | undefined;

/** Node's stderr stream throws an unhandled 'error' on EPIPE; count instead. */
process.stderr.on('error', (e: NodeJS.ErrnoException) => { lost++; lostWhy = e.code ?? e.message; });

/** stderr is a file or device (Node writes those synchronously and turns an error into a crash). */
function toFile(): boolean {
  if (stderrIsFile === undefined) {
    try {
      const st = fs.fstatSync(2);
      stderrIsFile = st.isFile() || st.isCharacterDevice();
    } catch { stderrIsFile = false; }
  }
  return stderrIsFile;
}

export function logLine(msg: string): void {
  const stamp = new Date().toISOString();
  let text = `${stamp} ${msg}\n`;
  if (lost) text = `${stamp} daemon log: ${lost} line(s) could not be written (${lostWhy})\n${text}`;
  if (!toFile()) {
    process.stderr.write(text);
    lost = 0;
    return;
  }
  // A file (daemon.log) or device: write it ourselves, synchronously, so that a
  // failure (ENOSPC) is an exception we handle rather than a stream 'error'
  // that would end the process.
  try {
    fs.writeSync(2, text);
    lost = 0;
  } catch (e) {
    lost++;
    lostWhy = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  }
}
