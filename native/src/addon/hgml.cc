// T-Head PPU HGML (libhgml.so): an NVML clone with `nvml` renamed `hgml`, run by the NVML-shaped
// implementation (nvml-shaped.cc). Facts from docs/driver-apis.md §5 and §8:
//   * the layouts are inferred from two independent bindings, not a vendor header, so process
//     rows are validated at run time exactly like NVML's (16/24/32-byte strides);
//   * libhgml.so needs libuki.so (DT_NEEDED), which is often not on the loader's path: it is
//     loaded first from libhgml.so's own directory;
//   * initialisation: hgmlInit_v2, else hgmlInitWithFlags(0) (what GPUStack calls), else hgmlInit;
//   * hgmlDeviceGetName is optional; without it devices are named "T-Head PPU";
//   * hgmlDeviceGetUtilizationRates and hgmlDeviceGetMemoryInfo are optional (samples).
#include "nvml-shaped.h"

namespace xlurm::dev {

namespace {

constexpr NvmlShapedApi kHgml = {
    /*library=*/"HGML",
    /*init=*/"hgmlInit_v2",
    /*init_with_flags=*/"hgmlInitWithFlags",
    /*init_plain=*/"hgmlInit",
    /*shutdown=*/"hgmlShutdown",
    /*error_string=*/"hgmlErrorString",
    /*count_call=*/"hgmlDeviceGetCount",
    /*count=*/{"hgmlDeviceGetCount_v2", "hgmlDeviceGetCount"},
    /*handle_call=*/"hgmlDeviceGetHandleByIndex",
    /*handle_by_index=*/{"hgmlDeviceGetHandleByIndex_v2", "hgmlDeviceGetHandleByIndex"},
    /*uuid=*/"hgmlDeviceGetUUID",
    /*name=*/"hgmlDeviceGetName",
    /*name_required=*/false,
    /*default_name=*/"T-Head PPU",
    /*processes_call=*/"hgmlDeviceGetComputeRunningProcesses",
    /*processes=*/{"hgmlDeviceGetComputeRunningProcesses_v3", "hgmlDeviceGetComputeRunningProcesses_v2",
                   "hgmlDeviceGetComputeRunningProcesses"},
    /*preload=*/"libuki.so",
    /*topology=*/nullptr,  // HGML has one (NVML's levels) but no tested fake: unknown topology
    /*minor=*/"hgmlDeviceGetMinorNumber",
    /*node_prefix=*/"/dev/alixpu_ppu",
    // NVML's structs (§5.2), optional like NVML's: readings for samples where exported.
    /*utilization=*/"hgmlDeviceGetUtilizationRates",
    /*memory=*/"hgmlDeviceGetMemoryInfo",
};

}  // namespace

std::unique_ptr<Vendor> MakeHgml() { return MakeNvmlShaped(kHgml); }

}  // namespace xlurm::dev
