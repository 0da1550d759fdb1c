import { XlurmError } from '@xlurm/protocol';
import type { Caller, Core } from '../core';

export function requireAdmin(core: Core, c: Caller, what: string): void {
  if (!core.isAdmin(c)) throw new XlurmError('NOT_ADMIN', `only the administrator may ${what}`);
}
