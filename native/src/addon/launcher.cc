// The daemon's end of the supervisor launcher (native/src/stepd/launcher.c; the messages:
// native/src/launch-proto.h):
//   launcherPair()                      -> [daemonFd, launcherFd]: a SOCK_SEQPACKET pair; the
//                                          launcher is started with launcherFd as its fd 3
//   launcherWatch(daemonFd, onMessage)  -> handle; onMessage(op, tag, value) for every message
//                                          from the launcher, then onMessage(0, 0, 0) once when
//                                          its end is closed (the launcher is gone)
//   launcherSpawn(handle, tag, fds)        sends the supervisor's fds 0-3 (SCM_RIGHTS)
//   launcherSignal(handle, tag, signal)    asks it to signal a supervisor it has not reaped
//   launcherClose(handle)                  stops watching and closes the daemon's end (the
//                                          launcher then exits)
// Sends never block: a launcher that does not keep up makes launcherSpawn throw EAGAIN.
#include "addon.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>

#include "../launch-proto.h"

namespace xlurm {

namespace {

struct Launcher {
  napi_env env = nullptr;
  int fd = -1;
  uv_poll_t poll;
  bool open = false;  // the poll handle is initialised and not yet closed
  // Two owners: the poll handle until its close callback, and the External given to JS until
  // it is garbage collected. The last one frees it, so a handle used after launcherClose (or
  // after the launcher went away) is an error, never a dangling pointer.
  int refs = 2;
  Napi::FunctionReference callback;
  napi_async_context context = nullptr;
  napi_async_cleanup_hook_handle cleanup = nullptr;
};

void Unref(Launcher* l) {
  if (--l->refs == 0) delete l;
}

void OnClosed(uv_handle_t* handle) {
  auto* l = static_cast<Launcher*>(handle->data);
  l->callback.Reset();
  if (l->context) napi_async_destroy(l->env, l->context);
  l->context = nullptr;
  // At environment teardown this also tells Node that our cleanup hook is done.
  if (l->cleanup) napi_remove_async_cleanup_hook(l->cleanup);
  l->cleanup = nullptr;
  Unref(l);
}

// uv_close first (epoll_ctl DEL), then close the descriptor: never the other way round, or
// libuv would remove whatever reused the number.
void Close(Launcher* l) {
  if (!l->open) return;
  l->open = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&l->poll), OnClosed);
  close(l->fd);
  l->fd = -1;
}

// As spawn.cc's Report: inside the async context captured at launcherWatch, an exception
// thrown by the callback becomes an uncaught exception instead of staying pending.
void Deliver(Launcher* l, uint32_t op, uint32_t tag, int32_t value) {
  napi_env env = l->env;
  Napi::HandleScope scope(env);
  napi_value args[3] = {Napi::Number::New(env, op), Napi::Number::New(env, tag), Napi::Number::New(env, value)};
  napi_value result;
  napi_status st = napi_make_callback(env, l->context, Napi::Env(env).Global(), l->callback.Value(), 3, args, &result);
  if (st == napi_pending_exception) {
    napi_value error;
    if (napi_get_and_clear_last_exception(env, &error) == napi_ok) napi_fatal_exception(env, error);
  }
}

void OnReadable(uv_poll_t* poll, int status, int /*events*/) {
  auto* l = static_cast<Launcher*>(poll->data);
  // Everything queued now; a callback may close the handle, which ends the loop.
  while (l->open) {
    launch_msg m;
    ssize_t n = status < 0 ? -1 : recv(l->fd, &m, sizeof m, MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0 && status >= 0 && errno == EINTR) continue;
    if (n < 0 && status >= 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {  // end of file, or an error: the launcher is gone for us
      Deliver(l, 0, 0, 0);
      Close(l);
      return;
    }
    if (n != static_cast<ssize_t>(sizeof m)) continue;  // not ours: dropped
    Deliver(l, m.op, m.tag, m.value);
  }
}

// Environment teardown: the loop must hold no handle of ours; OnClosed completes the hook.
void OnEnvCleanup(napi_async_cleanup_hook_handle /*handle*/, void* arg) {
  Close(static_cast<Launcher*>(arg));
}

Launcher* Unwrap(const Napi::CallbackInfo& info, const char* usage) {
  if (info.Length() < 1 || !info[0].IsExternal()) {
    Napi::TypeError::New(info.Env(), std::string("Usage: ") + usage).ThrowAsJavaScriptException();
    return nullptr;
  }
  auto* l = info[0].As<Napi::External<Launcher>>().Data();
  if (!l || !l->open) {
    Napi::Error e = Napi::Error::New(info.Env(), "the supervisor launcher is closed");
    e.Set("code", Napi::String::New(info.Env(), "EPIPE"));
    e.ThrowAsJavaScriptException();
    return nullptr;
  }
  return l;
}

// One message, and the descriptors if any; false with a thrown error when it cannot be sent.
bool Send(Napi::Env env, Launcher* l, const launch_msg& m, const int* fds, int nfds) {
  if (launch_send(l->fd, &m, fds, nfds, MSG_DONTWAIT) == 0) return true;
  ThrowErrno(env, errno, "sendmsg");
  return false;
}

Napi::Value LauncherPair(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
    ThrowErrno(env, errno, "socketpair");
    return env.Undefined();
  }
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(0u, Napi::Number::New(env, sv[0]));
  out.Set(1u, Napi::Number::New(env, sv[1]));
  return out;
}

Napi::Value LauncherWatch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "launcherWatch(fd, onMessage)";
  int fd;
  if (!ArgFd(info, 0, usage, &fd)) return env.Undefined();
  if (info.Length() < 2 || !info[1].IsFunction()) {
    Napi::TypeError::New(env, std::string("Usage: ") + usage).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || !loop) {
    Napi::Error::New(env, "launcherWatch: no event loop").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    ThrowErrno(env, errno, "fcntl");
    return env.Undefined();
  }
  auto* l = new Launcher;
  l->env = env;
  l->fd = fd;
  if (uv_poll_init(loop, &l->poll, fd) != 0) {
    delete l;  // nothing else knows it yet
    ThrowErrno(env, EINVAL, "uv_poll_init");
    return env.Undefined();
  }
  l->poll.data = l;
  l->open = true;
  // The launcher does not keep the daemon alive: a daemon with nothing else to do may exit.
  uv_unref(reinterpret_cast<uv_handle_t*>(&l->poll));
  int err = uv_poll_start(&l->poll, UV_READABLE | UV_DISCONNECT, OnReadable);
  if (err != 0) {
    l->fd = -1;  // the caller still owns it on failure
    l->open = false;
    l->refs = 1;  // no External will be made
    uv_close(reinterpret_cast<uv_handle_t*>(&l->poll), OnClosed);
    ThrowErrno(env, -err, "uv_poll_start");
    return env.Undefined();
  }
  l->callback = Napi::Persistent(info[1].As<Napi::Function>());
  napi_value name = Napi::String::New(env, "xlurm.launcher");
  if (napi_async_init(env, nullptr, name, &l->context) != napi_ok) l->context = nullptr;
  if (napi_add_async_cleanup_hook(env, OnEnvCleanup, l, &l->cleanup) != napi_ok) l->cleanup = nullptr;
  return Napi::External<Launcher>::New(env, l, [](Napi::Env, Launcher* dropped) { Unref(dropped); });
}

Napi::Value LauncherSpawn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "launcherSpawn(handle, tag, [fd0, fd1, fd2, fd3])";
  Launcher* l = Unwrap(info, usage);
  uint32_t tag;
  if (!l || !ArgU32(info, 1, usage, &tag)) return env.Undefined();
  int fds[4];
  if (!ArgFds(info, 2, 4, usage, fds)) return env.Undefined();
  Send(env, l, launch_msg{LAUNCH_SPAWN, tag, 0}, fds, 4);
  return env.Undefined();
}

Napi::Value LauncherSignal(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "launcherSignal(handle, tag, signal)";
  Launcher* l = Unwrap(info, usage);
  uint32_t tag, sig;
  if (!l || !ArgU32(info, 1, usage, &tag) || !ArgU32(info, 2, usage, &sig)) return env.Undefined();
  if (sig < 1 || sig > 64) {
    Napi::RangeError::New(env, "launcherSignal: invalid signal number").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Send(env, l, launch_msg{LAUNCH_SIGNAL, tag, static_cast<int32_t>(sig)}, nullptr, 0);
  return env.Undefined();
}

Napi::Value LauncherClose(const Napi::CallbackInfo& info) {
  if (info.Length() >= 1 && info[0].IsExternal()) {
    auto* l = info[0].As<Napi::External<Launcher>>().Data();
    if (l && l->open) Close(l);
  }
  return info.Env().Undefined();
}

}  // namespace

void InitLauncher(Napi::Env env, Napi::Object exports) {
  exports.Set("launcherPair", Napi::Function::New(env, LauncherPair, "launcherPair"));
  exports.Set("launcherWatch", Napi::Function::New(env, LauncherWatch, "launcherWatch"));
  exports.Set("launcherSpawn", Napi::Function::New(env, LauncherSpawn, "launcherSpawn"));
  exports.Set("launcherSignal", Napi::Function::New(env, LauncherSignal, "launcherSignal"));
  exports.Set("launcherClose", Napi::Function::New(env, LauncherClose, "launcherClose"));
}

}  // namespace xlurm
