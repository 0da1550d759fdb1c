import type { DeviceKind, JobState } from './schemas';

/** Vendors in allocation priority order (docs/behaviour.md §5.1, §9.1). */
export const KINDS: readonly DeviceKind[] = ['nvidia', 'ascend', 'mthreads', 'metax', 'ppu', 'hcu'];

/** Display label per kind, used in tables and device keys (docs/behaviour.md §4.1). */
export const KIND_LABEL: Readonly<Record<DeviceKind, string>> = {
  nvidia: 'nv', ascend: 'asc', mthreads: 'mtt', metax: 'mx', ppu: 'ppu', hcu: 'hcu',
};

const ALIASES: Readonly<Record<string, DeviceKind>> = {
  nvidia: 'nvidia', nv: 'nvidia', ascend: 'ascend', asc: 'ascend', mthreads: 'mthreads', mtt: 'mthreads',
  metax: 'metax', mx: 'metax', ppu: 'ppu', hcu: 'hcu',
};

/** `--device` / `--backend` names (full names and labels) to a kind; undefined if unknown. */
export function parseKind(name: string): DeviceKind | undefined {
  return Object.prototype.hasOwnProperty.call(ALIASES, name) ? ALIASES[name] : undefined;
}

/** Names accepted by `--device`. */
export const KIND_NAMES = Object.keys(ALIASES);

/** `--backend` names: every kind name plus `auto` and `none`. */
export const BACKEND_NAMES = ['auto', ...KIND_NAMES, 'none'];

/** Canonical backend name (`nv` → `nvidia`); undefined if unknown. */
export function parseBackend(name: string): string | undefined {
  if (name === 'auto' || name === 'none') return name;
  return parseKind(name);
}

export const TERMINAL_STATES = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'EXPIRED', 'OUT_OF_MEMORY'] as const;
/** Every job state, in the order of a job's life: waiting, running, then how it ended. */
export const JOB_STATES = ['PENDING', 'RUNNING', ...TERMINAL_STATES] as const satisfies readonly JobState[];
export function isTerminal(state: string): boolean {
  return state !== 'PENDING' && state !== 'RUNNING';
}
