// NVML-shaped management libraries: NVML itself (nvml.cc) and its clones that only rename the
// symbols (T-Head HGML, hgml.cc; docs/driver-apis.md §1, §5). One implementation
// (nvml-shaped.cc) driven by a table of symbol names, so the process-row validation and the
// two-call protocol exist once.
#pragma once

#include <memory>

#include "device.h"

namespace xlurm::dev {

// The symbols of one NVML-shaped library. Every `const char*` is a symbol (or a call name used in
// Enter() and error messages); alternatives are listed preferred first.
struct NvmlShapedApi {
  const char* library;            // "NVML": "<path> does not export X (not an NVML library?)"
  const char* init;               // ret (void), preferred (…Init_v2)
  const char* init_with_flags;    // ret (unsigned flags), called with 0; nullptr: not used
  const char* init_plain;         // ret (void), last resort (…Init)
  const char* shutdown;
  const char* error_string;
  const char* count_call;         // …DeviceGetCount (messages)
  const char* count[2];           // _v2, plain
  const char* handle_call;        // …DeviceGetHandleByIndex (messages)
  const char* handle_by_index[2]; // _v2, plain
  const char* uuid;
  const char* name;
  bool name_required;             // false: a library without it names every device `default_name`
  const char* default_name;
  const char* processes_call;     // …DeviceGetComputeRunningProcesses (messages)
  const char* processes[3];       // _v3, _v2 (24-byte rows), plain (16-byte rows)
  // A library the main one needs (DT_NEEDED) that may not be on the loader's path: loaded first
  // from the main library's directory when present there (libuki.so for HGML). nullptr: none.
  const char* preload;
  // …DeviceGetTopologyCommonAncestor (NVML's levels, docs/driver-apis.md §1.7), for device groups
  // at discovery; nullptr, or a library that does not export it: topology unknown.
  const char* topology;
  // …DeviceGetMinorNumber and the node it names: `node_prefix` + minor (/dev/nvidia<minor>); a
  // library that does not export it, or a failed call, leaves the device's nodes unknown.
  const char* minor;
  const char* node_prefix;
  // …DeviceGetUtilizationRates and …DeviceGetMemoryInfo, read at each probe for samples
  // (docs/behaviour.md §26.2); nullptr, a library without them or a failed call: not reported.
  const char* utilization = nullptr;
  const char* memory = nullptr;
  // …DeviceGetPciInfo (_v3, _v2, plain: domain, bus and device sit at the same offsets in every
  // version of the struct, docs/driver-apis.md §1.3), for the device's NUMA node; nullptr, a
  // library without it or a failed call: the address stays unknown.
  const char* pci_info[3] = {nullptr, nullptr, nullptr};
};

// A Vendor for the library `api` describes (which must outlive it: use a static table).
std::unique_ptr<Vendor> MakeNvmlShaped(const NvmlShapedApi& api);

}  // namespace xlurm::dev
