/**
 * NUMA placement of a job's CPUs (docs/behaviour.md §24.3): a device's NUMA
 * node from its PCI address (sysfs `numa_node`, read once at discovery) and
 * the CPUs of a node (its `cpulist`), so that a job's CPU set is taken from
 * the node its devices hang off where there are free CPUs there. Only a
 * preference: an unknown node (-1, no PCI address, no sysfs) or a node
 * without free CPUs falls back to any free CPUs, and never fails a job.
 *
 * `<sysfs>` is /sys, or XLURM_SYSFS_ROOT (absolute) from the daemon's own
 * environment (tests: a tree made by the test); a job's environment never
 * reaches this.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseCpuList } from './host';

/** /sys, or the daemon's own XLURM_SYSFS_ROOT when absolute. */
export function sysfsRoot(env: NodeJS.ProcessEnv): string {
  const root = env.XLURM_SYSFS_ROOT;
  return root && path.isAbsolute(root) ? root : '/sys';
}

const PCI_ADDRESS = /^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;

/** The NUMA node of the PCI device `pci` ("0000:3b:00.0"); null when unknown (-1, unreadable, malformed). */
export function pciNumaNode(pci: string, sysfs: string): number | null {
  if (!PCI_ADDRESS.test(pci)) return null;
  let text: string;
  try { text = fs.readFileSync(path.join(sysfs, 'bus/pci/devices', pci, 'numa_node'), 'latin1').trim(); } catch { return null; }
  if (!/^\d{1,4}$/.test(text)) return null; // -1: the platform does not say
  return Number(text);
}

/** The CPUs of NUMA node `node` (its cpulist); null when unknown. */
export function nodeCpus(node: number, sysfs: string): number[] | null {
  if (!Number.isInteger(node) || node < 0) return null;
  try {
    return parseCpuList(fs.readFileSync(path.join(sysfs, `devices/system/node/node${node}/cpulist`), 'latin1'));
  } catch {
    return null;
  }
}

/**
 * The CPUs near a job's devices: those of the known nodes among `nodes`
 * (null entries: devices whose node is unknown), read from sysfs; empty when
 * none is known.
 */
export function cpusNear(nodes: readonly (number | null)[], sysfs: string): Set<number> {
  const out = new Set<number>();
  for (const n of new Set(nodes)) {
    if (n === null) continue;
    for (const c of nodeCpus(n, sysfs) ?? []) out.add(c);
  }
  return out;
}
