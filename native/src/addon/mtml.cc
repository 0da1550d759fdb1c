// Moore Threads MTML (libmtml.so) behind the Vendor interface, read-only. No vendor headers: the
// few functions used are declared here from docs/driver-apis.md §3.
//
//   Init      mtmlLibraryInit (a library object), mtmlErrorString; the process-table root
//   Discover  mtmlLibraryCountDevice, per index mtmlLibraryInitDeviceByIndex, mtmlDeviceGetUUID,
//             mtmlDeviceGetName, mtmlLibraryFreeDevice
//   Probe     per id: device object by index, mtmlDeviceGetIndex (when exported; must match),
//             UUID (the daemon compares it with discovery), the device's nodes
//             (mtmlDeviceGet{Gpu,Primary,Render}Path), and, when exported, the GPU object's
//             utilisation (mtmlDeviceInitGpu, mtmlGpuGetUtilization, mtmlDeviceFreeGpu) and the
//             memory object's total and used bytes (mtmlDeviceInitMemory, mtmlMemoryGetTotal,
//             mtmlMemoryGetUsed, mtmlDeviceFreeMemory), for samples; free; then ONE scan of
//             /proc/<pid>/fd for processes holding those nodes (node-holders.h). MTML has no process API (§3.6);
//             whenever that scan cannot see every process the devices are reported with the reason
//             (the daemon shows them unknown) instead of idle. No health API either (§3.5).
//   Shutdown  mtmlLibraryShutDown(library object)
//
// XLURM_MTML_PROC_ROOT (daemon environment, absolute; default /proc) names the process table to
// scan, e.g. the host's /proc mounted into a container, or a fake one in tests.
#include "device.h"
#include "node-holders.h"

#include <cstdlib>
#include <string>
#include <vector>

namespace xlurm::dev {

namespace {

using MtmlReturn = int;
struct MtmlLibrary;
struct MtmlDevice;
struct MtmlGpu;
struct MtmlMemory;

constexpr MtmlReturn kSuccess = 0;
constexpr MtmlReturn kNotSupported = 4;
constexpr unsigned kUuidBufferSize = 48;  // MTML_DEVICE_UUID_BUFFER_SIZE
constexpr unsigned kNameBufferSize = 32;  // MTML_DEVICE_NAME_BUFFER_SIZE
constexpr unsigned kPathBufferSize = 64;  // MTML_DEVICE_PATH_BUFFER_SIZE

using LibraryInitFn = MtmlReturn (*)(MtmlLibrary**);
using LibraryShutDownFn = MtmlReturn (*)(MtmlLibrary*);
using CountFn = MtmlReturn (*)(const MtmlLibrary*, unsigned int*);
using InitDeviceFn = MtmlReturn (*)(const MtmlLibrary*, unsigned int, MtmlDevice**);
using FreeDeviceFn = MtmlReturn (*)(MtmlDevice*);
using IndexFn = MtmlReturn (*)(const MtmlDevice*, unsigned int*);
using StringFn = MtmlReturn (*)(const MtmlDevice*, char*, unsigned int);
using ErrorStringFn = const char* (*)(MtmlReturn);
using InitGpuFn = MtmlReturn (*)(const MtmlDevice*, MtmlGpu**);
using FreeGpuFn = MtmlReturn (*)(MtmlGpu*);
using GpuUtilFn = MtmlReturn (*)(const MtmlGpu*, unsigned int*);
using InitMemoryFn = MtmlReturn (*)(const MtmlDevice*, MtmlMemory**);
using FreeMemoryFn = MtmlReturn (*)(MtmlMemory*);
using MemoryBytesFn = MtmlReturn (*)(const MtmlMemory*, unsigned long long*);

// The node-path calls, in the order tried; a device answers NOT_SUPPORTED for a node it lacks.
constexpr const char* kNodeCalls[] = {"mtmlDeviceGetGpuPath", "mtmlDeviceGetPrimaryPath", "mtmlDeviceGetRenderPath"};
constexpr size_t kNodeCallCount = sizeof kNodeCalls / sizeof kNodeCalls[0];

class Mtml : public Vendor {
 public:
  std::string Init(void* lib, const std::string& path) override {
    const char* missing = nullptr;
    auto need = [&](const char* name) {
      void* p = FindSymbol(lib, {name});
      if (!p && !missing) missing = name;
      return p;
    };
    init_ = reinterpret_cast<LibraryInitFn>(need("mtmlLibraryInit"));
    shutdown_ = reinterpret_cast<LibraryShutDownFn>(need("mtmlLibraryShutDown"));
    count_ = reinterpret_cast<CountFn>(need("mtmlLibraryCountDevice"));
    init_device_ = reinterpret_cast<InitDeviceFn>(need("mtmlLibraryInitDeviceByIndex"));
    free_device_ = reinterpret_cast<FreeDeviceFn>(need("mtmlLibraryFreeDevice"));
    uuid_ = reinterpret_cast<StringFn>(need("mtmlDeviceGetUUID"));
    name_ = reinterpret_cast<StringFn>(need("mtmlDeviceGetName"));
    error_string_ = reinterpret_cast<ErrorStringFn>(need("mtmlErrorString"));
    if (missing) return path + " does not export " + missing + " (not an MTML library?)";
    index_ = reinterpret_cast<IndexFn>(FindSymbol(lib, {"mtmlDeviceGetIndex"}));
    for (size_t i = 0; i < kNodeCallCount; i++) node_[i] = reinterpret_cast<StringFn>(FindSymbol(lib, {kNodeCalls[i]}));
    // Readings for samples (§3.4), each only with its whole create-read-free set: an object that
    // could not be freed again would leak on every probe.
    init_gpu_ = reinterpret_cast<InitGpuFn>(FindSymbol(lib, {"mtmlDeviceInitGpu"}));
    free_gpu_ = reinterpret_cast<FreeGpuFn>(FindSymbol(lib, {"mtmlDeviceFreeGpu"}));
    gpu_util_ = reinterpret_cast<GpuUtilFn>(FindSymbol(lib, {"mtmlGpuGetUtilization"}));
    if (!init_gpu_ || !free_gpu_ || !gpu_util_) init_gpu_ = nullptr;
    init_memory_ = reinterpret_cast<InitMemoryFn>(FindSymbol(lib, {"mtmlDeviceInitMemory"}));
    free_memory_ = reinterpret_cast<FreeMemoryFn>(FindSymbol(lib, {"mtmlDeviceFreeMemory"}));
    memory_total_ = reinterpret_cast<MemoryBytesFn>(FindSymbol(lib, {"mtmlMemoryGetTotal"}));
    memory_used_ = reinterpret_cast<MemoryBytesFn>(FindSymbol(lib, {"mtmlMemoryGetUsed"}));
    if (!init_memory_ || !free_memory_ || !memory_total_ || !memory_used_) init_memory_ = nullptr;

    const char* root = std::getenv("XLURM_MTML_PROC_ROOT");
    proc_root_ = root && *root ? root : "/proc";
    if (proc_root_[0] != '/') return "XLURM_MTML_PROC_ROOT must be an absolute path: " + proc_root_;
    while (proc_root_.size() > 1 && proc_root_.back() == '/') proc_root_.pop_back();

    Enter("mtmlLibraryInit");
    MtmlReturn rc = init_(&library_);
    if (rc != kSuccess) return Error("mtmlLibraryInit", rc);
    if (!library_) return "mtmlLibraryInit: invalid answer (null library object)";
    return "";
  }

  std::string Discover(std::vector<RawDevice>* out) override {
    unsigned int count = 0;
    Enter("mtmlLibraryCountDevice");
    MtmlReturn rc = count_(library_, &count);
    if (rc != kSuccess) return Error("mtmlLibraryCountDevice", rc);
    if (count > 1024) return "mtmlLibraryCountDevice: invalid answer (" + std::to_string(count) + " devices)";
    for (unsigned int i = 0; i < count; i++) {
      RawDevice d;
      d.id = i;
      Device dev(this, i);
      std::string err = dev.error;
      if (err.empty()) err = ReadString(uuid_, "mtmlDeviceGetUUID", dev.handle, kUuidBufferSize, &d.uuid);
      if (err.empty()) err = ReadString(name_, "mtmlDeviceGetName", dev.handle, kNameBufferSize, &d.name);
      if (err.empty() && d.uuid.empty()) err = "mtmlDeviceGetUUID: empty UUID";
      if (err.empty()) d.nodes = NodePaths(dev.handle);
      d.error = err;
      out->push_back(std::move(d));
    }
    return "";
  }

  void Probe(const std::vector<uint32_t>& ids, std::vector<ProbeRow>* out) override {
    // Identity and node paths per device, then one process-table scan for all of them.
    std::vector<DeviceNodes> nodes;
    std::vector<size_t> scanned;  // rows waiting for the scan
    for (uint32_t id : ids) {
      ProbeRow r;
      r.id = id;
      DeviceNodes n;
      {
        Device dev(this, id);
        r.error = dev.error;
        if (r.error.empty()) r.error = CheckIndex(dev.handle, id);
        if (r.error.empty()) {
          r.error = ReadString(uuid_, "mtmlDeviceGetUUID", dev.handle, kUuidBufferSize, &r.uuid);
          r.has_uuid = r.error.empty();
        }
        if (r.error.empty()) r.error = Nodes(dev.handle, &n);
        if (r.error.empty()) Readings(dev.handle, &r);
      }
      if (r.error.empty()) {
        scanned.push_back(out->size());
        nodes.push_back(std::move(n));
      }
      out->push_back(std::move(r));
    }
    if (scanned.empty()) return;
    std::vector<std::vector<uint32_t>> holders;
    Enter("scan of open device nodes");
    std::string why = FindNodeHolders(proc_root_, nodes, &holders);
    Leave();
    for (size_t k = 0; k < scanned.size(); k++) {
      ProbeRow& r = (*out)[scanned[k]];
      if (!why.empty()) {
        r.error = "occupancy unknown: " + why;
        continue;
      }
      r.processes = std::move(holders[k]);
      r.has_processes = true;
    }
  }

  void Shutdown() override {
    Enter("mtmlLibraryShutDown");
    shutdown_(library_);
  }

 private:
  // A device object for one index, freed when it goes out of scope (MTML requires every object
  // it hands out to be freed).
  struct Device {
    Device(Mtml* m, unsigned int index) : mtml(m) {
      m->Enter("mtmlLibraryInitDeviceByIndex");
      MtmlReturn rc = m->init_device_(m->library_, index, &handle);
      if (rc != kSuccess) {
        handle = nullptr;
        error = m->Error("mtmlLibraryInitDeviceByIndex", rc);
      } else if (!handle) {
        error = "mtmlLibraryInitDeviceByIndex: invalid answer (null device object)";
      }
    }
    ~Device() {
      if (!handle) return;
      mtml->Enter("mtmlLibraryFreeDevice");
      mtml->free_device_(handle);
    }
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    Mtml* mtml;
    MtmlDevice* handle = nullptr;
    std::string error;
  };

  // "<call>: <mtmlErrorString> (<code>)", e.g. "mtmlDeviceGetUUID: Driver failure (2)".
  std::string Error(const char* call, MtmlReturn rc) {
    Enter("mtmlErrorString");
    const char* text = error_string_(rc);
    return std::string(call) + ": " + (text && *text ? text : "error") + " (" + std::to_string(rc) + ")";
  }

  std::string ReadString(StringFn fn, const char* call, MtmlDevice* h, unsigned int size, std::string* out) {
    MtmlReturn rc = CallString(fn, call, h, size, out);
    return rc == kSuccess ? "" : Error(call, rc);
  }

  MtmlReturn CallString(StringFn fn, const char* call, MtmlDevice* h, unsigned int size, std::string* out) {
    std::vector<char> buf(size + 1, 0);
    Enter(call);
    MtmlReturn rc = fn(h, buf.data(), size);
    buf[size] = 0;  // a driver that fills the buffer without a terminator must not run us off it
    if (rc == kSuccess) out->assign(buf.data());
    return rc;
  }

  // Utilisation (percent) and memory (bytes) for samples (docs/behaviour.md §26.2), through the
  // device's GPU and memory objects, each freed at once. Optional: a failed call or an absurd
  // answer is simply not reported, never the device's error.
  void Readings(MtmlDevice* h, ProbeRow* r) {
    if (init_gpu_) {
      MtmlGpu* gpu = nullptr;
      Enter("mtmlDeviceInitGpu");
      if (init_gpu_(h, &gpu) == kSuccess && gpu) {
        unsigned int util = 0;
        Enter("mtmlGpuGetUtilization");
        if (gpu_util_(gpu, &util) == kSuccess && util <= 100) r->utilization = util;
        Enter("mtmlDeviceFreeGpu");
        free_gpu_(gpu);
      }
    }
    if (init_memory_) {
      MtmlMemory* mem = nullptr;
      Enter("mtmlDeviceInitMemory");
      if (init_memory_(h, &mem) == kSuccess && mem) {
        unsigned long long total = 0, used = 0;
        Enter("mtmlMemoryGetTotal");
        bool ok = memory_total_(mem, &total) == kSuccess;
        Enter("mtmlMemoryGetUsed");
        ok = ok && memory_used_(mem, &used) == kSuccess;
        if (ok && total > 0 && used <= total && total <= (1ULL << 50)) {
          r->memory_total = static_cast<int64_t>(total);
          r->memory_used = static_cast<int64_t>(used);
          r->memory_free = static_cast<int64_t>(total - used);
        }
        Enter("mtmlDeviceFreeMemory");
        free_memory_(mem);
      }
    }
  }

  // The object must be the device asked for (where the library can say).
  std::string CheckIndex(MtmlDevice* h, uint32_t id) {
    if (!index_) return "";
    unsigned int index = 0;
    Enter("mtmlDeviceGetIndex");
    MtmlReturn rc = index_(h, &index);
    if (rc != kSuccess) return Error("mtmlDeviceGetIndex", rc);
    if (index != id)
      return "mtmlDeviceGetIndex: invalid answer (index " + std::to_string(index) + " for device " + std::to_string(id) + ")";
    return "";
  }

  // The node paths the device reports, as reported, for device isolation (docs/behaviour.md
  // §24.8); a node the device lacks or a failed call is left out (discovery goes on).
  std::vector<std::string> NodePaths(MtmlDevice* h) {
    std::vector<std::string> paths;
    for (size_t i = 0; i < kNodeCallCount; i++) {
      if (!node_[i]) continue;
      std::string p;
      if (CallString(node_[i], kNodeCalls[i], h, kPathBufferSize, &p) == kSuccess && !p.empty() && p[0] == '/')
        paths.push_back(p);
    }
    return paths;
  }

  // The device's nodes, resolved on this host. A node the device lacks answers NOT_SUPPORTED;
  // with none at all (or no node call exported) occupancy cannot be established.
  std::string Nodes(MtmlDevice* h, DeviceNodes* out) {
    std::vector<std::string> paths;
    std::string unsupported;
    for (size_t i = 0; i < kNodeCallCount; i++) {
      if (!node_[i]) continue;
      std::string p;
      MtmlReturn rc = CallString(node_[i], kNodeCalls[i], h, kPathBufferSize, &p);
      if (rc == kNotSupported) {
        if (unsupported.empty()) unsupported = Error(kNodeCalls[i], rc);
        continue;
      }
      if (rc != kSuccess) return Error(kNodeCalls[i], rc);
      if (p.empty() || p[0] != '/') return std::string(kNodeCalls[i]) + ": invalid answer (\"" + p + "\")";
      paths.push_back(p);
    }
    if (paths.empty()) {
      return "occupancy unknown: MTML has no process query and reports no device node to watch" +
             (unsupported.empty() ? std::string(" (no mtmlDeviceGet{Gpu,Primary,Render}Path exported)") : " (" + unsupported + ")");
    }
    std::string err = ResolveNodes(paths, out);
    return err.empty() ? "" : "occupancy unknown: " + err;
  }

  LibraryInitFn init_ = nullptr;
  LibraryShutDownFn shutdown_ = nullptr;
  CountFn count_ = nullptr;
  InitDeviceFn init_device_ = nullptr;
  FreeDeviceFn free_device_ = nullptr;
  StringFn uuid_ = nullptr;
  StringFn name_ = nullptr;
  ErrorStringFn error_string_ = nullptr;
  IndexFn index_ = nullptr;
  StringFn node_[kNodeCallCount] = {};
  InitGpuFn init_gpu_ = nullptr;  // nullptr: no complete GPU-object set (utilisation not read)
  FreeGpuFn free_gpu_ = nullptr;
  GpuUtilFn gpu_util_ = nullptr;
  InitMemoryFn init_memory_ = nullptr;  // nullptr: no complete memory-object set
  FreeMemoryFn free_memory_ = nullptr;
  MemoryBytesFn memory_total_ = nullptr;
  MemoryBytesFn memory_used_ = nullptr;
  MtmlLibrary* library_ = nullptr;
  std::string proc_root_;
};

}  // namespace

std::unique_ptr<Vendor> MakeMtml() { return std::make_unique<Mtml>(); }

}  // namespace xlurm::dev
