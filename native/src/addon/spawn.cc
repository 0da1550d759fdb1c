// spawnSupervisorAsync(file, fds, onSpawned, onExit) / canSpawnSupervisor(): start xlurm-stepd
// without forking the daemon, and learn of its exit on the daemon's own event loop.
//
// Why not child_process.spawn: libuv's uv_spawn fork(2)s the whole daemon (~100 MB of heap, so
// page tables worth milliseconds to copy) and blocks the loop until the child has exec'd,
// 8-20 ms per job. glibc's posix_spawn(3) uses clone(CLONE_VM|CLONE_VFORK): nothing is copied,
// and the parent waits only for the exec itself (native/bench/spawn-supervisor.js compares).
//
// Watching. libuv's SIGCHLD handler reaps only the pids of its own uv_process_t handles
// (waitpid(pid) per handle), so our children are ours alone to reap; and we in turn must never
// wait for "any child" (P_ALL / -1), or we would steal libuv's statuses. A pidfd (pidfd_open(2),
// Linux 5.3) turns "this pid exited" into a readable descriptor that a uv_poll_t can watch; the
// pid cannot be reused before we reap it, so the pidfd and waitpid(pid) always name our child.
// Where no pidfd can be had (EMFILE, or a kernel without pidfd_open), a 50 ms uv timer polls
// waitpid(pid, WNOHANG) instead, so no child is ever left a zombie.
//
// Neither handle keeps the loop alive (uv_unref): a daemon that has nothing else to do may exit
// while supervisors run (they are built to outlive it).
#include "addon.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstring>
#include <string>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // the same number on every architecture (asm-generic unified table)
#endif

// posix_spawn_file_actions_addchdir_np (glibc 2.29) and _addclosefrom_np (glibc 2.34): without
// them the child could neither start in "/" nor be kept from inheriting descriptors that are
// not close-on-exec (e.g. ones Node itself inherited), so the addon then reports itself
// unavailable and the daemon uses child_process.
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
#define XLURM_HAVE_SPAWN_NP 1
#endif

namespace xlurm {

namespace {

constexpr int kSlots = 4;               // fds 0-3 of the child
constexpr uint64_t kReapPollMs = 50;    // waitpid cadence when no pidfd could be had

// Node's names (os.constants.signals) for the Linux signals; real-time ones have none there.
struct SignalName { int sig; const char* name; };
constexpr SignalName kSignalNames[] = {
    {SIGHUP, "SIGHUP"},       {SIGINT, "SIGINT"},       {SIGQUIT, "SIGQUIT"},
    {SIGILL, "SIGILL"},       {SIGTRAP, "SIGTRAP"},     {SIGABRT, "SIGABRT"},
    {SIGBUS, "SIGBUS"},       {SIGFPE, "SIGFPE"},       {SIGKILL, "SIGKILL"},
    {SIGUSR1, "SIGUSR1"},     {SIGSEGV, "SIGSEGV"},     {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"},     {SIGALRM, "SIGALRM"},     {SIGTERM, "SIGTERM"},
#ifdef SIGSTKFLT
    {SIGSTKFLT, "SIGSTKFLT"},
#endif
    {SIGCHLD, "SIGCHLD"},     {SIGCONT, "SIGCONT"},     {SIGSTOP, "SIGSTOP"},
    {SIGTSTP, "SIGTSTP"},     {SIGTTIN, "SIGTTIN"},     {SIGTTOU, "SIGTTOU"},
    {SIGURG, "SIGURG"},       {SIGXCPU, "SIGXCPU"},     {SIGXFSZ, "SIGXFSZ"},
    {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"},     {SIGWINCH, "SIGWINCH"},
    {SIGIO, "SIGIO"},
#ifdef SIGPWR
    {SIGPWR, "SIGPWR"},
#endif
    {SIGSYS, "SIGSYS"},
};

std::string SignalToName(int sig) {
  for (const SignalName& s : kSignalNames)
    if (s.sig == sig) return s.name;
  if (sig >= SIGRTMIN && sig <= SIGRTMAX) return "SIGRTMIN+" + std::to_string(sig - SIGRTMIN);
  return "SIG" + std::to_string(sig);
}

int PidfdOpen(pid_t pid) {
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0u));
}

// One spawned child, from posix_spawn until its exit is reported and both handles are closed.
// Owned by the loop: freed in the last close callback.
struct Watch {
  napi_env env = nullptr;
  pid_t pid = -1;
  int pidfd = -1;
  uv_poll_t poll;
  uv_timer_t timer;
  bool poll_open = false;
  bool timer_open = false;
  int closing = 0;  // uv_close calls whose callbacks are still to come
  Napi::FunctionReference callback;  // released once called (or at environment teardown)
  napi_async_context context = nullptr;
  napi_async_cleanup_hook_handle cleanup = nullptr;
};

void Release(Watch* w) {
  w->callback.Reset();
  if (w->context) {
    napi_async_destroy(w->env, w->context);
    w->context = nullptr;
  }
}

void OnClosed(uv_handle_t* handle) {
  Watch* w = static_cast<Watch*>(handle->data);
  // A poll handle given up for the timer closes while the timer still runs.
  if (--w->closing > 0 || w->poll_open || w->timer_open) return;
  Release(w);
  if (w->cleanup) napi_remove_async_cleanup_hook(w->cleanup);
  delete w;
}

void ClosePidfd(Watch* w) {
  if (w->pidfd >= 0) close(w->pidfd);
  w->pidfd = -1;
}

// uv_close stops the watch at once (epoll_ctl DEL, and events already collected for the fd in
// this loop iteration are dropped), so the pidfd may be closed right after it. Never after a
// mere uv_poll_stop: a later uv_close would then EPOLL_CTL_DEL whatever reused the number.
void ClosePoll(Watch* w) {
  w->poll_open = false;
  w->closing++;
  uv_close(reinterpret_cast<uv_handle_t*>(&w->poll), OnClosed);
  ClosePidfd(w);
}

void CloseHandles(Watch* w) {
  if (w->poll_open) ClosePoll(w);
  if (w->timer_open) {
    w->timer_open = false;
    w->closing++;
    uv_close(reinterpret_cast<uv_handle_t*>(&w->timer), OnClosed);
  }
}

// Calls onExit(code, signal) as any other callback from the loop is called: inside the async
// context captured at spawn (async hooks, AsyncLocalStorage), with process.nextTick and
// microtasks drained afterwards by napi_make_callback. A throw becomes an uncaught exception
// (napi_fatal_exception): left pending, it would be silently lost and would make every later
// Node-API call of this environment fail with napi_pending_exception.
void Report(Watch* w, int status) {
  napi_env env = w->env;
  Napi::HandleScope scope(env);
  napi_value args[2];
  if (status < 0) {
    // ECHILD: someone waited for any child and took our status; only "it is gone" is known.
    args[0] = Napi::Number::New(env, -1);
    args[1] = Napi::Env(env).Null();
  } else if (WIFSIGNALED(status)) {
    args[0] = Napi::Env(env).Null();
    args[1] = Napi::String::New(env, SignalToName(WTERMSIG(status)));
  } else {
    args[0] = Napi::Number::New(env, WEXITSTATUS(status));
    args[1] = Napi::Env(env).Null();
  }
  napi_value fn = w->callback.Value();
  napi_value recv = Napi::Env(env).Global();  // napi_make_callback wants an object
  napi_value result;
  napi_status st = napi_make_callback(env, w->context, recv, fn, 2, args, &result);
  Release(w);
  if (st == napi_pending_exception) {
    napi_value error;
    if (napi_get_and_clear_last_exception(env, &error) == napi_ok) napi_fatal_exception(env, error);
  }
}

// Reaps the child if it has exited (never blocks). True once it is reaped and reported.
bool TryReap(Watch* w) {
  int status = 0;
  pid_t r;
  do
    r = waitpid(w->pid, &status, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == 0) return false;  // still running
  CloseHandles(w);           // before JS runs: the callback may throw past us
  Report(w, r > 0 ? status : -1);
  return true;
}

void OnTimer(uv_timer_t* timer) {
  TryReap(static_cast<Watch*>(timer->data));
}

// The fallback, and the one watch that cannot fail: uv_timer_init and uv_timer_start only
// report errors for a missing callback.
void StartTimer(uv_loop_t* loop, Watch* w) {
  uv_timer_init(loop, &w->timer);
  w->timer.data = w;
  w->timer_open = true;
  uv_unref(reinterpret_cast<uv_handle_t*>(&w->timer));
  uv_timer_start(&w->timer, OnTimer, kReapPollMs, kReapPollMs);
}

void OnPidfd(uv_poll_t* poll, int status, int events);

// Watches the pidfd; false (pidfd closed, nothing left open) when libuv cannot poll it.
bool StartPoll(uv_loop_t* loop, Watch* w) {
  if (uv_poll_init(loop, &w->poll, w->pidfd) != 0) {
    ClosePidfd(w);
    return false;
  }
  w->poll.data = w;
  w->poll_open = true;
  uv_unref(reinterpret_cast<uv_handle_t*>(&w->poll));
  if (uv_poll_start(&w->poll, UV_READABLE, OnPidfd) == 0) return true;
  ClosePoll(w);  // e.g. ENOSPC: the epoll watch limit
  return false;
}

void OnPidfd(uv_poll_t* poll, int status, int /*events*/) {
  Watch* w = static_cast<Watch*>(poll->data);
  if (TryReap(w)) return;
  if (status < 0) {  // the pidfd cannot be polled after all: fall back to the timer
    uv_loop_t* loop = poll->loop;
    ClosePoll(w);
    StartTimer(loop, w);
  }
  // Otherwise a wake-up before the exit was visible to waitpid: keep watching.
}

// Environment teardown (a worker thread ending, or Node exiting) with the child still running:
// the loop is about to be closed and must hold no handle of ours. The child is not reaped
// (nobody will report it); our exit hands it to init, which does.
void OnEnvCleanup(napi_async_cleanup_hook_handle /*handle*/, void* arg) {
  CloseHandles(static_cast<Watch*>(arg));
}

// Attributes and file actions of one posix_spawn call, released on every path.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  bool attr_ok = false;
  bool actions_ok = false;

  ~SpawnSetup() {
    if (attr_ok) posix_spawnattr_destroy(&attr);
    if (actions_ok) posix_spawn_file_actions_destroy(&actions);
  }
};

Napi::Error SpawnError(Napi::Env env, const std::string& file, int err, const char* syscall) {
  const char* code = ErrnoName(err);
  Napi::Error error = Napi::Error::New(env, "spawn " + file + ": " + strerror(err));
  error.Set("code", Napi::String::New(env, code));
  error.Set("errno", Napi::Number::New(env, -err));
  error.Set("syscall", Napi::String::New(env, syscall));
  error.Set("path", Napi::String::New(env, file));
  return error;
}

// Prepares attributes and file actions for sources that are all above 3 (the copies
// SpawnSupervisorAsync makes). Returns 0 or an errno.
int Prepare(SpawnSetup* s, const int src[kSlots]) {
#ifndef XLURM_HAVE_SPAWN_NP
  (void)s;
  (void)src;
  return ENOSYS;
#else
  int err = posix_spawnattr_init(&s->attr);
  if (err) return err;
  s->attr_ok = true;
  // Node blocks nothing on its main thread but ignores SIGPIPE (and libuv's threads block
  // signals); an exec keeps both the mask and ignored dispositions, so both are reset here.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  if ((err = posix_spawnattr_setsigmask(&s->attr, &none)) ||
      (err = posix_spawnattr_setsigdefault(&s->attr, &all)) ||
      // A session of its own: the supervisor must survive the daemon, its terminal and the
      // signals sent to the daemon's process group.
      (err = posix_spawnattr_setflags(&s->attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                                     POSIX_SPAWN_SETSIGDEF)))
    return err;

  err = posix_spawn_file_actions_init(&s->actions);
  if (err) return err;
  s->actions_ok = true;
  for (int i = 0; i < kSlots && !err; i++)
    err = posix_spawn_file_actions_adddup2(&s->actions, src[i], i);
  // closefrom(4) in the child: descriptors that are not close-on-exec (inherited by Node from
  // its parent, or opened by some library without O_CLOEXEC) must not reach the supervisor.
  if (!err) err = posix_spawn_file_actions_addclosefrom_np(&s->actions, kSlots);
  if (!err) err = posix_spawn_file_actions_addchdir_np(&s->actions, "/");
  return err;
#endif
}

// Watches a spawned child until its exit is reported to onExit (see the header).
void StartWatch(napi_env env, uv_loop_t* loop, pid_t pid, Napi::Function onExit) {
  auto* w = new Watch;
  w->env = env;
  w->pid = pid;
  w->callback = Napi::Persistent(onExit);
  napi_value resource_name = Napi::String::New(env, "xlurm.supervisor");
  if (napi_async_init(env, nullptr, resource_name, &w->context) != napi_ok)
    w->context = nullptr;  // napi_make_callback then runs it in an empty async context
  if (napi_add_async_cleanup_hook(env, OnEnvCleanup, w, &w->cleanup) != napi_ok) w->cleanup = nullptr;

  w->pidfd = PidfdOpen(pid);
  if (w->pidfd < 0 || !StartPoll(loop, w)) {
    StartTimer(loop, w);  // no pidfd (EMFILE, ENOSYS), or libuv could not poll it
  }
}

// The spawn, with posix_spawn itself on libuv's thread pool. The call copies the four
// descriptors (close-on-exec, above 3) and returns at once, so the caller may close its own;
// onSpawned(err) or onSpawned(null, pid) follows from the loop, then onExit (see Report). Why:
// the vfork'd parent waits until the child's execve is done, ~2-3 ms of a loaded VM's time per
// supervisor that the daemon's event loop would otherwise spend blocked.
class SpawnWork : public Napi::AsyncWorker {
 public:
  SpawnWork(Napi::Function onSpawned, Napi::Function onExit, std::string file, const int owned[kSlots])
      : Napi::AsyncWorker(onSpawned, "xlurm.spawn"), file_(std::move(file)) {
    on_exit_ = Napi::Persistent(onExit);
    for (int i = 0; i < kSlots; i++) owned_[i] = owned[i];
  }
  ~SpawnWork() override { CloseOwned(); }

  void Execute() override {
    SpawnSetup setup;
    err_ = Prepare(&setup, owned_);
    if (!err_) {
      char* argv[] = {const_cast<char*>(file_.c_str()), nullptr};
      char* envp[] = {nullptr};
      // glibc reports failures of the file actions and of execve itself as the return value
      // (the child writes its errno to shared memory), and reaps such a child before returning.
      err_ = posix_spawn(&pid_, file_.c_str(), &setup.actions, &setup.attr, argv, envp);
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    CloseOwned();
    if (err_) {
      Callback().Call({SpawnError(env, file_, err_, "posix_spawn").Value()});
      return;
    }
    uv_loop_t* loop = nullptr;
    napi_get_uv_event_loop(env, &loop);
    StartWatch(env, loop, pid_, on_exit_.Value());
    on_exit_.Reset();
    Callback().Call({env.Null(), Napi::Number::New(env, pid_)});
  }

 private:
  void CloseOwned() {
    for (int i = 0; i < kSlots; i++) {
      if (owned_[i] < 0) continue;
      for (int j = i + 1; j < kSlots; j++)
        if (owned_[j] == owned_[i]) owned_[j] = -1;
      close(owned_[i]);
      owned_[i] = -1;
    }
  }

  std::string file_;
  int owned_[kSlots];
  Napi::FunctionReference on_exit_;
  int err_ = 0;
  pid_t pid_ = -1;
};

Napi::Value SpawnSupervisorAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "spawnSupervisorAsync(file, [fd0, fd1, fd2, fd3], onSpawned, onExit)";
  std::string file;
  if (!ArgString(info, 0, usage, &file)) return env.Undefined();
  int fds[kSlots];
  if (!ArgFds(info, 1, kSlots, usage, fds)) return env.Undefined();
  if (info.Length() < 4 || !info[2].IsFunction() || !info[3].IsFunction()) {
    Napi::TypeError::New(env, std::string("Usage: ") + usage).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  // Our own copies, so the caller may close its descriptors as soon as we return. One copy
  // per distinct descriptor (the log is usually both 1 and 2). Above 3, because the child's
  // dup2(src[i], i) runs for i = 0, 1, 2, 3 in order: a source below 4 could be overwritten by
  // an earlier dup2 before its own turn, and a dup2 action onto itself leaves FD_CLOEXEC set in
  // glibc before 2.29 (dup2(fd, fd) is a no-op), while Node opens everything close-on-exec.
  // Every source must be open before the first copy is made: a copy takes the lowest free
  // number, which may be a closed fds[j], and would then stand in for it.
  for (int i = 0; i < kSlots; i++) {
    if (fcntl(fds[i], F_GETFD) < 0) {
      SpawnError(env, file, errno, "fcntl").ThrowAsJavaScriptException();
      return env.Undefined();
    }
  }
  int owned[kSlots] = {-1, -1, -1, -1};
  for (int i = 0; i < kSlots; i++) {
    for (int j = 0; j < i; j++)
      if (fds[j] == fds[i]) owned[i] = owned[j];
    if (owned[i] >= 0) continue;
    owned[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, kSlots);
    if (owned[i] < 0) {
      int err = errno;
      for (int j = 0; j < i; j++) {
        bool again = false;
        for (int k = 0; k < j; k++) again = again || owned[k] == owned[j];
        if (!again) close(owned[j]);
      }
      SpawnError(env, file, err, "fcntl").ThrowAsJavaScriptException();
      return env.Undefined();
    }
  }
  auto* work = new SpawnWork(info[2].As<Napi::Function>(), info[3].As<Napi::Function>(), file, owned);
  work->Queue();  // deleted by node-addon-api after OnOK
  return env.Undefined();
}

// pidfd_open(2) exists (Linux 5.3+, not filtered by seccomp) and the C library has the spawn
// extensions. Known answers are cached; a shortage (EMFILE) says nothing either way.
Napi::Value CanSpawnSupervisor(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
#ifndef XLURM_HAVE_SPAWN_NP
  return Napi::Boolean::New(env, false);
#else
  static int known = -1;
  if (known < 0) {
    int fd = PidfdOpen(getpid());
    if (fd >= 0) {
      close(fd);
      known = 1;
    } else if (errno == ENOSYS || errno == EPERM) {
      known = 0;
    }
  }
  return Napi::Boolean::New(env, known != 0);
#endif
}

}  // namespace

void InitSpawn(Napi::Env env, Napi::Object exports) {
  exports.Set("spawnSupervisorAsync", Napi::Function::New(env, SpawnSupervisorAsync, "spawnSupervisorAsync"));
  exports.Set("canSpawnSupervisor", Napi::Function::New(env, CanSpawnSupervisor, "canSpawnSupervisor"));
}

}  // namespace xlurm
