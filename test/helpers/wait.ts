/** Poll a condition until it holds or the deadline passes (no fixed sleeps in tests). */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  opts: { timeout?: number; interval?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeout ?? 15000);
  const interval = opts.interval ?? 20;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (e) { last = e; }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${opts.what ?? 'condition'}${last ? `: ${String(last)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

export function pidAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}
