/**
 * NVIDIA through NVML (docs/behaviour.md §9.1, §9.2; native/src/addon/nvml.cc): id = NVML
 * index, visible = GPU UUID, probe = UUID unchanged + compute processes
 * (none → idle, any → busy; xlurm's own jobs' devices show as allocated).
 * The library is the loader's `libnvidia-ml.so.1`, or `XLURM_NVML_LIBRARY`
 * (absolute) from the daemon's environment.
 */
import { nativeBackend } from './native-backend';

export const nvidia = nativeBackend({
  kind: 'nvidia',
  libraryEnv: 'XLURM_NVML_LIBRARY',
  search: ['libnvidia-ml.so.1'],
});
