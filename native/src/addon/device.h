// Vendor-neutral device-probe infrastructure (device.cc) and the interface each vendor library
// implements (nvml.cc, …). No Node-API types here: vendor code is plain C++ that runs on the
// library's own worker thread.
//
// Adding a vendor: write src/addon/<vendor>.cc with a `class X : public Vendor` and a
// `std::unique_ptr<Vendor> MakeX()`, declare MakeX below, add one line to kVendors in device.cc
// and the file to XLURM_ADDON_SOURCES in CMakeLists.txt. See docs/architecture-devices.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace xlurm::dev {

// A device found at discovery. `error` non-empty: the device was seen but could not be
// identified (it is left out of the inventory and the reason logged).
struct RawDevice {
  uint32_t id = 0;
  std::string uuid;    // the stable identity (Device.visible)
  std::string name;
  int64_t npu = -1;    // -1 = null
  int64_t chip = -1;   // -1 = null
  int64_t group = -1;  // device group from the library's topology (0, 1, …); -1 = unknown
  // The device's own node files (e.g. /dev/nvidia3), for device isolation (docs/behaviour.md
  // §24.8); empty: the library names none (control nodes every job needs are never listed).
  std::vector<std::string> nodes;
  // The device's PCI address as sysfs names it ("0000:3b:00.0"), for its NUMA node (the daemon
  // prefers that node's CPUs for the job: docs/behaviour.md §24.3); empty: the library names none.
  std::string pci;
  std::string error;
};

enum class Health { kNone, kOk, kUnhealthy };

// One device's answer to a probe. Everything the query could not establish stays "absent";
// any failed or invalid query sets `error` ("<query>: <driver text> (<code>)") and the daemon
// then treats the device as unknown (fail closed).
struct ProbeRow {
  uint32_t id = 0;
  bool has_uuid = false;
  std::string uuid;
  bool has_processes = false;
  std::vector<uint32_t> processes;  // host PIDs of compute processes
  Health health = Health::kNone;    // kNone: the library has no health query
  // For samples (docs/behaviour.md §26.2), where the library reports them: utilisation in percent
  // (0-100) and memory in use in bytes; -1: not reported. Never an error of the device.
  int64_t utilization = -1;
  int64_t memory_used = -1;
  // Total and free device memory in bytes, with memory_used (card sharing packs slices by them:
  // docs/behaviour.md §25.2); -1: not reported.
  int64_t memory_total = -1;
  int64_t memory_free = -1;
  std::string error;
};

// The driver call in progress on a library's worker thread, readable from the JS thread when a
// deadline passes ("<call> timed out after N ms"). Names are string literals.
class CallTracker {
 public:
  void Enter(const char* name) { current_.store(name, std::memory_order_release); }
  void Leave() { current_.store(nullptr, std::memory_order_release); }
  const char* Current() const { return current_.load(std::memory_order_acquire); }

 private:
  std::atomic<const char*> current_{nullptr};
};

// One loaded vendor library. Every method runs on that library's worker thread, never two at
// once, never on the JS thread; a method may block in the driver for ever (the infrastructure
// abandons it after the caller's deadline). Methods report failures as text, never throw.
class Vendor {
 public:
  virtual ~Vendor() = default;
  // Called before each attempt to dlopen `path` (e.g. to load a library it needs that is not on
  // the loader's path). Failures show up as the dlopen's own error.
  virtual void BeforeOpen(const std::string& path) { (void)path; }
  // Resolve symbols in `lib` (dlopen'ed from `path`) and initialise the library.
  // Returns "" on success, else the reason (e.g. "nvmlInit_v2: Driver Not Loaded (9)").
  virtual std::string Init(void* lib, const std::string& path) = 0;
  // Enumerate devices. Returns "" on success (devices in `out`, in the vendor's order).
  virtual std::string Discover(std::vector<RawDevice>* out) = 0;
  // Query each id (in order): one row per id. Per-device failures go in row.error.
  virtual void Probe(const std::vector<uint32_t>& ids, std::vector<ProbeRow>* out) = 0;
  // Release the library (e.g. nvmlShutdown); only called after a successful Init.
  virtual void Shutdown() = 0;

  void SetTracker(CallTracker* t) { tracker_ = t; }

 protected:
  // Call before every driver call so a hang can be named.
  void Enter(const char* call) { if (tracker_) tracker_->Enter(call); }
  void Leave() { if (tracker_) tracker_->Leave(); }

 private:
  CallTracker* tracker_ = nullptr;
};

// dlsym the first of `names` that the library exports; `which` receives its name.
void* FindSymbol(void* lib, std::initializer_list<const char*> names, const char** which = nullptr);

// Vendor factories (one per vendor file).
std::unique_ptr<Vendor> MakeNvml();  // nvml.cc
std::unique_ptr<Vendor> MakeDcmi();  // dcmi.cc
std::unique_ptr<Vendor> MakeMtml();  // mtml.cc
std::unique_ptr<Vendor> MakeMxsml();  // mxsml.cc
std::unique_ptr<Vendor> MakeHgml();  // hgml.cc
std::unique_ptr<Vendor> MakeRocmSmi();  // rocm-smi.cc

}  // namespace xlurm::dev
