// NVIDIA NVML (libnvidia-ml.so.1): an NVML-shaped library (nvml-shaped.cc) with NVML's own
// symbol names (docs/driver-apis.md §1, §8).
#include "nvml-shaped.h"

namespace xlurm::dev {

namespace {

constexpr NvmlShapedApi kNvml = {
    /*library=*/"NVML",
    /*init=*/"nvmlInit_v2",
    /*init_with_flags=*/nullptr,
    /*init_plain=*/"nvmlInit",
    /*shutdown=*/"nvmlShutdown",
    /*error_string=*/"nvmlErrorString",
    /*count_call=*/"nvmlDeviceGetCount",
    /*count=*/{"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"},
    /*handle_call=*/"nvmlDeviceGetHandleByIndex",
    /*handle_by_index=*/{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"},
    /*uuid=*/"nvmlDeviceGetUUID",
    /*name=*/"nvmlDeviceGetName",
    /*name_required=*/true,
    /*default_name=*/"",
    /*processes_call=*/"nvmlDeviceGetComputeRunningProcesses",
    /*processes=*/{"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
                   "nvmlDeviceGetComputeRunningProcesses"},
    /*preload=*/nullptr,
    /*topology=*/"nvmlDeviceGetTopologyCommonAncestor",
    /*minor=*/"nvmlDeviceGetMinorNumber",
    /*node_prefix=*/"/dev/nvidia",
    /*utilization=*/"nvmlDeviceGetUtilizationRates",
    /*memory=*/"nvmlDeviceGetMemoryInfo",
    /*pci_info=*/{"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"},
};

}  // namespace

std::unique_ptr<Vendor> MakeNvml() { return MakeNvmlShaped(kNvml); }

}  // namespace xlurm::dev
