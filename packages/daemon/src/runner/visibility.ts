/**
 * Device visibility variables (docs/behaviour.md §6.4, §9.1). Every job gets every variable;
 * one with no allocated device of its kind is `-1`. Advisory only: nothing
 * stops a process from opening other devices (see docs/security.md).
 */
import type { Device } from '@xlurm/protocol';

function list(values: readonly (string | number)[]): string { return values.length ? values.join(',') : '-1'; }

/** The variables to set (and `ASCEND_DEVICE_ID`: '0' with Ascend devices, else null = unset). */
export function visibilityEnv(devices: readonly Device[]): Record<string, string | null> {
  const of = (k: Device['kind']) => devices.filter((d) => d.kind === k);
  const nv = of('nvidia'), asc = of('ascend'), mtt = of('mthreads'), mx = of('metax'), ppu = of('ppu'), hcu = of('hcu');
  let cuda: string;
  if (mx.length) cuda = list(mx.map((d) => d.id));
  else if (ppu.length) cuda = list(ppu.map((d) => d.visible));
  else if (hcu.length) cuda = list(hcu.map((_, i) => i));
  else cuda = list(nv.map((d) => d.visible));
  return {
    CUDA_VISIBLE_DEVICES: cuda,
    ASCEND_RT_VISIBLE_DEVICES: list(asc.map((d) => d.id)),
    MUSA_VISIBLE_DEVICES: list(mtt.map((d) => d.id)),
    MTHREADS_VISIBLE_DEVICES: list(mtt.map((d) => d.visible)),
    MACA_VISIBLE_DEVICES: list(mx.map((d) => d.id)),
    HIP_VISIBLE_DEVICES: list(hcu.map((_, i) => i)),
    ROCR_VISIBLE_DEVICES: list(hcu.map((d) => d.id)),
    ASCEND_DEVICE_ID: asc.length ? '0' : null,
  };
}
