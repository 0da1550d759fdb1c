/**
 * Huawei Ascend through DCMI (docs/behaviour.md §9.1-§9.3; native/src/addon/dcmi.cc): one
 * device per compute chip (multi-chip cards give one per chip), id = the
 * chip's logical id, visible = the logical id as text (what
 * ASCEND_RT_VISIBLE_DEVICES takes), npu = card id, chip = chip index, sorted
 * by id. The v2 API is used only where dcmiv2_init accepts (Ascend 950), else
 * the classic API. Probe = the logical id still names the same chip, health
 * (major/critical alarm → unhealthy), processes (any → busy).
 * The library is found in the search list below, or at `XLURM_DCMI_LIBRARY`
 * (absolute) from the daemon's environment.
 */
import { nativeBackend } from './native-backend';

export const ascend = nativeBackend({
  kind: 'ascend',
  libraryEnv: 'XLURM_DCMI_LIBRARY',
  search: ['/usr/local/dcmi/libdcmi.so', '/usr/local/Ascend/driver/lib64/driver/libdcmi.so', 'libdcmi.so'],
});
