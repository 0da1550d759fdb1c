/**
 * Waiting in tests: poll a condition with a deadline, never a fixed sleep.
 *
 * A predicate says "not yet" by returning a falsy value; a predicate that
 * throws fails the wait at once. A test that waits on something that went
 * wrong (a daemon that died at start, a request that cannot be answered)
 * then fails with the cause in hand instead of waiting out its timeout, and a
 * predicate that would throw on the way (a file not there yet) must say
 * "not yet" itself, which keeps every wait explicit about what it tolerates.
 *
 * Either failure carries what the registered contexts say (see
 * addFailureContext): the log of every daemon a test started through
 * test/helpers/daemon.ts, so the reason is in the test's output.
 */

export interface WaitOpts {
  /** Milliseconds before the wait fails (default 15 s). */
  timeout?: number;
  /** Milliseconds between two tries (default 20). */
  interval?: number;
  /** What is waited for, for the failure's message. */
  what?: string;
}

const contexts = new Set<() => string>();

/**
 * Add `describe` to the message of every wait that fails from now on (a
 * daemon's log, say); call the returned function to take it out again.
 */
export function addFailureContext(describe: () => string): () => void {
  contexts.add(describe);
  return () => { contexts.delete(describe); };
}

/** What the registered contexts say, one paragraph each (empty when none says anything). */
export function failureContext(): string {
  const parts: string[] = [];
  for (const describe of contexts) {
    let text: string;
    try { text = describe(); } catch (e) { text = `(context unavailable: ${String(e)})`; }
    if (text) parts.push(text);
  }
  return parts.length ? `\n${parts.join('\n')}` : '';
}

/** Poll `fn` until it returns a truthy value, resolved to; see the file's comment for failures. */
export async function waitFor<T>(fn: () => T | Promise<T>, opts: WaitOpts = {}): Promise<NonNullable<T>> {
  const what = opts.what ?? 'condition';
  const deadline = Date.now() + (opts.timeout ?? 15000);
  const interval = opts.interval ?? 20;
  for (;;) {
    let v: T;
    try {
      v = await fn();
    } catch (e) {
      throw new Error(`failed waiting for ${what}: ${e instanceof Error ? e.message : String(e)}${failureContext()}`, { cause: e });
    }
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${failureContext()}`);
    await delay(interval);
  }
}

/**
 * Check that `fn` keeps returning a truthy value for `ms` milliseconds
 * (polled every `interval`): resolves to true, or to false at the first
 * try that returned falsy. For "must still hold a while later" checks, where
 * no event marks the end.
 */
export async function keepsHolding(fn: () => unknown, ms: number, interval = 100): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (!(await fn())) return false;
    if (Date.now() >= until) return true;
    await delay(Math.min(interval, Math.max(until - Date.now(), 1)));
  }
}

/** The pause between two tries of a poll (only there: a test never sleeps for a fixed time otherwise). */
function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function pidAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}
