/*
 * The daemon <-> launcher protocol: one struct launch_msg per SOCK_SEQPACKET datagram, in the
 * host's byte order (both ends run on the same machine). Its two ends are the launcher
 * (stepd/launcher.c, `xlurm-stepd --launcher`) and the daemon's addon (addon/launcher.cc);
 * this header belongs to neither, and holds nothing but the messages and how one is sent.
 */
#ifndef XLURM_LAUNCH_PROTO_H
#define XLURM_LAUNCH_PROTO_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

enum launch_op {
    LAUNCH_SPAWN = 1,   /* daemon -> launcher, with the supervisor's fds 0-3 (SCM_RIGHTS) */
    LAUNCH_SIGNAL = 2,  /* daemon -> launcher: value = signal number */
    LAUNCH_SPAWNED = 3, /* launcher -> daemon: value = pid, 0 (started, not tracked) or -errno */
    LAUNCH_EXITED = 4,  /* launcher -> daemon: value = wait status */
};

struct launch_msg {
    uint32_t op;
    uint32_t tag; /* the daemon's name for the supervisor (its job id) */
    int32_t value;
};

/* Sends one message on `fd`, with up to four descriptors (SCM_RIGHTS), retrying on EINTR.
 * Returns 0, or -1 with errno (EIO for a short send). `flags` add to MSG_NOSIGNAL. */
static inline int launch_send(int fd, const struct launch_msg *m, const int *fds, int nfds, int flags)
{
    struct iovec iov = {(void *)m, sizeof *m};
    union {
        char buf[CMSG_SPACE(sizeof(int) * 4)];
        struct cmsghdr align;
    } control;
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (nfds > 0) {
        memset(control.buf, 0, sizeof control.buf);
        msg.msg_control = control.buf;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
    }
    ssize_t n;
    do
        n = sendmsg(fd, &msg, flags | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof *m)
        return 0;
    if (n >= 0)
        errno = EIO;
    return -1;
}

#endif
