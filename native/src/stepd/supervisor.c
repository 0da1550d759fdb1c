/*
 * xlurm-stepd: supervises one job (docs/behaviour.md §6.3; docs/architecture.md, "A job's
 * path").
 *
 * The daemon starts it (its launcher forks it, see launcher.c; or it posix_spawns it) in a new
 * session, with an empty environment and cwd "/", with:
 *   fd 0  the job spec (spec.c): a memfd (or an unlinked file) the daemon wrote completely
 *         before starting us, so a daemon that dies right after the spawn still leaves us a
 *         whole spec. Read to EOF, then replaced by /dev/null.
 *   fd 1, fd 2  the job log (O_APPEND); our own errors go there as "xlurm: <message>"
 *   fd 3  the job lock: an open file description on which the daemon holds an exclusive
 *         flock(2). We keep it open (close-on-exec) until we exit, so the lock means "the
 *         supervisor is alive", which is how a daemon, even a restarted one, learns the end.
 *         Right before the payload is started we write "started\n" at offset 0 of the lock
 *         file (the daemon hands it over holding "spawn\n"): a restarted daemon that finds the
 *         lock free and no result can then tell "the supervisor died before the payload ever
 *         ran" (still "spawn") from "the payload ran". Not synced: it must survive a daemon
 *         crash, not a power loss; a failed write is ignored (a full disk must not stop the job).
 *
 * It becomes a child subreaper, starts the payload (a vfork, see start_payload) in a new
 * process group as the job's owner (supplementary groups, gid, uid, no_new_privs, cwd,
 * parent-death signal, then exec), enforces
 * cancellation and the time limit (SIGTERM to the group, SIGKILL 1 s later), kills and reaps
 * the whole group after the leader exits, and writes the result atomically (result.c).
 *
 * Exit status: 0 once a result is written; 1 when no usable result could be written (bad
 * descriptors, invalid spec, result write failure), with the reason in the log.
 */
#include "supervisor.h"

#include "job.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOCK_FD 3

/* Supervision cadence (docs/behaviour.md §6.3). The grace period between SIGTERM and SIGKILL
 * comes with the spec (`[limits] kill_grace`, docs/behaviour.md §21.6). */
#define POLL_NS (50 * 1000000LL)
#define NS_PER_S 1000000000LL

extern char **environ;

enum reason { REASON_NONE, REASON_CANCELLED, REASON_TIMED_OUT };

struct outcome {
    enum job_state state;
    int exit_code;
    char *error; /* NULL, or from str_join */
    struct job_usage usage; /* what the job's cgroups measured; all -1 without */
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static void fail(struct outcome *o, const char *a, const char *b, const char *c)
{
    o->state = JOB_FAILED;
    o->exit_code = 1;
    o->error = str_join(a, b, c);
}

/* "cannot execute <argv0>: <strerror>" (docs/behaviour.md §4.2). */
static void fail_exec(struct outcome *o, const char *argv0, int err)
{
    char *tail = str_join(": ", strerror(err), NULL);
    fail(o, "cannot execute ", argv0, tail);
    if (!str_is_static(tail))
        free(tail);
}

/* A cancel marker exists (written by the daemon on xcancel; docs/behaviour.md §5.4). */
static int cancel_marker(const struct job_spec *spec)
{
    return access(spec->cancel_path, F_OK) == 0;
}

/* `xlurm update -t` of a running job (docs/behaviour.md §23.3): the daemon leaves the new limit,
 * decimal seconds from the payload's start ("0": none), in <base>.limit beside the cancel
 * marker <base>.cancel, atomically (a temporary file renamed over it). The name is derived here
 * the way the result's temporary name is: the daemon's jobPaths makes both. Looked at on every
 * wake-up of the supervision loop (at least every 50 ms), read again only when the file changed
 * (another inode or mtime), so a restarted daemon's change reaches an adopted job too. */
struct limit_file {
    char path[4096];
    int enabled;
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
};

static void limit_file_init(struct limit_file *lf, const struct job_spec *spec)
{
    static const char suffix[] = ".cancel";
    size_t n = strlen(spec->cancel_path);
    size_t k = sizeof suffix - 1;
    memset(lf, 0, sizeof *lf);
    if (n < k || strcmp(spec->cancel_path + n - k, suffix) != 0 || n - k + sizeof ".limit" > sizeof lf->path)
        return;
    memcpy(lf->path, spec->cancel_path, n - k);
    memcpy(lf->path + n - k, ".limit", sizeof ".limit");
    lf->enabled = 1;
}

/* The limit in the file when it changed since the last look (into *limit_ns), else nothing. */
static void limit_file_check(struct limit_file *lf, int64_t *limit_ns)
{
    struct stat st;
    if (!lf->enabled || stat(lf->path, &st) < 0)
        return;
    if (st.st_dev == lf->dev && st.st_ino == lf->ino && st.st_mtim.tv_sec == lf->mtime.tv_sec &&
        st.st_mtim.tv_nsec == lf->mtime.tv_nsec)
        return;
    int fd = open(lf->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return;
    char buf[32];
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0)
        return;
    buf[r] = '\0';
    char *end = NULL;
    errno = 0;
    unsigned long long secs = strtoull(buf, &end, 10);
    /* Only a whole, well-formed number is taken; anything else leaves the limit as it was. */
    if (errno != 0 || end == buf || (*end != '\0' && *end != '\n') || buf[0] == '-' || secs > UINT32_MAX)
        return;
    lf->dev = st.st_dev;
    lf->ino = st.st_ino;
    lf->mtime = st.st_mtim;
    *limit_ns = (int64_t)secs * NS_PER_S;
}

/* A cancellation signal arrived before the payload was started. */
static int cancel_signal_pending(void)
{
    sigset_t pending;
    if (sigpending(&pending) < 0)
        return 0;
    for (int sig = 1; sig < _NSIG; sig++)
        if (is_cancel_signal(sig) && sigismember(&pending, sig) == 1)
            return 1;
    return 0;
}

/* What the payload's child shares with us: it runs in our memory (CLONE_VM) while we wait
 * (CLONE_VFORK), so it reports a failure by storing errno here, and we read it once clone
 * returns, which is after its exec or its _exit. */
struct child_args {
    const struct job_spec *spec;
    pid_t parent;
    volatile int err;
    volatile int cgroup; /* 1 + the index of the cgroup it could not join; 0: the failure was later */
    volatile const char *tmp; /* the private mount that failed (docs/behaviour.md §28.12), or NULL */
    const char *tmp_opts;     /* the tmpfs options, built before the vfork (no allocation there) */
};

/* A private /tmp (docs/behaviour.md §28.12): the payload's child, still root, enters a mount
 * namespace of its own, makes every mount of it a slave of the host's (nothing it mounts goes
 * back to the host; the host's later mounts and unmounts still reach it), and mounts a fresh
 * tmpfs, owned by the job's user with mode 0700, on each of these. The namespace and its tmpfs
 * go when the job's last process does: nothing is ever removed by path. */
static const char *const private_mounts[] = {"/tmp", "/dev/shm"};

static int private_tmp(struct child_args *a)
{
    if (unshare(CLONE_NEWNS) < 0) {
        a->tmp = "a mount namespace";
        return -1;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
        a->tmp = "/ as a slave mount";
        return -1;
    }
    for (size_t i = 0; i < sizeof private_mounts / sizeof *private_mounts; i++) {
        if (mount("tmpfs", private_mounts[i], "tmpfs", MS_NOSUID | MS_NODEV, a->tmp_opts) < 0) {
            a->tmp = private_mounts[i];
            return -1;
        }
    }
    return 0;
}

/* Between clone and exec, in the order docs/behaviour.md §6.3 fixes. Any failure stores errno in
 * args->err and exits 127; a successful exec leaves it 0.
 *
 * This runs in the supervisor's own memory, on a stack of its own, while the supervisor is
 * suspended (a vfork: no copy of the page tables, which here costs more than the rest of a
 * job start; see docs/performance.md). So it changes no memory it shares with the
 * supervisor except args->err and environ (which the supervisor restores), and makes the
 * identity changes with raw system calls: glibc's wrappers would consult the thread list
 * of the process whose memory this is. Signal dispositions and the mask are per process and
 * per thread, not in that memory, so resetting them here leaves the supervisor's alone. */
static int child(void *arg)
{
    struct child_args *a = arg;
    const struct job_spec *spec = a->spec;

    /* Handlers do not survive exec but ignored signals do (our SIGPIPE, or anything the daemon
     * ignored); the payload starts with every disposition at default and nothing blocked.
     * An all-zero kernel sigaction is SIG_DFL, no flags, empty mask, whatever the
     * architecture's field order. The raw call also covers glibc's two internal signals
     * (32, 33: SIGCANCEL, SIGSETXID), which posix_spawn (how the daemon starts us without a launcher) leaves
     * ignored and the sigaction() wrapper refuses (EINVAL). */
    static const unsigned long kernel_dfl[16];
    for (int sig = 1; sig < _NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            syscall(SYS_rt_sigaction, sig, kernel_dfl, NULL, (size_t)(_NSIG / 8));
    static const unsigned long none[16];
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, none, NULL, (size_t)(_NSIG / 8));

    /* Join the job's cgroups first, still as root and before anything of the job runs, so
     * every process it ever makes is born inside them (docs/behaviour.md §24.3). "0" is the
     * writer itself; the paths were built before the vfork (no allocation here). */
    for (size_t i = 0; i < spec->ncgroups; i++) {
        int fd = open(spec->cgroup_procs[i], O_WRONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : write(fd, "0", 1);
        int err = errno;
        if (fd >= 0)
            close(fd);
        if (n != 1) {
            a->cgroup = (int)i + 1;
            errno = err ? err : EIO;
            goto fail;
        }
    }

    /* Still root, after the cgroups (the tmpfs pages are charged to the job's memory). */
    if (spec->private_tmp && private_tmp(a) < 0)
        goto fail;

    /* New process group whose id is our pid, so the supervisor can signal and reap the whole
     * job (including `cmd &` children) with kill(-pgid)/waitpid(-pgid). */
    if (setpgid(0, 0) < 0)
        goto fail;

    if (spec->switch_user) {
        /* The daemon re-resolved the account when it launched the job (a uid deleted or given
         * to another name since submission fails there) and sent its groups: no NSS lookup
         * here. setgroups before setresgid before setresuid: after the uid change we could no
         * longer change groups (credentials(7)). All three ids, so no saved id keeps root. */
        if (syscall(SYS_setgroups, (size_t)spec->ngroups, spec->groups) < 0)
            goto fail;
        if (syscall(SYS_setresgid, spec->gid, spec->gid, spec->gid) < 0)
            goto fail;
        if (syscall(SYS_setresuid, spec->uid, spec->uid, spec->uid) < 0)
            goto fail;
    }
    /* prctl(2) PR_SET_NO_NEW_PRIVS: setuid binaries and file capabilities can no longer raise
     * the job's privileges; inherited by every descendant. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        goto fail;
    /* chdir after the identity change, so the owner's own permissions decide
     * (docs/behaviour.md §11.6). */
    if (chdir(spec->cwd) < 0)
        goto fail;
    /* PR_SET_PDEATHSIG is cleared by credential changes, hence after setresuid. If the
     * supervisor died before this point the signal would never come, so check the parent. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        goto fail;
    if (getppid() != a->parent)
        _exit(125);

    /* Exactly the submitted environment; execvp searches the submitted PATH (it reads PATH
     * from environ, which the supervisor restores once we are gone). */
    environ = spec->envp;
    execvp(spec->argv[0], spec->argv);
fail:
    a->err = errno ? errno : EINVAL;
    _exit(127);
}

/* Starts child() as a vfork (CLONE_VM | CLONE_VFORK) on a stack of its own, as glibc's
 * posix_spawn does; returns when it has exec'd or exited, with its pid, or -1 and errno. The
 * stack holds execvp's path buffer and, for a script without "#!", the argument vector it
 * builds for /bin/sh: room for argv plus 64 KiB. */
static pid_t start_payload(struct child_args *a)
{
    size_t argc = 0;
    while (a->spec->argv[argc])
        argc++;
    long page = sysconf(_SC_PAGESIZE);
    size_t size = (argc + 2) * sizeof(char *) + 64 * 1024;
    size = (size + (size_t)page - 1) / (size_t)page * (size_t)page;
    void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        return -1;
    char **saved = environ;
    /* Stacks grow down on every architecture we build for (x86-64, aarch64). */
    pid_t pid = clone(child, (char *)stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, a);
    int err = errno;
    environ = saved;
    munmap(stack, size);
    errno = err;
    return pid;
}

/* "The payload may have run" (see the header comment). pwrite leaves the file offset alone.
 * Errors are ignored on purpose: ENOSPC, EDQUOT or EIO must not stop the job; a restarted
 * daemon then merely takes this job for one whose payload never ran. */
static void mark_started(void)
{
    static const char marker[] = "started\n";
    ssize_t n;
    do
        n = pwrite(LOCK_FD, marker, sizeof marker - 1, 0);
    while (n < 0 && errno == EINTR);
    (void)n;
}

/* Signal the job's process group. Both the child and we call setpgid, so the group exists;
 * should it not (ESRCH while the leader is unreaped), the leader alone still gets the signal. */
static void signal_job(pid_t pgid, int sig)
{
    if (pgid <= 1) /* never kill(-1) / kill(0) */
        return;
    if (kill(-pgid, sig) < 0 && errno == ESRCH)
        kill(pgid, sig);
}

/* Reaps every exited child without blocking; returns 1 (and the status) once the leader is
 * among them. As a subreaper our children include orphaned descendants of the job. */
static int reap_nohang(pid_t leader, int *status)
{
    int found = 0, st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        if (pid == leader) {
            *status = st;
            found = 1;
        }
    }
    return found;
}

/* SIGKILL the job's process group and reap every member (blocking), re-sending SIGKILL
 * before each wait so nothing that appeared meanwhile survives. Members whose parents die
 * are re-parented to us (subreaper) before their parent can be reaped, so the loop ends only
 * when no process of the group is left among our children. Then reap any other zombies
 * (descendants that left the group and already exited). */
static void kill_and_reap_group(pid_t pgid)
{
    int st;
    if (pgid <= 1) /* never kill(-1) / kill(0) */
        return;
    for (;;) {
        kill(-pgid, SIGKILL);
        pid_t pid = waitpid(-pgid, &st, 0);
        if (pid > 0 || (pid < 0 && errno == EINTR))
            continue;
        break; /* ECHILD: none left */
    }
    while (waitpid(-1, &st, WNOHANG) > 0) {
    }
}

/* Counts the processes listed in a cgroup.procs file, sending each SIGKILL when asked. A list
 * longer than the buffer counts as non-empty (the caller looks again). */
static int kill_listed(const char *procs, int do_kill)
{
    static char buf[65536];
    int fd = open(procs, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0; /* gone, or never made: nothing of the job can be in it */
    ssize_t n;
    do
        n = read(fd, buf, sizeof buf - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    int count = 0;
    for (char *p = buf; *p;) {
        char *end;
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        if (pid > 1) {
            count++;
            if (do_kill)
                kill((pid_t)pid, SIGKILL);
        }
        p = end;
        while (*p == '\n')
            p++;
    }
    return count + (n == (ssize_t)sizeof buf - 1);
}

/* Nothing escapes (docs/behaviour.md §24.6): after the process group, every process still in
 * the job's cgroups (a setsid'd or double-forked descendant leaves the group, never the
 * cgroup) is killed, through cgroup.kill where the unified hierarchy has it, else by SIGKILL
 * to each listed pid, and those re-parented to us are reaped, until the cgroups are empty.
 * Bounded, so a process stuck in the kernel cannot keep the result from being written; the
 * daemon kills and removes the cgroup again after it reads the result. */
static void empty_cgroups(const struct job_spec *spec)
{
    if (!spec->ncgroups)
        return;
    int64_t deadline = now_ns() + 10 * NS_PER_S;
    for (;;) {
        if (spec->cgroup_kill) {
            int fd = open(spec->cgroup_kill, O_WRONLY | O_CLOEXEC);
            if (fd >= 0) {
                ssize_t n = write(fd, "1", 1);
                (void)n;
                close(fd);
            }
        }
        int left = 0;
        for (size_t i = 0; i < spec->ncgroups; i++)
            left += kill_listed(spec->cgroup_procs[i], spec->cgroup_kill == NULL);
        int st;
        while (waitpid(-1, &st, WNOHANG) > 0) {
        }
        if (!left || now_ns() >= deadline)
            return;
        struct timespec ts = {0, 2 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* The supervision loop (docs/behaviour.md §6.3): wake on signals, every 50 ms, and exactly at
 * the time-limit and grace deadlines. Returns once the leader has exited, with its wait status. */
static void supervise(const struct job_spec *spec, pid_t leader, int64_t start,
                      enum reason *reason, int *status)
{
    sigset_t waited;
    waited_signals(&waited);
    int cancel = 0;
    int64_t term_at = 0;
    int64_t limit_ns = (int64_t)spec->time_limit * NS_PER_S;
    int64_t grace_ns = (int64_t)spec->kill_grace * NS_PER_S;
    struct limit_file lf;
    limit_file_init(&lf, spec);

    for (;;) {
        if (reap_nohang(leader, status))
            return;
        limit_file_check(&lf, &limit_ns);

        int64_t now = now_ns();
        if (*reason == REASON_NONE) {
            if (cancel || cancel_marker(spec))
                *reason = REASON_CANCELLED;
            else if (limit_ns > 0 && now - start >= limit_ns)
                *reason = REASON_TIMED_OUT;
            if (*reason != REASON_NONE) {
                signal_job(leader, SIGTERM);
                term_at = now;
            }
        }
        if (*reason != REASON_NONE && now - term_at >= grace_ns)
            signal_job(leader, SIGKILL); /* repeated every iteration until the leader is gone */

        int64_t wait = POLL_NS;
        if (*reason == REASON_NONE && limit_ns > 0 && start + limit_ns - now < wait)
            wait = start + limit_ns - now;
        if (*reason != REASON_NONE && term_at + grace_ns - now > 0 &&
            term_at + grace_ns - now < wait)
            wait = term_at + grace_ns - now;
        if (wait < 0)
            wait = 0;

        struct timespec ts = {(time_t)(wait / NS_PER_S), (long)(wait % NS_PER_S)};
        int sig = sigtimedwait(&waited, NULL, &ts);
        if (sig > 0 && is_cancel_signal(sig))
            cancel = 1;
        /* SIGCHLD: the next iteration reaps. SIGHUP: ignored. -1 (EAGAIN/EINTR): timeout. */
    }
}

/* Everything from identity checks to the reaped process group. */
static void run_job(const struct job_spec *spec, struct outcome *o)
{
    pid_t self = getpid();

    /* prctl(2) PR_SET_CHILD_SUBREAPER: descendants orphaned by the payload (daemons, `cmd &`
     * whose parent exited) are re-parented to us instead of init, so we can kill and reap
     * them before the devices are released. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
        fail(o, "cannot enable child subreaper", NULL, NULL);
        return;
    }

    /* Cancelled before it started (marker or signal): run nothing. */
    if (cancel_marker(spec) || cancel_signal_pending()) {
        o->state = JOB_CANCELLED;
        o->exit_code = 130;
        return;
    }

    if (!spec->switch_user && (geteuid() != spec->uid || getegid() != spec->gid)) {
        /* A non-root daemon can only run its own user's jobs; groups stay untouched. */
        fail(o, "executor cannot assume the submitting user's identity", NULL, NULL);
        return;
    }

    mark_started();
    /* uid=,gid=,mode=,size= of the private tmpfs mounts: formatted here, the vfork child allocates nothing. */
    char tmp_opts[128];
    snprintf(tmp_opts, sizeof tmp_opts, "uid=%u,gid=%u,mode=0700,size=%llu", (unsigned)spec->uid, (unsigned)spec->gid,
             (unsigned long long)spec->private_tmp);
    struct child_args args = {spec, self, 0, 0, NULL, tmp_opts};
    pid_t pid = start_payload(&args);
    if (pid < 0) {
        fail_exec(o, spec->argv[0], errno);
        return;
    }
    int64_t start = now_ns();
    /* The child already did the same (it has exec'd or exited by now): EACCES or ESRCH. */
    setpgid(pid, pid);
    if (args.err) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        kill_and_reap_group(pid);
        empty_cgroups(spec);
        if (args.cgroup) {
            /* Fail closed (docs/behaviour.md §24.3): never run the job outside its cgroup. */
            char *tail = str_join(": ", strerror(args.err), NULL);
            fail(o, "cannot enforce the job's limits: cannot join ", spec->cgroup_dirs[args.cgroup - 1], tail);
            if (!str_is_static(tail))
                free(tail);
            return;
        }
        if (args.tmp) {
            /* Fail closed as well (docs/behaviour.md §28.12): no job sees the host's /tmp instead. */
            char *tail = str_join(": ", strerror(args.err), NULL);
            fail(o, "cannot enforce the job's limits: cannot make a private /tmp: ", (const char *)args.tmp, tail);
            if (!str_is_static(tail))
                free(tail);
            return;
        }
        fail_exec(o, spec->argv[0], args.err);
        return;
    }

    enum reason reason = REASON_NONE;
    int status = 0;
    supervise(spec, pid, start, &reason, &status);
    /* The leader is gone; its group goes too, whatever the reason (docs/behaviour.md §6.3),
     * and then everything else in its cgroups, which are measured and removed. */
    kill_and_reap_group(pid);
    empty_cgroups(spec);
    if (spec->ncgroups) {
        cgroup_usage(spec, &o->usage);
        cgroup_remove(spec);
    }

    if (reason == REASON_CANCELLED) {
        o->state = JOB_CANCELLED;
        o->exit_code = 130;
    } else if (reason == REASON_TIMED_OUT) {
        o->state = JOB_TIMED_OUT;
        o->exit_code = 124;
    } else {
        if (WIFEXITED(status))
            o->exit_code = WEXITSTATUS(status);
        else if (WIFSIGNALED(status))
            o->exit_code = 128 + WTERMSIG(status);
        else
            o->exit_code = 1;
        o->state = o->exit_code == 0 ? JOB_COMPLETED : JOB_FAILED;
        /* The kernel killed part of it for its memory limit (docs/behaviour.md §24.5): that is
         * how it ended, whatever the exit status its leader had. */
        if (o->usage.oom_kills > 0 && o->usage.mem_limit > 0) {
            char *e = oom_error(&o->usage);
            if (e) {
                o->state = JOB_OUT_OF_MEMORY;
                o->exit_code = 137;
                o->error = e;
            }
        }
    }
}

/* First wait before retrying a result write that found the file system full; doubles up to the
 * cap. */
#define RESULT_RETRY_FIRST_NS (250 * 1000000LL)
#define RESULT_RETRY_MAX_NS (5000 * 1000000LL)

/* Writes the result. A full file system (ENOSPC, EDQUOT) is waited out, not reported: we keep
 * the lock, so the daemon keeps seeing the job as running, and the real outcome, stamped with
 * the time the job ended, is written once there is room (instead of the job being reported as
 * "disappeared without an exit result"). Any other error is final. */
static int finish(const char *result_path, const struct outcome *o)
{
    time_t finished_at = time(NULL);
    int64_t delay = RESULT_RETRY_FIRST_NS;
    int told = 0;
    for (;;) {
        int rc = result_write(result_path, o->state, o->exit_code, o->error, finished_at, &o->usage);
        if (rc == 0)
            return 0;
        char *what = str_join("cannot write job result ", result_path, ": ");
        if (rc != ENOSPC && rc != EDQUOT) {
            say(what, strerror(rc), NULL);
            return 1;
        }
        if (!told) /* the log is probably on the same full disk; say() ignores that */
            say(what, strerror(rc), "; retrying until there is space");
        told = 1;
        if (!str_is_static(what))
            free(what);
        /* Cancel signals are blocked (sigprocmask in main), so only SIGKILL ends the wait. */
        struct timespec ts = {(time_t)(delay / NS_PER_S), (long)(delay % NS_PER_S)};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
        }
        delay = delay * 2 > RESULT_RETRY_MAX_NS ? RESULT_RETRY_MAX_NS : delay * 2;
    }
}

/* The supervisor, from its inherited descriptors (see the header comment) to its result
 * (supervisor.h says who calls it). */
int supervisor_main(void)
{
    /* The inherited lock: it must be open, and must not leak into the job (close-on-exec),
     * or a payload's background process could hold the lock after we are gone. */
    int flags = fcntl(LOCK_FD, F_GETFD);
    if (flags < 0) {
        say("invalid worker lock descriptor", NULL, NULL);
        return 1;
    }
    if (fcntl(LOCK_FD, F_SETFD, flags | FD_CLOEXEC) < 0) {
        say("missing inherited worker lock", NULL, NULL);
        return 1;
    }
    /* Nothing above the lock: whatever else the daemon leaked must neither be held for the
     * job's lifetime nor reach the job. */
    close_from(LOCK_FD + 1);

    sigset_t waited;
    waited_signals(&waited);
    sigprocmask(SIG_BLOCK, &waited, NULL);
    /* A vanished log reader must not kill us with SIGPIPE; write errors are handled. */
    signal(SIGPIPE, SIG_IGN);

    /* The daemon already made us a session leader; EPERM then just says so. A session of our
     * own keeps the job away from the daemon's terminal and its job-control signals. */
    setsid();

    struct job_spec spec;
    if (spec_read(STDIN_FILENO, &spec) < 0) {
        say("invalid job spec", NULL, NULL);
        if (spec.result_path) {
            struct outcome bad = {JOB_FAILED, 1, "invalid job spec", {-1, -1, -1, -1}};
            finish(spec.result_path, &bad);
        }
        return 1;
    }

    /* The payload's stdin is /dev/null (never the spec file). */
    struct outcome o = {JOB_FAILED, 1, NULL, {-1, -1, -1, -1}};
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC); /* dup2 below clears CLOEXEC on fd 0 */
    if (nul < 0 || dup2(nul, STDIN_FILENO) < 0) {
        fail(&o, "cannot open /dev/null: ", strerror(errno), NULL);
        return finish(spec.result_path, &o);
    }
    if (nul != STDIN_FILENO)
        close(nul);

    /* Files the job creates are owner-only by default (docs/behaviour.md §1, §11.4). */
    umask(077);

    run_job(&spec, &o);
    /* A job that never ran (cancelled first, not executable) leaves its cgroups empty. */
    cgroup_remove(&spec);
    /* The lock (fd 3) is released by exit, after the result is durable. */
    return finish(spec.result_path, &o);
}
