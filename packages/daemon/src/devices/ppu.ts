/**
 * T-Head PPU through HGML (docs/behaviour.md §9.1, §9.2; native/src/addon/hgml.cc, an
 * NVML-shaped library): id = HGML index, visible = UUID, probe = UUID
 * unchanged + compute processes (none → idle, any → busy). HGML has no health
 * call (docs/driver-apis.md §5). Jobs get `CUDA_VISIBLE_DEVICES` = UUIDs
 * (runner/visibility.ts); `PPU_VISIBLE_DEVICES` is not set: the sources
 * disagree whether the SDK reads it and its syntax is unknown
 * (docs/driver-apis.md §7, §11.5), so xlurm does not guess.
 */
import { nativeBackend } from './native-backend';

export const ppu = nativeBackend({
  kind: 'ppu',
  libraryEnv: 'XLURM_HGML_LIBRARY',
  search: [
    '/usr/local/PPU_SDK/lib/libhgml.so',
    '/usr/local/PPU_SDK/targets/x86_64-linux/lib/libhgml.so',
    'libhgml.so',
  ],
});
