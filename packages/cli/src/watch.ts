/**
 * `xqueue --watch` and `xinfo --watch`: the table redrawn in place every
 * WATCH_INTERVAL_MS, like watch(1): clear the screen and home the cursor,
 * a header line (the interval, the command, host and time), a blank line,
 * then the table. A failed request shows its error in place of the table
 * and the next redraw tries again. Ctrl-C (or SIGTERM) leaves the terminal
 * as it was: the cursor shown again and the shell's prompt on a line of
 * its own; the exit status is then 0, as the watch was stopped on purpose.
 */
import * as os from 'node:os';
import { ExitWith } from './errors';
import { formatLocal } from './format/time';
import { sleep } from './sleep';

export const WATCH_INTERVAL_MS = 2000;

/** Clear the screen, cursor home (ED 2 + CUP). */
export const CLEAR = '\x1b[H\x1b[2J';
export const HIDE_CURSOR = '\x1b[?25l';
export const SHOW_CURSOR = '\x1b[?25h';

/** The header line: `Every 2.0s: xqueue --all` and, after two spaces, `host: time`. */
export function watchHeader(command: string, nowSeconds: number, host = os.hostname()): string {
  const { text, label } = formatLocal(nowSeconds);
  return `Every ${(WATCH_INTERVAL_MS / 1000).toFixed(1)}s: ${command}  ${host}: ${text}${label ? ` ${label}` : ''}`;
}

/** Redraw `render()`'s text until interrupted; never returns normally. */
export async function watchScreen(command: string, render: () => Promise<string>, out: NodeJS.WriteStream = process.stdout): Promise<never> {
  const stop = new AbortController();
  const onSignal = () => stop.abort('stopped');
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const write = (s: string) => new Promise<void>((resolve) => { out.write(s, () => resolve()); });
  // A request still on its way when Ctrl-C comes is not waited for.
  const stopped = new Promise<never>((_, reject) => {
    stop.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
  });
  stopped.catch(() => undefined);
  try {
    await write(HIDE_CURSOR);
    while (!stop.signal.aborted) {
      let body: string;
      try {
        body = await Promise.race([render(), stopped]);
      } catch (e) {
        if (stop.signal.aborted) break;
        body = `xlurm: ${(e as Error).message}\n`;
      }
      if (stop.signal.aborted) break;
      await write(`${CLEAR}${watchHeader(command, Math.floor(Date.now() / 1000))}\n\n${body}`);
      try { await sleep(WATCH_INTERVAL_MS, stop.signal); } catch { break; }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await write(`${SHOW_CURSOR}\n`);
  }
  throw new ExitWith(0);
}
