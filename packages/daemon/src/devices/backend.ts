/**
 * The boundary between the daemon and a vendor management library. Each
 * vendor backend discovers its devices once at start and answers probes.
 * Probes run off the event loop (native thread) and always settle: a hung
 * driver call yields `unknown` with an error once its deadline passes.
 */
import type { Device, DeviceKind } from '@xlurm/protocol';

export type ProbeStatus = 'idle' | 'busy' | 'unhealthy' | 'unknown';

export interface ProbeResult {
  status: ProbeStatus;
  /** For `unknown`: the failed query and the driver's error. */
  error?: string;
  /**
   * For `busy`, where the library names them: the first few (MAX_BUSY_PIDS) host
   * PIDs of the processes on it, ascending, so a pending job's reason can name
   * them (docs/behaviour.md §20.4).
   */
  pids?: number[];
}

/** Utilisation (0–1) and memory in use (bytes) as a device's latest probe read them, where the library reports them (docs/behaviour.md §26.2). */
export interface DeviceReading {
  utilization?: number | undefined; memoryUsed?: number | undefined;
  /** Total and free device memory in bytes, for packing slices (docs/behaviour.md §25.2). */
  memoryTotal?: number | undefined; memoryFree?: number | undefined;
}

/** How many PIDs of a busy device are kept: enough to find the culprit, short enough for a one-line reason. */
export const MAX_BUSY_PIDS = 4;

/** The PIDs a `busy` result carries: unique, ascending, at most MAX_BUSY_PIDS. */
export function busyPids(processes: readonly number[]): number[] {
  return [...new Set(processes)].sort((a, b) => a - b).slice(0, MAX_BUSY_PIDS);
}

export interface Backend {
  readonly kind: DeviceKind;
  /** Devices found at discovery, in the vendor's order (Ascend and HCU sorted by id). */
  readonly devices: readonly Device[];
  /**
   * Groups of device ids as the library reported the topology at discovery
   * (docs/behaviour.md §21.5); undefined: the library reports none (unknown).
   */
  readonly groups?: readonly (readonly number[])[];
  /**
   * Each device's own node files from discovery, by device id (docs/behaviour.md §24.8);
   * a device (or a backend) without an entry names none.
   */
  readonly nodes?: ReadonlyMap<number, readonly string[]>;
  /**
   * Each device's NUMA node from its PCI address at discovery, by device id (docs/behaviour.md
   * §24.3); a device (or a backend) without an entry: unknown.
   */
  readonly numa?: ReadonlyMap<number, number>;
  /** Query the given devices (by id). Must resolve, never reject, within its deadline. */
  probe(ids: readonly number[]): Promise<Map<number, ProbeResult>>;
  /** What the latest probes read besides the status, by device id (samples); absent: nothing. */
  readings?(): ReadonlyMap<number, DeviceReading>;
  /** Release the library. */
  close(): void;
}

/** Extra variables a vendor needs in a job's environment (beyond docs/behaviour.md §6.4), if any. */
export type BackendFactory = (opts: { env: NodeJS.ProcessEnv; log: (msg: string) => void }) => Backend;
