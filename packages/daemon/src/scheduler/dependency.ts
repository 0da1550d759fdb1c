/**
 * The dependency rule (docs/behaviour.md §23.1), pure: given a job's parsed
 * `-d` list and the states of the jobs it names, does it wait (and why, as
 * the `Dependency` reason), may it start, or can it never start (its error)?
 *
 * - afterok: the parent ended COMPLETED; any other end can never satisfy it.
 * - afterany: the parent ended, in any state.
 * - afternotok: the parent ended in any state but COMPLETED; COMPLETED can never satisfy it.
 * - after: the parent left PENDING (started, or ended without starting).
 * - singleton: no other job of the same owner and name runs, nor waits
 *   having been submitted earlier (the caller finds that job).
 *
 * A parent no longer in the store (removed by retention after it ended)
 * counts as satisfying: a parent whose end could never satisfy its
 * dependents cancels them in the same transaction as its own end, so a
 * dependent still waiting is one whose parent's end was good for it.
 */
import type { Dependencies, JobState, Reason } from '@xlurm/protocol';

/** A parent's state; null: no longer stored (see above). */
export type ParentState = JobState | null;

export type DependencyStatus =
  | { kind: 'ready' }
  | { kind: 'wait'; reason: Reason; on: number | null }
  | { kind: 'never'; error: string };

const READY: DependencyStatus = { kind: 'ready' };

const terminal = (s: JobState) => s !== 'PENDING' && s !== 'RUNNING';

const WAITS = { afterok: 'completes', afterany: 'ends', afternotok: 'ends unsuccessfully', after: 'starts' } as const;

/**
 * The status of `deps`: `never` if any term can never hold, else the first
 * term that does not hold yet (its job in `on`), else ready. `singletonWith`
 * is the job a singleton waits for, or null.
 */
export function dependencyStatus(deps: Dependencies, stateOf: (id: number) => ParentState, singletonWith: number | null): DependencyStatus {
  let wait: DependencyStatus | undefined;
  for (const term of deps.terms) {
    for (const id of term.ids) {
      const s = stateOf(id);
      if (s === null) continue;
      let holds: boolean;
      switch (term.type) {
        case 'afterok':
          if (terminal(s) && s !== 'COMPLETED') return never(id, s);
          holds = s === 'COMPLETED';
          break;
        case 'afternotok':
          if (s === 'COMPLETED') return never(id, s);
          holds = terminal(s);
          break;
        case 'afterany': holds = terminal(s); break;
        case 'after': holds = s !== 'PENDING'; break;
      }
      if (!holds) wait ??= { kind: 'wait', reason: { code: 'Dependency', message: `after job ${id} ${WAITS[term.type]}` }, on: id };
    }
  }
  if (wait) return wait;
  if (deps.singleton && singletonWith !== null) {
    return { kind: 'wait', reason: { code: 'Dependency', message: `singleton: job ${singletonWith} of the same name has not ended` }, on: null };
  }
  return READY;
}

/** The error of a dependent cancelled because `id` ended in `state`. */
export function neverError(id: number, state: JobState): string {
  return `dependency never satisfied: job ${id} ended ${state}`;
}

function never(id: number, s: JobState): DependencyStatus {
  return { kind: 'never', error: neverError(id, s) };
}
