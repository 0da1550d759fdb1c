/** Writing to stdout/stderr. Log bytes honour backpressure: stdout may be a slow pipe. */
import { CliError, osErrorText } from './errors';

let stdoutError: Error | undefined;
let watching = false;

function watchStdout(): void {
  if (watching) return;
  watching = true;
  // Without a listener an EPIPE on stdout would crash the process.
  process.stdout.on('error', (err) => { stdoutError = err; });
}

/**
 * Write bytes to stdout. Returns nothing when they were written out at once
 * (a file, /dev/null, a pipe with room), else a promise that resolves once
 * they were (this write's callback). Either way the caller may reuse the
 * buffer afterwards: log bytes arrive in a reused read buffer, and most
 * chunks of a large log need no promise.
 */
export function writeOut(data: Buffer | string): Promise<void> | undefined {
  watchStdout();
  if (stdoutError) return Promise.reject(new CliError(osErrorText(stdoutError)));
  const out = process.stdout;
  let written = false;
  let failed: Error | null | undefined;
  let settle: (() => void) | undefined;
  out.write(data, (err) => { written = true; failed = err; settle?.(); });
  // Nothing queued: the bytes reached the descriptor synchronously (the callback follows on the next tick).
  if (out.writableLength === 0 && !written) return undefined;
  return new Promise((resolve, reject) => {
    settle = () => (failed ? reject(new CliError(osErrorText(failed))) : resolve());
    if (written) settle();
  });
}

/** One line on stderr. */
export function errLine(text: string): void {
  process.stderr.write(text + '\n');
}
