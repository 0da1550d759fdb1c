/**
 * Registers the vendor backends compiled into this build with discovery:
 * one line per vendor (the vendor module exports its BackendFactory).
 */
import { ascend } from './ascend';
import { FACTORIES } from './discovery';
import { hcu } from './hcu';
import { metax } from './metax';
import { mthreads } from './mthreads';
import { nvidia } from './nvidia';
import { ppu } from './ppu';

export function registerBackends(): void {
  FACTORIES.nvidia = nvidia;
  FACTORIES.ppu = ppu;
  FACTORIES.hcu = hcu;
  FACTORIES.ascend = ascend;
  FACTORIES.mthreads = mthreads;
  FACTORIES.metax = metax;
}
