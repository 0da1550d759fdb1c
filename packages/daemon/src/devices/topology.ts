/**
 * The device groups in force (docs/behaviour.md §21.5): per vendor, the
 * groups the administrator declared in [devices.groups], else those its
 * library reported at discovery (NVML: devices under one PCIe switch), else
 * none: unknown topology, which placement never reads as "fully connected".
 */
import type { DeviceKind } from '@xlurm/protocol';
import type { DeclaredGroups } from '../config/groups';
import { makeTopology, type GroupAffinity, type Topology } from '../scheduler/place';

export function hostTopology(affinity: GroupAffinity, declared: DeclaredGroups,
  discovered: ReadonlyMap<DeviceKind, readonly (readonly number[])[]>): Topology {
  const groups = new Map<DeviceKind, readonly (readonly number[])[]>(discovered);
  for (const [kind, gs] of Object.entries(declared) as [DeviceKind, number[][]][]) groups.set(kind, gs);
  return makeTopology(affinity, groups);
}
