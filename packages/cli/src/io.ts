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

/** Write bytes to stdout; resolves once they are accepted (after 'drain' if needed). */
export function writeOut(data: Buffer | string): Promise<void> {
  watchStdout();
  if (stdoutError) return Promise.reject(new CliError(osErrorText(stdoutError)));
  return new Promise((resolve, reject) => {
    const out = process.stdout;
    const cleanup = () => { out.removeListener('drain', onDrain); out.removeListener('error', onError); };
    const onDrain = () => { cleanup(); resolve(); };
    const onError = (err: Error) => { cleanup(); reject(new CliError(osErrorText(err))); };
    if (out.write(data)) { resolve(); return; }
    out.on('drain', onDrain);
    out.on('error', onError);
  });
}

/** One line on stderr. */
export function errLine(text: string): void {
  process.stderr.write(text + '\n');
}
