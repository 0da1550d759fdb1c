/**
 * A Prometheus histogram kept in memory: cumulative bucket counts, the sum
 * and the count since the daemon started (docs/behaviour.md §26.3).
 */
export class Histogram {
  /** Observations at most each bound (not yet cumulative: rendering adds them up). */
  private readonly counts: number[];
  private inf = 0;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) { this.counts = bounds.map(() => 0); }

  observe(v: number): void {
    this.sum += v;
    this.count++;
    for (let i = 0; i < this.bounds.length; i++) {
      if (v <= this.bounds[i]!) { this.counts[i]!++; return; }
    }
    this.inf++;
  }

  /** [le, cumulative count] for every bound and +Inf. */
  cumulative(): Array<[string, number]> {
    let acc = 0;
    const out: Array<[string, number]> = this.bounds.map((b, i) => { acc += this.counts[i]!; return [String(b), acc]; });
    out.push(['+Inf', acc + this.inf]);
    return out;
  }
}

/**
 * Scheduler pass durations, observed by Core around every pass: from 50 µs
 * (a pass over a short queue) to a second (far beyond its budget).
 */
export const passSeconds = new Histogram([0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]);
