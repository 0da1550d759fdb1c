/**
 * MetaX through MXSML's native API (docs/behaviour.md §9.1-§9.3; native/src/addon/mxsml.cc):
 * id = MXSML device index, visible = GPU UUID (virtual functions are left out
 * unless every device is one, as in a guest). Probe = UUID unchanged, availability
 * (`mxSmlGetDeviceUnavailableReason`, and `mxSmlGetDeviceState` where exported:
 * unavailable → unhealthy), then the per-device compute processes (any →
 * busy). The library is the first of the search list below that loads, or
 * `XLURM_MXSML_LIBRARY` (absolute) from the daemon's environment.
 */
import { nativeBackend } from './native-backend';

export const metax = nativeBackend({
  kind: 'metax',
  libraryEnv: 'XLURM_MXSML_LIBRARY',
  search: ['/opt/mxdriver/lib/libmxsml.so', '/opt/maca/lib/libmxsml.so', '/opt/mxn100/lib/libmxsml.so', 'libmxsml.so'],
});
