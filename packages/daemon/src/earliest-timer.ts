/**
 * One timer for the earliest of many deadlines (Unix seconds), as Core's
 * queue-wait expiry and the workflow gates' begin times each need: arming a
 * time at or after the one set changes nothing, an earlier one replaces it.
 * It is disarmed before it fires, so the callback arms it again for what is
 * still to come. The timer never keeps the process alive.
 */
export class EarliestTimer {
  private timer: NodeJS.Timeout | undefined;
  private at: number | undefined;

  constructor(private readonly fire: () => void) {}

  arm(at: number): void {
    if (this.at !== undefined && this.at <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.at = at;
    // setTimeout holds at most 2^31-1 ms; a later time is simply looked at again then.
    const ms = Math.min(Math.max(0, at * 1000 - Date.now()), 0x7fffffff);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.at = undefined;
      this.fire();
    }, ms);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.at = undefined;
  }
}
