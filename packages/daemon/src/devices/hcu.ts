/**
 * Hygon HCU (docs/behaviour.md §9.1-§9.3): identity and compute processes through hyhal's
 * rocm_smi (native/src/addon/rocm-smi.cc; id = rocm_smi index, visible =
 * unique id `0x…`), health through `hy-smi --healthcheck` (hy-smi.ts), both
 * asked on every probe, concurrently. Jobs get `ROCR_VISIBLE_DEVICES` = ids and
 * `HIP_VISIBLE_DEVICES` / `CUDA_VISIBLE_DEVICES` = `0..N-1`
 * (runner/visibility.ts).
 */
import * as path from 'node:path';
import type { Device } from '@xlurm/protocol';
import type { Backend, BackendFactory, ProbeResult } from './backend';
import { HEALTH_CALL, HEALTH_TIMEOUT_MS, findHealthTool, runHealthcheck, type HealthReport } from './hy-smi';
import { libraryPaths, loadedFrom, nativeBackend, type NativeVendor } from './native-backend';

const ROCM_SMI: NativeVendor = {
  kind: 'hcu',
  libraryEnv: 'XLURM_HCU_SMI_LIBRARY',
  search: [
    '/opt/hyhal/lib/librocm_smi64.so',
    '/opt/dtk/.hyhal/rocm_smi/lib/librocm_smi64.so',
    'librocm_smi64.so',
  ],
};
const rocmSmi = nativeBackend(ROCM_SMI);

/**
 * One device's status from the library's answer and the health report:
 * unknown stays unknown; then a failed or incomplete health report is
 * unknown; then unhealthy; then the library's idle/busy.
 */
export function withHealth(id: number, r: ProbeResult, report: HealthReport): ProbeResult {
  if (r.status === 'unknown') return r;
  if (!report.ok) return { status: 'unknown', error: report.error };
  const h = report.health.get(id);
  if (h === undefined) return { status: 'unknown', error: `${HEALTH_CALL}: no row for HCU[${id}]` };
  return h === 'unhealthy' ? { status: 'unhealthy' } : r;
}

/** A library backend whose devices' health comes from a separate check (aborted by close()). */
export class HealthCheckedBackend implements Backend {
  private readonly stopping = new AbortController();

  constructor(private readonly inner: Backend, private readonly check: (signal: AbortSignal) => Promise<HealthReport>) {}

  get kind(): Backend['kind'] { return this.inner.kind; }
  get devices(): readonly Device[] { return this.inner.devices; }
  get nodes(): Backend['nodes'] { return this.inner.nodes; }
  get numa(): Backend['numa'] { return this.inner.numa; }
  /** The library's readings (utilisation, memory: samples); health adds none. */
  readings(): ReturnType<NonNullable<Backend['readings']>> { return this.inner.readings?.() ?? new Map(); }

  async probe(ids: readonly number[]): Promise<Map<number, ProbeResult>> {
    const [results, report] = await Promise.all([this.inner.probe(ids), this.check(this.stopping.signal)]);
    const out = new Map<number, ProbeResult>();
    for (const id of ids) {
      out.set(id, withHealth(id, results.get(id) ?? { status: 'unknown', error: 'device missing from the probe answer' }, report));
    }
    return out;
  }

  close(): void {
    this.stopping.abort();
    this.inner.close();
  }
}

export const hcu: BackendFactory = (opts) => {
  const inner = rocmSmi(opts);
  let tool: string;
  try {
    tool = findHealthTool(opts.env);
  } catch (e) {
    inner.close();
    throw e;
  }
  // The tool gets the library's directory as its LD_LIBRARY_PATH and nothing from the daemon's
  // environment (hy-smi.ts healthEnv).
  const loaded = loadedFrom(libraryPaths(ROCM_SMI, opts.env));
  const libraryDir = loaded === undefined ? undefined : path.dirname(loaded);
  opts.log(`hcu: health from ${tool} --healthcheck${libraryDir ? ` (LD_LIBRARY_PATH=${libraryDir})` : ''}`);
  return new HealthCheckedBackend(inner, (signal) => runHealthcheck(tool, libraryDir, HEALTH_TIMEOUT_MS, signal));
};
