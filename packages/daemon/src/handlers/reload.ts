import { XlurmError } from '@xlurm/protocol';
import type { Core } from '../core';
import { loadDaemonConfig } from '../config/daemon';
import { ConfigFileError } from '../config/load';
import { requireAdmin } from './admin';
import type { Handler } from './types';

/**
 * Read the daemon's configuration file again, combine it with the options
 * given at start (they still win) and hand it to Core. The same path serves
 * `xlurm reload` and SIGHUP. Throws INVALID_CONFIG or RELOAD_REFUSED; then
 * nothing changed.
 */
export function reloadConfig(core: Core): { file: string; changed: string[] } {
  const { file, named, args } = core.cfg.source;
  let next;
  try {
    next = loadDaemonConfig(args, { file, named });
  } catch (e) {
    if (e instanceof ConfigFileError) throw new XlurmError('INVALID_CONFIG', e.message);
    throw e;
  }
  return { file, changed: core.applyConfig(next) };
}

export const reload: Handler<'reload'> = ({ core, caller }) => {
  requireAdmin(core, caller, 'reload the configuration');
  try {
    return reloadConfig(core);
  } catch (e) {
    if (e instanceof XlurmError) core.log(`reload refused: ${e.message.replace(/\n/g, '; ')}`);
    throw e;
  }
};
