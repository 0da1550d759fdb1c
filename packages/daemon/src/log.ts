/** Daemon log lines on stderr (daemon.log under `xlurm start`), with a UTC timestamp. */
export function logLine(msg: string): void {
  process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
}
