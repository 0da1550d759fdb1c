/**
 * `[sharing]` (docs/behaviour.md §25): whether jobs may ask for slices of a
 * card, and per vendor the preload library that enforces them (HAMi-core for
 * NVIDIA, HAMi-vnpu-core for Ascend), where the per-card shared regions live
 * and the library's scheduling policy. A vendor shares only when its table
 * names a library: the values of the documented example are not defaults.
 */
import type { DeviceKind } from '@xlurm/protocol';

export interface SharingVendor {
  /** Absolute path appended to the job's LD_PRELOAD. */
  library: string;
  /** Directory of the per-card shared regions; null: `<state directory>/hami`. */
  sharedRegionDir: string | null;
  /** Handed to the library (Ascend's NPU_SCHED_POLICY). */
  policy: string;
}

export interface SharingSettings {
  enabled: boolean;
  /** The vendors whose table names a library. */
  vendors: ReadonlyMap<DeviceKind, SharingVendor>;
}

/** The file's table as the schema checked it. */
export interface SharingTable {
  enabled?: boolean;
  ascend?: VendorTable;
  nvidia?: VendorTable;
}
interface VendorTable { library?: string; shared_region_dir?: string; policy?: string }

export const DEFAULT_POLICY = 'spatial';

export function sharingSettings(t: SharingTable): SharingSettings {
  const vendors = new Map<DeviceKind, SharingVendor>();
  for (const kind of ['ascend', 'nvidia'] as const) {
    const v = t[kind];
    if (!v?.library) continue;
    vendors.set(kind, { library: v.library, sharedRegionDir: v.shared_region_dir ?? null, policy: v.policy ?? DEFAULT_POLICY });
  }
  return { enabled: t.enabled === true, vendors };
}

/** The vendors that may take slices now: none while sharing is off. */
export function sharingKinds(s: SharingSettings | undefined): ReadonlySet<DeviceKind> {
  return s?.enabled ? new Set(s.vendors.keys()) : new Set();
}
