/**
 * `-d/--dependency LIST` (docs/behaviour.md §23.1), parsed once for the CLI
 * and the daemon so both refuse a list with the same words. Slurm's syntax:
 * `afterok:ID[:ID…]`, `afterany:…`, `afternotok:…`, `after:…` and
 * `singleton`, joined by `,` (all must hold). Slurm's `?` (any of) and
 * `+TIME` forms are not accepted: they are refused, never half-understood.
 */

export type DependencyType = 'afterok' | 'afterany' | 'afternotok' | 'after';

export interface DependencyTerm { type: DependencyType; ids: number[] }

export interface Dependencies {
  terms: DependencyTerm[];
  /** One active job per owner and name: waits for every other such job that runs, or that was submitted earlier and has not ended. */
  singleton: boolean;
}

const TYPES: readonly string[] = ['afterok', 'afterany', 'afternotok', 'after'];

/** Most job ids one list may name (a bound on the work per job and on the stored spec). */
export const MAX_DEPENDENCY_IDS = 1024;

const ID = /^[1-9][0-9]{0,15}$/;

export function dependencyError(text: string): string {
  return `invalid dependency '${text}': use afterok, afterany, afternotok or after with :ID[:ID...], or singleton, joined by ','`;
}

/** The list's terms, or the message that refuses it. */
export function parseDependency(text: string): Dependencies | { error: string } {
  const bad = { error: dependencyError(text) };
  const out: Dependencies = { terms: [], singleton: false };
  let count = 0;
  for (const part of text.split(',')) {
    if (part === 'singleton') { out.singleton = true; continue; }
    const [type, ...ids] = part.split(':');
    if (!TYPES.includes(type!) || ids.length === 0) return bad;
    const term: DependencyTerm = { type: type as DependencyType, ids: [] };
    for (const id of ids) {
      if (!ID.test(id) || !Number.isSafeInteger(Number(id))) return bad;
      term.ids.push(Number(id));
    }
    count += term.ids.length;
    if (count > MAX_DEPENDENCY_IDS) return { error: `a dependency may name at most ${MAX_DEPENDENCY_IDS} jobs` };
    out.terms.push(term);
  }
  return out;
}

/** Every job id the list names, each once, in order of first mention. */
export function dependencyIds(d: Dependencies): number[] {
  const seen = new Set<number>();
  for (const t of d.terms) for (const id of t.ids) seen.add(id);
  return [...seen];
}
