/**
 * Discovery for `--backend` (docs/behaviour.md §9.3): `none` probes nothing; a specific
 * vendor that fails stops start-up; `auto` skips failing vendors and logs why.
 * Vendor factories register themselves in FACTORIES.
 */
import type { DeviceKind } from '@xlurm/protocol';
import { KINDS, KIND_LABEL } from '@xlurm/protocol';
import type { Backend, BackendFactory } from './backend';

export const FACTORIES: Partial<Record<DeviceKind, BackendFactory>> = {};

export class DiscoveryError extends Error {}

export function discover(backend: string, env: NodeJS.ProcessEnv, log: (msg: string) => void): Backend[] {
  if (backend === 'none') return [];
  const kinds = backend === 'auto' ? KINDS : [backend as DeviceKind];
  const found: Backend[] = [];
  for (const kind of kinds) {
    const factory = FACTORIES[kind];
    try {
      if (!factory) throw new Error(`${kind} backend is not available in this build`);
      const b = factory({ env, log });
      if (b.devices.length === 0) { b.close(); throw new Error('no compute devices discovered'); }
      const ids = new Set(b.devices.map((d) => d.id));
      const vis = new Set(b.devices.map((d) => d.visible));
      if (ids.size !== b.devices.length || vis.size !== b.devices.length) {
        b.close();
        throw new Error('duplicate device IDs in inventory');
      }
      found.push(b);
    } catch (e) {
      const msg = `${KIND_LABEL[kind]} discovery: ${(e as Error).message}`;
      if (backend !== 'auto') throw new DiscoveryError(msg);
      log(msg);
    }
  }
  return found;
}
