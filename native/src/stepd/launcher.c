/*
 * xlurm-stepd --launcher: forks supervisors for the daemon, so that a job start costs one
 * fork(2) of this small process instead of an execve(2) of xlurm-stepd (on this project's
 * test machines an exec plus the new image's start-up is 1.5-2 ms of CPU; see
 * docs/performance.md).
 *
 * The daemon starts one launcher and talks to it over a SOCK_SEQPACKET socket on fd 3, one
 * fixed-size message per datagram (struct launch_msg, ../launch-proto.h):
 *   daemon -> launcher  LAUNCH_SPAWN tag, with exactly four descriptors (SCM_RIGHTS): the
 *                       supervisor's fds 0-3 (spec, log, log, lock), exactly what an exec'd
 *                       xlurm-stepd gets. The child becomes a session leader and runs the
 *                       supervisor (the function main.c hands to launcher_main) as if
 *                       exec'd.
 *                       LAUNCH_SIGNAL tag value: send signal `value` to that supervisor, if it
 *                       has not been reaped (its pid cannot have been reused before that).
 *   launcher -> daemon  LAUNCH_SPAWNED tag value: the supervisor's pid, or -errno.
 *                       LAUNCH_EXITED tag value: its wait status, once reaped.
 *
 * The descriptors received are closed right after the fork, before any exit is reported, so
 * when the daemon hears LAUNCH_EXITED the supervisor's copy of the lock was the last one.
 *
 * A spare: while the launcher is idle (no message for SPARE_IDLE_MS), it forks one child ahead
 * of time, which becomes a session leader, names itself xlurm-spare (comm) and waits on a
 * socket of its own. The next spawn request hands it the four descriptors instead of forking,
 * so the fork (about 1 ms of this process's CPU here, docs/performance.md) is off that job's
 * start. The spare is reported as the supervisor's pid and from there on is one like any other
 * (it renames itself xlurm-stepd). A spare that is gone when a request comes (killed, or
 * signalled while idle, see spare_main) is replaced by a plain fork. The spare exits when its
 * socket's other end closes: it never outlives the launcher without a job.
 *
 * The launcher exits when the daemon's end closes (the daemon stopped or died) or on SIGTERM
 * / SIGINT. Supervisors are not touched: they are session leaders of their own and, like
 * supervisors the daemon started itself, outlive both (they are re-parented to init, and a
 * restarted daemon finds them through their locks).
 *
 * Signals: the supervisor's waited signals (waited_signals, util.h) stay blocked here and so
 * are blocked in every child from its first instruction, as an exec'd supervisor blocks them
 * before it reads its spec: a cancel that arrives early is kept pending, not lost. SIGCHLD,
 * SIGTERM and SIGINT are read here through a signalfd.
 */
#include "launcher.h"

#include "../launch-proto.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define SOCK_FD 3

/* Idle time after which a spare is forked; and the pause after a fork for one failed. */
#define SPARE_IDLE_MS 5
#define SPARE_RETRY_MS 1000

/* Live supervisors: pid and the daemon's tag. A linear table: it holds at most the daemon's
 * running jobs, and grows as needed. */
struct child {
    pid_t pid;
    uint32_t tag;
};
static struct child *children;
static size_t nchildren, capchildren;

static int remember(pid_t pid, uint32_t tag)
{
    if (nchildren == capchildren) {
        size_t cap = capchildren ? capchildren * 2 : 64;
        struct child *grown = realloc(children, cap * sizeof *grown);
        if (!grown)
            return -1;
        children = grown;
        capchildren = cap;
    }
    children[nchildren].pid = pid;
    children[nchildren].tag = tag;
    nchildren++;
    return 0;
}

static struct child *find_tag(uint32_t tag)
{
    for (size_t i = 0; i < nchildren; i++)
        if (children[i].tag == tag)
            return &children[i];
    return NULL;
}

/* The spare (see the header comment): its pid, 0 if none, and our end of its socket. */
static pid_t spare_pid;
static int spare_sock = -1;

/* What a child forked for a job runs (launcher_main's argument). */
static int (*run_supervisor)(void);

/* Blocking send of one message; any failure means the daemon is gone, and so the launcher's
 * work is done. */
static void reply(uint32_t op, uint32_t tag, int32_t value)
{
    struct launch_msg m = {op, tag, value};
    if (launch_send(SOCK_FD, &m, NULL, 0, 0) < 0)
        _exit(0);
}

/* Reaps every exited child and reports each one. Children not in the table (none are
 * expected) are reaped and forgotten. */
static void reap(void)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0)
            return; /* 0: the rest still run; -1: ECHILD, none left */
        if (pid == spare_pid) { /* died while idle (killed): fork another later */
            close(spare_sock);
            spare_sock = -1;
            spare_pid = 0;
            continue;
        }
        for (size_t i = 0; i < nchildren; i++) {
            if (children[i].pid != pid)
                continue;
            uint32_t tag = children[i].tag;
            children[i] = children[--nchildren];
            reply(LAUNCH_EXITED, tag, status);
            break;
        }
    }
}

/* In the new child: the four received descriptors become 0-3 (dup2 clears close-on-exec, and
 * fd 3, our socket, is replaced), then the supervisor runs exactly as an exec'd one would. */
static void __attribute__((noreturn)) become_supervisor(const int fds[4])
{
    /* Copy sources below 4 out of the way first, so no dup2 overwrites a later source. */
    int src[4];
    for (int i = 0; i < 4; i++) {
        src[i] = fds[i];
        if (src[i] < 4) {
            src[i] = fcntl(fds[i], F_DUPFD, 4);
            if (src[i] < 0)
                _exit(1);
        }
    }
    for (int i = 0; i < 4; i++)
        if (dup2(src[i], i) < 0)
            _exit(1);
    /* A session of our own, as the daemon's posix_spawn gives an exec'd supervisor; the rest
     * (closing fds 4 and up, SIGPIPE, the signal mask) is the supervisor's own start. */
    setsid();
    _exit(run_supervisor());
}

static void spawn_one(uint32_t tag, const int fds[4])
{
    pid_t pid = fork();
    if (pid == 0)
        become_supervisor(fds);
    int err = errno;
    for (int i = 0; i < 4; i++)
        close(fds[i]);
    if (pid < 0) {
        reply(LAUNCH_SPAWNED, tag, -err);
        return;
    }
    if (remember(pid, tag) < 0) {
        /* Cannot track it: it runs unwatched here, and the daemon learns its end through the
         * job's lock (a pid of 0 says so). */
        reply(LAUNCH_SPAWNED, tag, 0);
        return;
    }
    reply(LAUNCH_SPAWNED, tag, pid);
}

/* Receives one message from `sock` and up to four descriptors (more are closed): the
 * recvmsg(2) result, with the descriptors in fds[0..*nfds) and the message's flags. */
static ssize_t receive(int sock, struct launch_msg *m, int fds[4], int *nfds, int *flags, int dontwait)
{
    struct iovec iov = {m, sizeof *m};
    union {
        char buf[CMSG_SPACE(sizeof(int) * 4)];
        struct cmsghdr align;
    } control;
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof control.buf;
    ssize_t n;
    do
        n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | (dontwait ? MSG_DONTWAIT : 0));
    while (n < 0 && errno == EINTR);
    *nfds = 0;
    *flags = n < 0 ? 0 : msg.msg_flags;
    if (n < 0)
        return n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        int *in = (int *)CMSG_DATA(c);
        for (size_t i = 0; i < count; i++) {
            if (*nfds < 4)
                fds[(*nfds)++] = in[i];
            else
                close(in[i]);
        }
    }
    return n;
}

/* A complete spawn request: the whole message and exactly four descriptors. */
static int is_spawn(ssize_t n, const struct launch_msg *m, int nfds, int flags)
{
    return n == (ssize_t)sizeof *m && !(flags & (MSG_TRUNC | MSG_CTRUNC)) && m->op == LAUNCH_SPAWN && nfds == 4;
}

/* The spare's life: wait for a job's descriptors, then be its supervisor. The end of its
 * socket (the launcher is gone) ends it, and so does a cancel-type signal that comes while it
 * is idle: nothing of xlurm signals a spare (the daemon's signals go through the launcher,
 * after the handover), and a signal held over must not cancel the next job instead. */
static void __attribute__((noreturn)) spare_main(void)
{
    setsid();
    sigset_t stop; /* the supervisor's waited signals but SIGCHLD: all stay blocked */
    waited_signals(&stop);
    sigdelset(&stop, SIGCHLD);
    int sfd = signalfd(-1, &stop, SFD_CLOEXEC); /* fails only with no descriptor to spare */
    /* Named last: under this name it is ready (its own session, its descriptors final). */
    prctl(PR_SET_NAME, "xlurm-spare", 0, 0, 0);
    struct pollfd p[2] = {{SOCK_FD, POLLIN, 0}, {sfd, POLLIN, 0}};
    while (poll(p, sfd < 0 ? 1 : 2, -1) < 0)
        if (errno != EINTR)
            _exit(0);
    int dontwait = 0;
    if (!(p[0].revents & POLLIN)) {
        /* Signalled. Shut the socket first: a job sent from now on fails there (EPIPE) and
         * the launcher forks for it instead; one already queued is still taken below. */
        shutdown(SOCK_FD, SHUT_RD);
        dontwait = 1;
    }
    struct launch_msg m;
    int fds[4], nfds, flags;
    ssize_t n = receive(SOCK_FD, &m, fds, &nfds, &flags, dontwait);
    if (!is_spawn(n, &m, nfds, flags))
        _exit(0);
    prctl(PR_SET_NAME, "xlurm-stepd", 0, 0, 0);
    become_supervisor(fds); /* closes the signalfd with everything above fd 3 */
}

/* Forks the spare. Returns 0, or -1 if it cannot be forked now. */
static int make_spare(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        /* Its socket becomes fd 3 (dup2 closes the daemon's), and it keeps nothing else of
         * ours: not the signalfd, not our end of its socket (or it would never see the end). */
        if (dup2(sv[1], SOCK_FD) < 0)
            _exit(0);
        close_from(SOCK_FD + 1);
        spare_main();
    }
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return -1;
    }
    spare_pid = pid;
    spare_sock = sv[0];
    return 0;
}

/* Hands a job to the spare, if there is one that is still alive. Returns 0 when it has it
 * (and the daemon has been told), -1 when the job must be forked for. */
static int give_to_spare(uint32_t tag, const int fds[4])
{
    if (spare_pid <= 0)
        return -1;
    pid_t pid = spare_pid;
    int sock = spare_sock;
    spare_pid = 0;
    spare_sock = -1;
    struct launch_msg m = {LAUNCH_SPAWN, tag, 0};
    int sent = launch_send(sock, &m, fds, 4, 0);
    /* Closing our end after the send loses nothing: the message waits in the spare's queue. */
    close(sock);
    if (sent < 0)
        return -1; /* it is gone or going (EPIPE); reap() forgets it */
    for (int i = 0; i < 4; i++)
        close(fds[i]);
    /* Untrackable: the daemon learns its end through the job's lock (a pid of 0 says so). */
    reply(LAUNCH_SPAWNED, tag, remember(pid, tag) < 0 ? 0 : pid);
    return 0;
}

/* Receives and handles one message. Returns 0, or -1 when the daemon's end is closed. */
static int handle_message(void)
{
    struct launch_msg m;
    int fds[4], nfds, flags;
    ssize_t n = receive(SOCK_FD, &m, fds, &nfds, &flags, 1);
    if (n < 0 && errno == EAGAIN)
        return 0;
    if (n <= 0)
        return -1;
    if (is_spawn(n, &m, nfds, flags)) {
        if (give_to_spare(m.tag, fds) < 0)
            spawn_one(m.tag, fds);
        return 0;
    }
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
    int valid = n == (ssize_t)sizeof m && !(flags & (MSG_TRUNC | MSG_CTRUNC));
    if (valid && m.op == LAUNCH_SIGNAL && nfds == 0) {
        /* Only a child not yet reaped: its pid is still ours. Gone already: nothing to do. */
        struct child *c = find_tag(m.tag);
        if (c)
            kill(c->pid, m.value);
        return 0;
    }
    /* A spawn request that lost its descriptors is still answered: MSG_CTRUNC means the
     * kernel could not install them here (no free descriptor: EMFILE, which the daemon treats
     * as "try later"); fewer than four is a daemon bug. */
    if (n == (ssize_t)sizeof m && m.op == LAUNCH_SPAWN)
        reply(LAUNCH_SPAWNED, m.tag, (flags & MSG_CTRUNC) ? -EMFILE : -EBADF);
    /* Anything else is a daemon bug; it is dropped rather than guessed at. */
    return 0;
}

int launcher_main(int (*supervisor)(void))
{
    run_supervisor = supervisor;
    /* Nothing but fds 0-3: the daemon's own descriptors that were not close-on-exec must not
     * be held here for the daemon's lifetime (supervisors close them anyway). */
    close_from(SOCK_FD + 1);
    sigset_t blocked; /* for every child from its first instruction (see the header comment) */
    waited_signals(&blocked);
    sigprocmask(SIG_BLOCK, &blocked, NULL);
    signal(SIGPIPE, SIG_IGN);

    sigset_t read_here;
    sigemptyset(&read_here);
    sigaddset(&read_here, SIGCHLD);
    sigaddset(&read_here, SIGTERM);
    sigaddset(&read_here, SIGINT);
    int sfd = signalfd(-1, &read_here, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        say("launcher: signalfd: ", strerror(errno), NULL);
        return 1;
    }
    struct pollfd p[2] = {{SOCK_FD, POLLIN, 0}, {sfd, POLLIN, 0}};
    int spare_wait = SPARE_IDLE_MS;
    for (;;) {
        int ready = poll(p, 2, spare_pid ? -1 : spare_wait);
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            say("launcher: poll: ", strerror(errno), NULL);
            return 1;
        }
        if (ready == 0) { /* idle, and no spare: fork one (not in a tight loop if that fails) */
            spare_wait = make_spare() < 0 ? SPARE_RETRY_MS : SPARE_IDLE_MS;
            continue;
        }
        if (p[1].revents) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
                if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
                    return 0;
            reap();
        }
        if (p[0].revents) {
            /* One message per wake-up keeps reaping (above) from waiting behind a burst. */
            if (handle_message() < 0)
                return 0;
        }
    }
}
