/**
 * Sampling (docs/behaviour.md §26.2): every `[accounting] sample_interval`
 * the daemon records each device's status, holder, utilisation and memory
 * in use, and the host's MemAvailable, load and pressure, and then rewrites
 * `metrics_file` (§26.3).
 *
 * Nothing here calls a vendor library: the device readings are those of
 * the device layer's latest probe, which already runs off the event loop
 * on the library's own thread with its deadline (devices/manager.ts). A
 * stalled driver thus leaves its devices `unknown` with stale or no
 * readings, and neither the sample nor a scheduling pass ever waits for
 * it. The host files are read on libuv's thread pool. The only work on the
 * event loop is a few inserts into the store and building the text.
 */
import type Database from 'better-sqlite3';
import type { Core } from '../core';
import { DEFAULT_ACCOUNTING, type AccountingSettings } from './settings';
import type { DeviceReading } from '../devices/backend';
import { deviceLabel, metricsText } from './metrics';
import { readHost } from './host';
import { writeAtomically } from './metrics-file';

/** Rows deleted per statement by the retention sweep: a long backlog goes in bounded bites. */
const RETENTION_BATCH = 5000;

/** Where the sampler reads device readings (DeviceManager; tests pass their own). */
export interface ReadingSource { readings(): ReadonlyMap<string, DeviceReading> }

const samplers = new WeakMap<Core, Sampler>();

/** The running daemon's sampler, for `xlurm metrics` (undefined in tests that start none). */
export function samplerOf(core: Core): Sampler | undefined { return samplers.get(core); }

export class Sampler {
  private timer: NodeJS.Timeout | undefined;
  private settings: AccountingSettings = DEFAULT_ACCOUNTING;
  private running = false;
  private stopped = false;
  private stmts: { device: Database.Statement; host: Database.Statement; oldDevice: Database.Statement; oldHost: Database.Statement } | undefined;
  /** The metrics file's last write failure, logged once until it works again. */
  private lastWriteError = '';
  /** The last failure to record a sample (a full disk), logged once until a sample is recorded again. */
  private lastRecordError = '';
  /** Resolves after each finished sample (tests). */
  onSample: (() => void) | undefined;

  constructor(private readonly core: Core, private readonly source: ReadingSource, private readonly log: (msg: string) => void) {
    samplers.set(core, this);
  }

  /** Device readings of the latest probes, by device label (nv:0). */
  readings(): ReadonlyMap<string, DeviceReading> { return this.source.readings(); }

  /** The exposition now (`xlurm metrics`, and what each sample writes). */
  metrics(): string { return metricsText(this.core, this.readings()); }

  /** (Re)arm for these settings: a reload that changes the interval takes effect at once. */
  configure(s: AccountingSettings | undefined): void {
    this.settings = s ?? DEFAULT_ACCOUNTING;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.stopped || this.settings.sampleInterval <= 0) return;
    this.timer = setInterval(() => void this.sample(), this.settings.sampleInterval * 1000);
    this.timer.unref();
    void this.sample();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private statements(db: Database.Database) {
    this.stmts ??= {
      device: db.prepare(`INSERT INTO device_samples (at, device, status, job, user, utilization, memory_used)
                          VALUES (?, ?, ?, ?, ?, ?, ?)`),
      host: db.prepare(`INSERT INTO host_samples (at, mem_available, load1, load5, load15, cpu_pressure, memory_pressure, io_pressure, pending, running)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      oldDevice: db.prepare(`DELETE FROM device_samples WHERE rowid IN (SELECT rowid FROM device_samples WHERE at < ? LIMIT ${RETENTION_BATCH})`),
      oldHost: db.prepare(`DELETE FROM host_samples WHERE rowid IN (SELECT rowid FROM host_samples WHERE at < ? LIMIT ${RETENTION_BATCH})`),
    };
    return this.stmts;
  }

  /** One sample; a sample still in progress (a slow disk) makes this one a no-op. */
  async sample(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    try {
      const host = await readHost();
      if (this.stopped) return;
      this.record(host);
      const file = this.settings.metricsFile;
      if (file) {
        try {
          await writeAtomically(file, this.metrics());
          if (this.lastWriteError) this.log(`metrics file ${file} written again`);
          this.lastWriteError = '';
        } catch (e) {
          // The same failure (by its code: the message names the temporary file) is logged once.
          const err = e as NodeJS.ErrnoException;
          const key = err.code ?? err.message;
          if (key !== this.lastWriteError) this.log(`cannot write metrics file ${file}: ${err.message}`);
          this.lastWriteError = key;
        }
      }
    } finally {
      this.running = false;
      this.onSample?.();
    }
  }

  /** The rows of one sample and the retention sweep, in one transaction (synchronous: nothing else interleaves). */
  private record(host: Awaited<ReturnType<typeof readHost>>): void {
    const core = this.core;
    const db = core.historyDb;
    const st = this.statements(db);
    const at = core.now();
    const readings = this.readings();
    let pending = 0; let running = 0;
    const owners = new Map<number, string>();
    for (const j of core.activeJobs()) {
      if (j.state === 'PENDING') pending++;
      else if (j.state === 'RUNNING') { running++; owners.set(j.id, j.owner.name); }
    }
    const cutoff = at - this.settings.retentionSecs;
    const write = () => {
      for (const v of core.deviceViews()) {
        const label = deviceLabel(v.device);
        const r = readings.get(label);
        st.device.run(at, label, v.status, v.job, v.job === null ? null : owners.get(v.job) ?? null, r?.utilization ?? null, r?.memoryUsed ?? null);
      }
      st.host.run(at, host.memAvailable, host.load1, host.load5, host.load15, host.cpuPressure, host.memoryPressure, host.ioPressure, pending, running);
      st.oldDevice.run(cutoff);
      st.oldHost.run(cutoff);
    };
    const run = () => {
      try {
        db.transaction(write)();
        this.lastRecordError = '';
      } catch (e) {
        // Not one line per sample while the disk stays full; the next spell of failures is said again.
        const message = (e as Error).message;
        if (message !== this.lastRecordError) this.log(`cannot record a sample: ${message}`);
        this.lastRecordError = message;
      }
    };
    // Never inside the store's open group commit: an error there (SQLITE_FULL,
    // IOERR) can roll the whole transaction back, the jobs' writes with it,
    // unknown to the store and its waiters. The store commits that batch at
    // the end of this turn; the sample follows in a transaction of its own
    // (or is skipped if a batch is open again by then: the next one comes).
    if (db.inTransaction) setImmediate(() => { if (!db.inTransaction) run(); });
    else run();
  }
}
