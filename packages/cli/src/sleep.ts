/** Waiting in the clients: one abortable sleep for retries, reconnects and polls. */
import { setTimeout as delay } from 'node:timers/promises';

/**
 * Resolve after `ms`; if `signal` is aborted first (or already was), reject
 * with its reason, not Node's AbortError: callers tell a stop they asked for
 * from a failure by the reason they gave.
 */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    throw e;
  }
}
