/**
 * Moore Threads through MTML, read-only (docs/behaviour.md §9.1, §9.2; native/src/addon/mtml.cc):
 * id = MTML index, visible = GPU UUID. MTML has no process query, so a probe
 * = UUID unchanged + the processes holding one of the GPU's device nodes
 * (`mtmlDeviceGet{Gpu,Primary,Render}Path`) open, from one scan of
 * /proc/<pid>/fd (any → busy). When that scan cannot see every process
 * (another PID namespace, unreadable descriptors) or the GPU names no node,
 * the GPU is unknown with the reason, never idle. MTML has no health query.
 * The library is the loader's `libmtml.so`, or `XLURM_MTML_LIBRARY`
 * (absolute) from the daemon's environment; `XLURM_MTML_PROC_ROOT` names
 * another process table (e.g. the host's /proc inside a container).
 */
import { nativeBackend } from './native-backend';

export const mthreads = nativeBackend({
  kind: 'mthreads',
  libraryEnv: 'XLURM_MTML_LIBRARY',
  search: ['libmtml.so'],
});
