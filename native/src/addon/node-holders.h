// Which processes hold a device node open: one scan of <proc>/<pid>/fd for vendors whose
// management library cannot list a device's processes (MTML, docs/driver-apis.md §3.6).
// Plain C++ (no Node-API); runs on the vendor library's worker thread, like the driver calls.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace xlurm::dev {

// One device's nodes: the paths the driver reported (and their canonical forms), and the device
// numbers of those that are character devices (matched across mount namespaces).
struct DeviceNodes {
  std::vector<std::string> paths;
  std::vector<dev_t> rdevs;
};

// Resolve the reported paths with stat(2) and realpath(3). Returns "" or the reason, e.g.
// "cannot stat /dev/mtgpu.0: No such file or directory" (a node the driver names must exist).
std::string ResolveNodes(const std::vector<std::string>& reported, DeviceNodes* out);

// Scan `proc_root` once; holders[i] receives the PIDs (ascending) with an open descriptor on a
// node of devices[i], the scanning process itself left out. Returns "" or why occupancy cannot be
// established: `proc_root` is not the host's process table (another PID namespace hides
// processes), or some process's descriptors cannot be read (permission).
std::string FindNodeHolders(const std::string& proc_root, const std::vector<DeviceNodes>& devices,
                            std::vector<std::vector<uint32_t>>* holders);

// The DRM nodes of the PCI device `bdf` ("0000:3b:00.0"): the card* and renderD* entries of
// <sysfs>/bus/pci/devices/<bdf>/drm/, as /dev/dri/<name>, sorted (docs/behaviour.md §24.8, for
// DRM-based vendors). <sysfs> is /sys, or XLURM_SYSFS_ROOT (absolute) from the daemon's own
// environment (tests). Empty when the address is malformed or sysfs names no DRM node.
std::vector<std::string> DrmNodes(const std::string& bdf);

// `bdf` as RawDevice.pci carries it (lower case), or "" when it is not a PCI address.
std::string PciAddress(const std::string& bdf);

}  // namespace xlurm::dev
