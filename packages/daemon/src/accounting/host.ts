/**
 * The host's side of a sample (docs/behaviour.md §26.2): MemAvailable, the
 * load averages and the kernel's pressure (PSI "some" avg10, percent). Read
 * asynchronously (libuv's thread pool), never on the event loop; a file the
 * kernel does not have (no PSI) leaves its fields null.
 */
import * as fs from 'node:fs';

export interface HostReading {
  memAvailable: number | null;
  load1: number | null; load5: number | null; load15: number | null;
  cpuPressure: number | null; memoryPressure: number | null; ioPressure: number | null;
}

async function read(file: string): Promise<string | null> {
  try { return await fs.promises.readFile(file, 'utf8'); } catch { return null; }
}

/** `some avg10=1.23 …` → 1.23 */
export function pressureOf(text: string | null): number | null {
  const m = text ? /^some avg10=([0-9.]+)/m.exec(text) : null;
  return m ? Number(m[1]) : null;
}

export function memAvailableOf(text: string | null): number | null {
  const m = text ? /^MemAvailable:\s+(\d+) kB/m.exec(text) : null;
  return m ? Number(m[1]) * 1024 : null;
}

export async function readHost(proc = '/proc'): Promise<HostReading> {
  const [meminfo, loadavg, cpu, memory, io] = await Promise.all([
    read(`${proc}/meminfo`), read(`${proc}/loadavg`),
    read(`${proc}/pressure/cpu`), read(`${proc}/pressure/memory`), read(`${proc}/pressure/io`),
  ]);
  const load = loadavg ? loadavg.trim().split(/\s+/).slice(0, 3).map(Number) : [];
  const l = (i: number) => (load[i] !== undefined && Number.isFinite(load[i]) ? load[i]! : null);
  return {
    memAvailable: memAvailableOf(meminfo), load1: l(0), load5: l(1), load15: l(2),
    cpuPressure: pressureOf(cpu), memoryPressure: pressureOf(memory), ioPressure: pressureOf(io),
  };
}
