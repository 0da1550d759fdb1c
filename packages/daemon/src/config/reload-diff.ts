/**
 * What a reload changed, for the tables whose settings are not plain fields
 * of DaemonConfig: the dotted keys whose effective value differs, so the
 * log's `changed …` list is true (a reload that changed `[sharing]` was
 * logged as `nothing changed`).
 */
import type { SharingSettings, SharingVendor } from '../sharing/settings';

/** `sharing.enabled`, `sharing.<vendor>.<key>`, or `sharing.<vendor>` when its table came or went. */
export function changedSharingKeys(a: SharingSettings | undefined, b: SharingSettings | undefined): string[] {
  const out: string[] = [];
  if ((a?.enabled ?? false) !== (b?.enabled ?? false)) out.push('sharing.enabled');
  const kinds = new Set([...(a?.vendors.keys() ?? []), ...(b?.vendors.keys() ?? [])]);
  for (const kind of kinds) {
    const table = `sharing.${kind}`; // the vendor tables are named by kind: [sharing.ascend], [sharing.nvidia]
    const x = a?.vendors.get(kind);
    const y = b?.vendors.get(kind);
    if (!x || !y) { out.push(table); continue; }
    const keys: Array<[string, keyof SharingVendor]> = [['library', 'library'], ['shared_region_dir', 'sharedRegionDir'], ['policy', 'policy']];
    for (const [key, field] of keys) if (x[field] !== y[field]) out.push(`${table}.${key}`);
  }
  return out;
}
