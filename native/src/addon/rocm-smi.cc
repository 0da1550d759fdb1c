// Hygon HCU through hyhal's rocm_smi (librocm_smi64.so) behind the Vendor interface. No vendor
// headers: the functions and the one struct used are declared here from
// docs/driver-apis.md §6 (Hygon's own rocm_smi.h [HY1], measured behaviour [HY3]).
//
//   Init      rsmi_init(0), rsmi_status_string
//   Discover  rsmi_num_monitor_devices, per index rsmi_dev_unique_id_get (the identity, shown as
//             0x<hex>) and rsmi_dev_name_get (optional)
//   Probe     per id: rsmi_dev_unique_id_get (the daemon compares it with discovery); processes
//             once per probe: the host-wide list (rsmi_compute_process_info_get), then per PID
//             the devices it uses (rsmi_compute_process_gpus_get), then per (PID, requested
//             device) rsmi_compute_process_info_by_device_get, which must confirm the PID;
//             and, when exported, rsmi_dev_busy_percent_get and rsmi_dev_memory_total_get /
//             rsmi_dev_memory_usage_get (VRAM), for samples
//   Shutdown  rsmi_shut_down
// Health is not a library question for HCU: the daemon runs `hy-smi --healthcheck` itself
// (packages/daemon/src/devices/hy-smi.ts), so rows carry no health.
#include "device.h"
#include "node-holders.h"

#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace xlurm::dev {

namespace {

using rsmi_status_t = uint32_t;  // an enum whose largest value is 0xFFFFFFFF

constexpr rsmi_status_t kSuccess = 0;
constexpr rsmi_status_t kNotFound = 10;
constexpr rsmi_status_t kInsufficientSize = 11;
constexpr uint32_t kPidCeiling = 1u << 22;  // Linux pid_max can never exceed 2^22
constexpr size_t kNameBufferSize = 128;
constexpr uint32_t kMaxProcesses = 65536;

struct ProcessInfo {  // rsmi_process_info_t
  uint32_t process_id;
  uint32_t pasid;
  uint64_t vram_usage;
  uint64_t sdma_usage;
  uint32_t cu_occupancy;
};
static_assert(sizeof(ProcessInfo) == 32, "rsmi_process_info_t is 32 bytes on LP64");

using InitFn = rsmi_status_t (*)(uint64_t);
using ShutdownFn = rsmi_status_t (*)();
using StatusStringFn = rsmi_status_t (*)(rsmi_status_t, const char**);
using NumDevicesFn = rsmi_status_t (*)(uint32_t*);
using UniqueIdFn = rsmi_status_t (*)(uint32_t, uint64_t*);
using NameFn = rsmi_status_t (*)(uint32_t, char*, size_t);
using PciIdFn = rsmi_status_t (*)(uint32_t, uint64_t*);
using ProcessListFn = rsmi_status_t (*)(ProcessInfo*, uint32_t*);
using ProcessGpusFn = rsmi_status_t (*)(uint32_t, uint32_t*, uint32_t*);
using ProcessByDeviceFn = rsmi_status_t (*)(uint32_t, uint32_t, ProcessInfo*);
using BusyPercentFn = rsmi_status_t (*)(uint32_t, uint32_t*);
using MemoryFn = rsmi_status_t (*)(uint32_t, int /* rsmi_memory_type_t */, uint64_t*);
constexpr int kMemoryVram = 0;  // RSMI_MEM_TYPE_VRAM (VIS_VRAM 1 and GTT 2 are other pools)

class RocmSmi : public Vendor {
 public:
  std::string Init(void* lib, const std::string& path) override {
    const char* missing = nullptr;
    auto need = [&](const char* name) {
      void* p = FindSymbol(lib, {name});
      if (!p && !missing) missing = name;
      return p;
    };
    init_ = reinterpret_cast<InitFn>(need("rsmi_init"));
    shutdown_ = reinterpret_cast<ShutdownFn>(need("rsmi_shut_down"));
    status_string_ = reinterpret_cast<StatusStringFn>(need("rsmi_status_string"));
    num_devices_ = reinterpret_cast<NumDevicesFn>(need("rsmi_num_monitor_devices"));
    unique_id_ = reinterpret_cast<UniqueIdFn>(need("rsmi_dev_unique_id_get"));
    process_list_ = reinterpret_cast<ProcessListFn>(need("rsmi_compute_process_info_get"));
    process_gpus_ = reinterpret_cast<ProcessGpusFn>(need("rsmi_compute_process_gpus_get"));
    process_by_device_ = reinterpret_cast<ProcessByDeviceFn>(need("rsmi_compute_process_info_by_device_get"));
    name_ = reinterpret_cast<NameFn>(FindSymbol(lib, {"rsmi_dev_name_get"}));  // optional (§8)
    pci_id_ = reinterpret_cast<PciIdFn>(FindSymbol(lib, {"rsmi_dev_pci_id_get"}));  // optional: device nodes
    busy_percent_ = reinterpret_cast<BusyPercentFn>(FindSymbol(lib, {"rsmi_dev_busy_percent_get"}));  // optional: samples
    memory_total_ = reinterpret_cast<MemoryFn>(FindSymbol(lib, {"rsmi_dev_memory_total_get"}));
    memory_usage_ = reinterpret_cast<MemoryFn>(FindSymbol(lib, {"rsmi_dev_memory_usage_get"}));
    if (missing) return path + " does not export " + missing + " (not a rocm_smi library?)";
    Enter("rsmi_init");
    rsmi_status_t rc = init_(0);
    if (rc != kSuccess) return Error("rsmi_init", rc);
    return "";
  }

  std::string Discover(std::vector<RawDevice>* out) override {
    uint32_t count = 0;
    Enter("rsmi_num_monitor_devices");
    rsmi_status_t rc = num_devices_(&count);
    if (rc != kSuccess) return Error("rsmi_num_monitor_devices", rc);
    if (count > 4096) return "rsmi_num_monitor_devices: invalid answer (" + std::to_string(count) + " devices)";
    device_count_ = count;
    for (uint32_t i = 0; i < count; i++) {
      RawDevice d;
      d.id = i;
      d.error = UniqueId(i, &d.uuid);
      if (d.error.empty()) d.error = Name(i, &d.name);
      if (d.error.empty()) d.pci = PciAddress(Pci(i));
      if (d.error.empty()) d.nodes = DrmNodes(d.pci);
      out->push_back(std::move(d));
    }
    return "";
  }

  void Probe(const std::vector<uint32_t>& ids, std::vector<ProbeRow>* out) override {
    std::map<uint32_t, std::vector<uint32_t>> by_device;  // requested id -> PIDs confirmed on it
    std::map<uint32_t, std::string> device_error;         // requested id -> why its list is unknown
    std::string list_error = Processes(ids, &by_device, &device_error);
    for (uint32_t id : ids) {
      ProbeRow r;
      r.id = id;
      r.error = UniqueId(id, &r.uuid);
      r.has_uuid = r.error.empty();
      if (r.error.empty()) r.error = !list_error.empty() ? list_error : device_error[id];
      if (r.error.empty()) {
        r.processes = by_device[id];
        r.has_processes = true;
        Readings(id, &r);
      }
      out->push_back(std::move(r));
    }
  }

  void Shutdown() override {
    Enter("rsmi_shut_down");
    shutdown_();
  }

 private:
  // "<call>: <rsmi_status_string> (<code>)", e.g. "rsmi_init: RSMI_STATUS_INIT_ERROR (8)".
  std::string Error(const char* call, rsmi_status_t rc) {
    const char* text = nullptr;
    Enter("rsmi_status_string");
    if (status_string_(rc, &text) != kSuccess) text = nullptr;
    return std::string(call) + ": " + (text && *text ? text : "error") + " (" + std::to_string(rc) + ")";
  }

  // Utilisation (percent) and VRAM (bytes) for samples (docs/behaviour.md §26.2). Optional: a
  // failed call or an absurd answer is simply not reported, never the device's error.
  void Readings(uint32_t index, ProbeRow* r) {
    if (busy_percent_) {
      uint32_t busy = 0;
      Enter("rsmi_dev_busy_percent_get");
      if (busy_percent_(index, &busy) == kSuccess && busy <= 100) r->utilization = busy;
    }
    if (memory_total_ && memory_usage_) {
      uint64_t total = 0, used = 0;
      Enter("rsmi_dev_memory_total_get");
      if (memory_total_(index, kMemoryVram, &total) != kSuccess) return;
      Enter("rsmi_dev_memory_usage_get");
      if (memory_usage_(index, kMemoryVram, &used) != kSuccess) return;
      if (total == 0 || used > total || total > (1ULL << 50)) return;
      r->memory_total = static_cast<int64_t>(total);
      r->memory_used = static_cast<int64_t>(used);
      r->memory_free = static_cast<int64_t>(total - used);
    }
  }

  // The identity: the 64-bit unique id as 0x<lowercase hex> (rocm-smi's --showuniqueid form).
  std::string UniqueId(uint32_t index, std::string* out) {
    uint64_t id = 0;
    Enter("rsmi_dev_unique_id_get");
    rsmi_status_t rc = unique_id_(index, &id);
    if (rc != kSuccess) return Error("rsmi_dev_unique_id_get", rc);
    if (id == 0) return "rsmi_dev_unique_id_get: invalid answer (unique id 0)";
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, id);
    out->assign(buf);
    return "";
  }

  // The HCU's PCI address (its DRM nodes, card and renderD, are listed under it, and its NUMA
  // node), from rsmi_dev_pci_id_get's domain<<32 | partition<<28 | bus<<8 | device<<3 | function
  // (docs/driver-apis.md §6); a failed call leaves them unknown (docs/behaviour.md §24.8).
  std::string Pci(uint32_t index) {
    if (!pci_id_) return "";
    uint64_t id = 0;
    Enter("rsmi_dev_pci_id_get");
    if (pci_id_(index, &id) != kSuccess) return "";
    char bdf[32];
    std::snprintf(bdf, sizeof bdf, "%04x:%02x:%02x.%x", static_cast<unsigned>((id >> 32) & 0xffffffffu),
                  static_cast<unsigned>((id >> 8) & 0xffu), static_cast<unsigned>((id >> 3) & 0x1fu), static_cast<unsigned>(id & 0x7u));
    return bdf;
  }

  std::string Name(uint32_t index, std::string* out) {
    if (!name_) {
      out->assign("Hygon HCU");
      return "";
    }
    std::vector<char> buf(kNameBufferSize + 1, 0);
    Enter("rsmi_dev_name_get");
    rsmi_status_t rc = name_(index, buf.data(), kNameBufferSize);
    if (rc != kSuccess) return Error("rsmi_dev_name_get", rc);
    buf[kNameBufferSize] = 0;  // never trust the library to terminate a full buffer
    out->assign(buf.data());
    return "";
  }

  // The host-wide PID list (docs/driver-apis.md §6.3: a list, its figures are zero): ask for the count,
  // then read into a buffer with room for late starters; a short buffer answer means more
  // processes started in between, so ask again.
  std::string ProcessList(std::vector<uint32_t>* pids) {
    const char* call = "rsmi_compute_process_info_get";
    uint32_t count = 0;
    Enter(call);
    rsmi_status_t rc = process_list_(nullptr, &count);
    if (rc != kSuccess) return Error(call, rc);
    for (int attempt = 0; attempt < 4; attempt++) {
      if (count > kMaxProcesses) return std::string(call) + ": invalid answer (" + std::to_string(count) + " processes)";
      uint32_t capacity = count + 16;
      std::vector<ProcessInfo> rows(capacity, ProcessInfo{});
      uint32_t n = capacity;
      Enter(call);
      rc = process_list_(rows.data(), &n);
      if (rc == kInsufficientSize) {
        count = n > count ? n : count + 16;
        continue;
      }
      if (rc != kSuccess) return Error(call, rc);
      if (n > capacity) return std::string(call) + ": invalid answer (" + std::to_string(n) + " rows for a buffer of " + std::to_string(capacity) + ")";
      pids->clear();
      for (uint32_t i = 0; i < n; i++) {
        uint32_t pid = rows[i].process_id;
        if (pid == 0 || pid >= kPidCeiling) return std::string(call) + ": invalid answer (PID " + std::to_string(pid) + ")";
        pids->push_back(pid);
      }
      return "";
    }
    return std::string(call) + ": invalid answer (process count keeps growing)";
  }

  // Which requested devices each listed PID uses, confirmed per (PID, device). A PID that is gone
  // by the time it is asked about (NOT_FOUND) is skipped: it no longer uses anything. An error
  // about one device makes that device's list unknown; one that cannot be pinned to a device
  // (the list, a PID's devices) makes every list unknown (returned).
  std::string Processes(const std::vector<uint32_t>& ids, std::map<uint32_t, std::vector<uint32_t>>* by_device,
                        std::map<uint32_t, std::string>* device_error) {
    std::vector<uint32_t> pids;
    std::string err = ProcessList(&pids);
    if (!err.empty()) return err;
    std::set<uint32_t> wanted(ids.begin(), ids.end());
    for (uint32_t pid : pids) {
      std::vector<uint32_t> devices(device_count_ + 16, 0);
      uint32_t n = static_cast<uint32_t>(devices.size());
      Enter("rsmi_compute_process_gpus_get");
      rsmi_status_t rc = process_gpus_(pid, devices.data(), &n);
      if (rc == kNotFound) continue;
      if (rc != kSuccess) return Error("rsmi_compute_process_gpus_get", rc);
      if (n > devices.size())
        return "rsmi_compute_process_gpus_get: invalid answer (" + std::to_string(n) + " devices for a buffer of " + std::to_string(devices.size()) + ")";
      for (uint32_t k = 0; k < n; k++) {
        uint32_t dev = devices[k];
        if (dev >= device_count_)
          return "rsmi_compute_process_gpus_get: invalid answer (device " + std::to_string(dev) + " of " + std::to_string(device_count_) + ")";
        if (!wanted.count(dev) || !(*device_error)[dev].empty()) continue;
        ProcessInfo info{};
        Enter("rsmi_compute_process_info_by_device_get");
        rc = process_by_device_(pid, dev, &info);
        if (rc == kNotFound) continue;  // it left the device (or exited) in between
        if (rc != kSuccess) {
          (*device_error)[dev] = Error("rsmi_compute_process_info_by_device_get", rc);
        } else if (info.process_id != pid) {
          (*device_error)[dev] = "rsmi_compute_process_info_by_device_get: invalid answer (PID " +
                                 std::to_string(info.process_id) + " for " + std::to_string(pid) + ")";
        } else {
          (*by_device)[dev].push_back(pid);
        }
      }
    }
    return "";
  }

  InitFn init_ = nullptr;
  ShutdownFn shutdown_ = nullptr;
  StatusStringFn status_string_ = nullptr;
  NumDevicesFn num_devices_ = nullptr;
  UniqueIdFn unique_id_ = nullptr;
  NameFn name_ = nullptr;
  PciIdFn pci_id_ = nullptr;
  ProcessListFn process_list_ = nullptr;
  ProcessGpusFn process_gpus_ = nullptr;
  ProcessByDeviceFn process_by_device_ = nullptr;
  BusyPercentFn busy_percent_ = nullptr;
  MemoryFn memory_total_ = nullptr;
  MemoryFn memory_usage_ = nullptr;
  uint32_t device_count_ = 0;
};

}  // namespace

std::unique_ptr<Vendor> MakeRocmSmi() { return std::make_unique<RocmSmi>(); }

}  // namespace xlurm::dev
