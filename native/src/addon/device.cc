// Vendor-neutral device probing: deviceOpen, deviceDiscover, deviceProbe and deviceClose (see
// device.h for the vendor interface and native/ts/index.ts for the JS API).
//
// Threading. Every opened library gets one dedicated worker thread (a detached std::thread,
// never the libuv pool), and every driver call of that library runs there, one at a time:
//   * deviceOpen / deviceDiscover / deviceClose post a task and wait for it on the JS thread,
//     bounded by a timeout (they run at daemon start and stop, before or after serving).
//   * deviceProbe posts a task and returns a Promise at once. The worker reports back through a
//     Napi::ThreadSafeFunction; a JS timer (setTimeout) enforces the deadline. Whichever comes
//     first settles the Promise: after the deadline every requested device is reported with
//     "<call in progress> timed out after N ms".
//   * A call that passed its deadline is abandoned, never joined: the worker stays inside the
//     driver and the library is "hung". While it is hung no second call is started into that
//     library; probes answer at once with the same timeout error until the call returns.
// Libraries are never dlclose'd: an abandoned thread may still be executing their code.
#include "addon.h"
#include "device.h"

#include <dlfcn.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace xlurm {

namespace dev {

void* FindSymbol(void* lib, std::initializer_list<const char*> names, const char** which) {
  for (const char* n : names) {
    dlerror();
    void* p = dlsym(lib, n);
    if (p) {
      if (which) *which = n;
      return p;
    }
  }
  return nullptr;
}

}  // namespace dev

namespace {

using dev::ProbeRow;
using dev::RawDevice;
using dev::Vendor;

// The vendors compiled in, by DeviceKind name (the daemon's `kind`).
struct VendorEntry {
  const char* kind;
  std::unique_ptr<Vendor> (*make)();
};
constexpr VendorEntry kVendors[] = {
    {"nvidia", dev::MakeNvml},
    {"ascend", dev::MakeDcmi},
    {"mthreads", dev::MakeMtml},
    {"metax", dev::MakeMxsml},
    {"ppu", dev::MakeHgml},
    {"hcu", dev::MakeRocmSmi},
};

// One opened library and its worker thread.
class Library {
 public:
  explicit Library(std::unique_ptr<Vendor> v) : vendor(std::move(v)) { vendor->SetTracker(&calls); }

  const std::unique_ptr<Vendor> vendor;
  dev::CallTracker calls;
  bool initialised = false;  // JS thread only

  static void Start(const std::shared_ptr<Library>& self) {
    std::thread([self] { self->Loop(); }).detach();
  }

  // Queue `work` (worker thread), then `done` once the library is free again. False when a
  // previous task is still running (hung) or the library is closed.
  bool Post(std::function<void()> work, std::function<void()> done) {
    std::lock_guard<std::mutex> g(mu_);
    if (busy_ || quit_) return false;
    busy_ = true;
    work_ = std::move(work);
    done_ = std::move(done);
    cv_.notify_all();
    return true;
  }

  void Quit() {
    std::lock_guard<std::mutex> g(mu_);
    quit_ = true;
    cv_.notify_all();
  }

  bool Busy() {
    std::lock_guard<std::mutex> g(mu_);
    return busy_;
  }

  // Wait up to `ms` for a running call to finish; false at once when it is hung.
  bool WaitIdle(uint32_t ms) {
    std::unique_lock<std::mutex> lk(mu_);
    if (!hung_.empty()) return !busy_;
    return cv_.wait_for(lk, std::chrono::milliseconds(ms), [this] { return !busy_; });
  }

  // Record that the running call passed a deadline (kept until it returns).
  void MarkHung(const std::string& why) {
    std::lock_guard<std::mutex> g(mu_);
    if (busy_ && hung_.empty()) hung_ = why;
  }

  // Why no call can start now.
  std::string BusyText() {
    std::lock_guard<std::mutex> g(mu_);
    return hung_.empty() ? std::string("a previous query is still running") : hung_;
  }

  std::string TimeoutText(uint32_t ms) const {
    const char* c = calls.Current();
    return std::string(c ? c : "device query") + " timed out after " + std::to_string(ms) + " ms";
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      cv_.wait(lk, [this] { return work_ || quit_; });
      if (!work_) return;  // quit and idle
      std::function<void()> work = std::move(work_);
      std::function<void()> done = std::move(done_);
      work_ = nullptr;
      done_ = nullptr;
      lk.unlock();
      work();
      calls.Leave();
      lk.lock();
      busy_ = false;
      hung_.clear();
      cv_.notify_all();  // WaitIdle
      lk.unlock();
      if (done) done();
      lk.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> work_;
  std::function<void()> done_;
  bool busy_ = false;
  bool quit_ = false;
  std::string hung_;
};

// Open libraries by handle number. JS thread only; never destroyed (worker threads may outlive
// process teardown).
std::map<uint32_t, std::shared_ptr<Library>>& Libraries() {
  static auto* libs = new std::map<uint32_t, std::shared_ptr<Library>>();
  return *libs;
}
uint32_t g_next_handle = 1;

// Result slot of a task the JS thread waits for; shared with the worker so an abandoned task
// writes into live memory.
struct SyncState {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  std::string error;
  std::vector<RawDevice> devices;
};

// Run `fn` on the worker and wait up to `timeout_ms`. Returns "" when it finished in time (its
// own outcome is in `st`), else why not (the library is then marked hung).
std::string RunBounded(const std::shared_ptr<Library>& lib, const std::shared_ptr<SyncState>& st,
                       std::function<void(SyncState&)> fn, uint32_t timeout_ms) {
  bool posted = lib->Post([st, fn] { fn(*st); },
                          [st] {
                            std::lock_guard<std::mutex> g(st->mu);
                            st->finished = true;
                            st->cv.notify_all();
                          });
  if (!posted) return lib->BusyText();
  std::unique_lock<std::mutex> lk(st->mu);
  if (st->cv.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] { return st->finished; })) return "";
  std::string why = lib->TimeoutText(timeout_ms);
  lib->MarkHung(why);
  return why;
}

// ----- argument helpers ----------------------------------------------------------------------

bool ArgStringArray(const Napi::CallbackInfo& info, size_t i, const char* usage, std::vector<std::string>* out) {
  if (info.Length() > i && info[i].IsArray()) {
    Napi::Array a = info[i].As<Napi::Array>();
    for (uint32_t k = 0; k < a.Length(); k++) {
      Napi::Value v = a.Get(k);
      if (!v.IsString()) break;
      out->push_back(v.As<Napi::String>().Utf8Value());
    }
    if (out->size() == a.Length()) return true;
  }
  Napi::TypeError::New(info.Env(), std::string("Usage: ") + usage).ThrowAsJavaScriptException();
  return false;
}

bool ArgU32Array(const Napi::CallbackInfo& info, size_t i, const char* usage, std::vector<uint32_t>* out) {
  if (info.Length() > i && info[i].IsArray()) {
    Napi::Array a = info[i].As<Napi::Array>();
    for (uint32_t k = 0; k < a.Length(); k++) {
      Napi::Value v = a.Get(k);
      if (!v.IsNumber()) break;
      double d = v.As<Napi::Number>().DoubleValue();
      if (!(d >= 0 && d <= 4294967295.0) || static_cast<double>(static_cast<uint32_t>(d)) != d) break;
      out->push_back(static_cast<uint32_t>(d));
    }
    if (out->size() == a.Length()) return true;
  }
  Napi::TypeError::New(info.Env(), std::string("Usage: ") + usage).ThrowAsJavaScriptException();
  return false;
}

std::shared_ptr<Library> LookupHandle(const Napi::CallbackInfo& info, const char* usage) {
  uint32_t h;
  if (!ArgU32(info, 0, usage, &h)) return nullptr;
  auto it = Libraries().find(h);
  if (it == Libraries().end()) {
    Napi::Error::New(info.Env(), "invalid or closed device handle").ThrowAsJavaScriptException();
    return nullptr;
  }
  return it->second;
}

void ThrowMessage(Napi::Env env, const std::string& msg) {
  Napi::Error::New(env, msg).ThrowAsJavaScriptException();
}

// ----- conversions -----------------------------------------------------------------------------

Napi::Value NullOr(Napi::Env env, int64_t v) {
  return v < 0 ? env.Null() : Napi::Number::New(env, static_cast<double>(v));
}

Napi::Object DeviceToJs(Napi::Env env, const RawDevice& d) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("id", Napi::Number::New(env, d.id));
  o.Set("uuid", Napi::String::New(env, d.uuid));
  o.Set("name", Napi::String::New(env, d.name));
  o.Set("npu", NullOr(env, d.npu));
  o.Set("chip", NullOr(env, d.chip));
  // Only where the library reported a topology, so other vendors' entries keep their shape.
  if (d.group >= 0) o.Set("group", Napi::Number::New(env, static_cast<double>(d.group)));
  if (!d.nodes.empty()) {  // likewise only where the library named the device's nodes
    Napi::Array nodes = Napi::Array::New(env, d.nodes.size());
    for (size_t i = 0; i < d.nodes.size(); i++) nodes.Set(static_cast<uint32_t>(i), Napi::String::New(env, d.nodes[i]));
    o.Set("nodes", nodes);
  }
  if (!d.pci.empty()) o.Set("pci", Napi::String::New(env, d.pci));  // likewise
  o.Set("error", d.error.empty() ? env.Null() : Napi::String::New(env, d.error));
  return o;
}

Napi::Object RowToJs(Napi::Env env, const ProbeRow& r) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("id", Napi::Number::New(env, r.id));
  o.Set("uuid", r.has_uuid ? Napi::String::New(env, r.uuid) : env.Null());
  if (r.has_processes) {
    Napi::Array pids = Napi::Array::New(env, r.processes.size());
    for (size_t i = 0; i < r.processes.size(); i++) pids.Set(static_cast<uint32_t>(i), Napi::Number::New(env, r.processes[i]));
    o.Set("processes", pids);
  } else {
    o.Set("processes", env.Null());
  }
  // Only where the library reported them: rows of libraries without them keep their shape.
  if (r.utilization >= 0) o.Set("utilization", Napi::Number::New(env, static_cast<double>(r.utilization)));
  if (r.memory_used >= 0) o.Set("memory_used", Napi::Number::New(env, static_cast<double>(r.memory_used)));
  if (r.memory_total >= 0) o.Set("memory_total", Napi::Number::New(env, static_cast<double>(r.memory_total)));
  if (r.memory_free >= 0) o.Set("memory_free", Napi::Number::New(env, static_cast<double>(r.memory_free)));
  switch (r.health) {
    case dev::Health::kOk: o.Set("health", Napi::String::New(env, "ok")); break;
    case dev::Health::kUnhealthy: o.Set("health", Napi::String::New(env, "unhealthy")); break;
    default: o.Set("health", env.Null()); break;
  }
  o.Set("error", r.error.empty() ? env.Null() : Napi::String::New(env, r.error));
  return o;
}

Napi::Array RowsToJs(Napi::Env env, const std::vector<ProbeRow>& rows) {
  Napi::Array a = Napi::Array::New(env, rows.size());
  for (size_t i = 0; i < rows.size(); i++) a.Set(static_cast<uint32_t>(i), RowToJs(env, rows[i]));
  return a;
}

std::vector<ProbeRow> ErrorRows(const std::vector<uint32_t>& ids, const std::string& why) {
  std::vector<ProbeRow> rows(ids.size());
  for (size_t i = 0; i < ids.size(); i++) {
    rows[i].id = ids[i];
    rows[i].error = why;
  }
  return rows;
}

// ----- exports -----------------------------------------------------------------------------

// deviceOpen(kind, paths, timeoutMs) -> handle: dlopen the first path that loads, resolve the
// vendor's symbols and initialise, on the library's worker thread, bounded by timeoutMs.
Napi::Value DeviceOpen(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "deviceOpen(kind, paths, timeoutMs)";
  std::string kind;
  std::vector<std::string> paths;
  uint32_t timeout_ms;
  if (!ArgString(info, 0, usage, &kind) || !ArgStringArray(info, 1, usage, &paths) ||
      !ArgU32(info, 2, usage, &timeout_ms))
    return env.Undefined();
  const VendorEntry* entry = nullptr;
  for (const VendorEntry& e : kVendors)
    if (kind == e.kind) entry = &e;
  if (!entry) {
    ThrowMessage(env, "no " + kind + " support in this build");
    return env.Undefined();
  }
  if (paths.empty()) {
    ThrowMessage(env, "no library path to try");
    return env.Undefined();
  }
  auto lib = std::make_shared<Library>(entry->make());
  Library::Start(lib);
  auto st = std::make_shared<SyncState>();
  std::string why = RunBounded(lib, st, [lib, paths](SyncState& s) {
    std::string tried;
    for (const std::string& p : paths) {
      lib->calls.Enter("dlopen");
      lib->vendor->BeforeOpen(p);
      void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        const char* e = dlerror();
        if (!tried.empty()) tried += "; ";
        tried += e ? e : p + ": cannot load";
        continue;
      }
      s.error = lib->vendor->Init(h, p);
      return;
    }
    s.error = "cannot load library: " + tried;
  }, timeout_ms);
  if (why.empty()) why = st->error;
  if (!why.empty()) {
    lib->Quit();
    ThrowMessage(env, why);
    return env.Undefined();
  }
  lib->initialised = true;
  uint32_t handle = g_next_handle++;
  Libraries()[handle] = lib;
  return Napi::Number::New(env, handle);
}

// deviceDiscover(handle, timeoutMs) -> RawDevice[] (bounded, synchronous).
Napi::Value DeviceDiscover(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "deviceDiscover(handle, timeoutMs)";
  std::shared_ptr<Library> lib = LookupHandle(info, usage);
  uint32_t timeout_ms;
  if (!lib || !ArgU32(info, 1, usage, &timeout_ms)) return env.Undefined();
  auto st = std::make_shared<SyncState>();
  std::string why = RunBounded(lib, st, [lib](SyncState& s) { s.error = lib->vendor->Discover(&s.devices); }, timeout_ms);
  if (why.empty()) why = st->error;
  if (!why.empty()) {
    ThrowMessage(env, why);
    return env.Undefined();
  }
  Napi::Array a = Napi::Array::New(env, st->devices.size());
  for (size_t i = 0; i < st->devices.size(); i++) a.Set(static_cast<uint32_t>(i), DeviceToJs(env, st->devices[i]));
  return a;
}

// An asynchronous probe. Owned by the JS thread; freed once both the deadline timer and the
// worker's report are done with it (leaked, deliberately, if the worker never returns).
struct ProbeCtx {
  struct Shared {  // what the worker writes
    std::vector<uint32_t> ids;
    std::vector<ProbeRow> rows;
    std::atomic<bool> finished{false};
  };
  std::shared_ptr<Library> lib;
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  uint32_t deadline_ms = 0;
  Napi::Promise::Deferred deferred;
  Napi::ThreadSafeFunction tsfn;
  Napi::ObjectReference timer;
  bool settled = false;
  bool timer_done = false;
  bool worker_done = false;

  explicit ProbeCtx(Napi::Env env) : deferred(Napi::Promise::Deferred::New(env)) {}

  void Settle(Napi::Env env, const std::vector<ProbeRow>& rows) {
    if (settled) return;
    settled = true;
    deferred.Resolve(RowsToJs(env, rows));
  }

  void ClearTimer(Napi::Env env) {
    if (timer_done) return;
    timer_done = true;
    Napi::Value clear = env.Global().Get("clearTimeout");
    if (!timer.IsEmpty() && clear.IsFunction()) clear.As<Napi::Function>().Call({timer.Value()});
    timer.Reset();
  }

  static void MaybeFree(ProbeCtx* c) {
    if (c->timer_done && c->worker_done) delete c;
  }

  // JS thread: the worker finished.
  static void OnFinished(Napi::Env env, ProbeCtx* c) {
    c->worker_done = true;
    c->Settle(env, c->shared->rows);
    c->ClearTimer(env);
    MaybeFree(c);
  }

  // JS thread: the deadline passed.
  static void OnDeadline(Napi::Env env, ProbeCtx* c) {
    c->timer_done = true;
    c->timer.Reset();
    if (!c->settled) {
      if (c->shared->finished.load(std::memory_order_acquire)) {
        // Finished in time; its report is still queued behind this timer.
        c->Settle(env, c->shared->rows);
      } else {
        std::string why = c->lib->TimeoutText(c->deadline_ms);
        c->lib->MarkHung(why);
        c->Settle(env, ErrorRows(c->shared->ids, why));
      }
    }
    MaybeFree(c);
  }
};

// deviceProbe(handle, ids, deadlineMs) -> Promise<ProbeRow[]>; always resolves, by the deadline.
Napi::Value DeviceProbe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "deviceProbe(handle, ids, deadlineMs)";
  std::shared_ptr<Library> lib = LookupHandle(info, usage);
  std::vector<uint32_t> ids;
  uint32_t deadline_ms;
  if (!lib || !ArgU32Array(info, 1, usage, &ids) || !ArgU32(info, 2, usage, &deadline_ms)) return env.Undefined();

  if (lib->Busy()) {  // a previous call is hung: do not start a second one into the library
    Napi::Promise::Deferred d = Napi::Promise::Deferred::New(env);
    d.Resolve(RowsToJs(env, ErrorRows(ids, lib->BusyText())));
    return d.Promise();
  }

  auto* c = new ProbeCtx(env);
  c->lib = lib;
  c->deadline_ms = deadline_ms;
  c->shared->ids = ids;
  Napi::Promise promise = c->deferred.Promise();
  c->tsfn = Napi::ThreadSafeFunction::New(env, Napi::Function::New(env, [](const Napi::CallbackInfo&) {}),
                                          "xlurmDeviceProbe", 0, 1);
  // A hung worker holds the TSFN for ever: it must not keep the process alive. The timer does,
  // until the deadline, so an awaited probe always settles.
  c->tsfn.Unref(env);

  Napi::Function on_deadline = Napi::Function::New(
      env, [c](const Napi::CallbackInfo& ci) { ProbeCtx::OnDeadline(ci.Env(), c); }, "xlurmProbeDeadline");
  Napi::Value set_timeout = env.Global().Get("setTimeout");
  if (!set_timeout.IsFunction()) {
    c->tsfn.Release();
    delete c;
    ThrowMessage(env, "setTimeout is not available");
    return env.Undefined();
  }
  Napi::Value timer = set_timeout.As<Napi::Function>().Call({on_deadline, Napi::Number::New(env, deadline_ms)});
  if (env.IsExceptionPending() || !timer.IsObject()) {
    c->tsfn.Release();
    delete c;
    return env.Undefined();
  }
  c->timer = Napi::Persistent(timer.As<Napi::Object>());

  std::shared_ptr<ProbeCtx::Shared> shared = c->shared;
  Napi::ThreadSafeFunction tsfn = c->tsfn;
  bool posted = lib->Post(
      [lib, shared] {
        lib->vendor->Probe(shared->ids, &shared->rows);
        if (shared->rows.size() != shared->ids.size()) {  // a vendor bug must not misreport devices
          shared->rows = ErrorRows(shared->ids, "internal error: probe returned a wrong number of rows");
        }
        shared->finished.store(true, std::memory_order_release);
      },
      [tsfn, c] {
        tsfn.BlockingCall(c, [](Napi::Env env, Napi::Function, ProbeCtx* p) { ProbeCtx::OnFinished(env, p); });
        tsfn.Release();
      });
  if (!posted) {
    c->worker_done = true;
    c->Settle(env, ErrorRows(ids, lib->BusyText()));
    c->ClearTimer(env);
    c->tsfn.Release();
    ProbeCtx::MaybeFree(c);
  }
  return promise;
}

// deviceClose(handle, timeoutMs): shut the library down (bounded; a probe in progress may finish
// first) unless a call is hung; the handle is invalid afterwards either way.
Napi::Value DeviceClose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "deviceClose(handle, timeoutMs)";
  std::shared_ptr<Library> lib = LookupHandle(info, usage);
  uint32_t timeout_ms;
  if (!lib || !ArgU32(info, 1, usage, &timeout_ms)) return env.Undefined();
  Libraries().erase(info[0].As<Napi::Number>().Uint32Value());
  if (lib->initialised && lib->WaitIdle(timeout_ms)) {
    auto st = std::make_shared<SyncState>();
    RunBounded(lib, st, [lib](SyncState&) { lib->vendor->Shutdown(); }, timeout_ms);
  }
  lib->Quit();
  return env.Undefined();
}

}  // namespace

void InitDevices(Napi::Env env, Napi::Object exports) {
  exports.Set("deviceOpen", Napi::Function::New(env, DeviceOpen, "deviceOpen"));
  exports.Set("deviceDiscover", Napi::Function::New(env, DeviceDiscover, "deviceDiscover"));
  exports.Set("deviceProbe", Napi::Function::New(env, DeviceProbe, "deviceProbe"));
  exports.Set("deviceClose", Napi::Function::New(env, DeviceClose, "deviceClose"));
}

}  // namespace xlurm
