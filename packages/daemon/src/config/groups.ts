/**
 * `[devices.groups]` (docs/behaviour.md §21.5): per vendor label, groups of
 * device ids, `';'` between groups, `','` and ranges inside (`"0-3;4-7"`).
 * The syntax and "no id in two groups" are checked when the file is read;
 * whether each id exists needs the inventory (checkGroupIds, at start and on
 * every reload).
 */
import type { Device, DeviceKind } from '@xlurm/protocol';
import { KINDS, KIND_LABEL } from '@xlurm/protocol';

/** Declared groups of one vendor, in the file's order. */
export type DeclaredGroups = Partial<Record<DeviceKind, number[][]>>;

const MAX_ID = 0xffffffff;
/** Bounds the work a range such as `0-4000000000` could cost. */
const MAX_GROUP_IDS = 4096;

/** Parse one vendor's value: the groups, or the problem (for `<file>:<line>: devices.groups.nv: <problem>`). */
export function parseGroups(text: string): number[][] | string {
  const groups: number[][] = [];
  const owner = new Map<number, number>();
  const parts = text.split(';');
  for (let g = 0; g < parts.length; g++) {
    const part = parts[g]!.trim();
    if (part === '') return `invalid groups '${text}': empty group; write e.g. "0-3;4-7"`;
    const ids: number[] = [];
    for (const item of part.split(',')) {
      const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(item);
      if (!m) return `invalid groups '${text}': '${item.trim()}' is not an id or a range of ids; write e.g. "0-3;4-7"`;
      const lo = Number(m[1]);
      const hi = m[2] === undefined ? lo : Number(m[2]);
      if (hi > MAX_ID) return `invalid groups '${text}': device id ${hi} is too large`;
      if (hi < lo) return `invalid groups '${text}': range ${lo}-${hi} is empty`;
      if (hi - lo + ids.length >= MAX_GROUP_IDS) return `invalid groups '${text}': a group may have at most ${MAX_GROUP_IDS} devices`;
      for (let id = lo; id <= hi; id++) {
        const prev = owner.get(id);
        if (prev !== undefined) {
          return prev === g ? `device id ${id} is listed twice in group ${g + 1}` : `device id ${id} is in two groups (${prev + 1} and ${g + 1})`;
        }
        owner.set(id, g);
        ids.push(id);
      }
    }
    groups.push(ids);
  }
  return groups;
}

/** The vendor of a `[devices.groups]` key (the schema allows only labels). */
export function kindOfLabel(label: string): DeviceKind | undefined {
  return KINDS.find((k) => KIND_LABEL[k] === label);
}

/**
 * The first declared id that no device of its vendor has, as a problem for
 * its key, or undefined when all exist.
 */
export function checkGroupIds(groups: DeclaredGroups, inventory: readonly Device[]): { key: string; problem: string } | undefined {
  for (const kind of KINDS) {
    const gs = groups[kind];
    if (!gs) continue;
    const missing = gs.flat().filter((id) => !inventory.some((d) => d.kind === kind && d.id === id));
    if (missing.length) {
      const label = KIND_LABEL[kind];
      return {
        key: `devices.groups.${label}`,
        problem: `unknown ${label} device ID${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
      };
    }
  }
  return undefined;
}

/** The problems of a schema-valid file's `[devices.groups]` (checked with the rest of the file). */
export function groupProblems(settings: { devices?: { groups?: Record<string, string | undefined> } }): { key: string; problem: string }[] {
  const out: { key: string; problem: string }[] = [];
  for (const [label, text] of Object.entries(settings.devices?.groups ?? {})) {
    if (text === undefined) continue;
    const g = parseGroups(text);
    if (typeof g === 'string') out.push({ key: `devices.groups.${label}`, problem: g });
  }
  return out;
}
