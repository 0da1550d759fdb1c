/*
 * The daemon <-> launcher protocol (launcher.c): one struct launch_msg per SOCK_SEQPACKET
 * datagram, in the host's byte order (both ends run on the same machine). Shared by
 * xlurm-stepd and the daemon's addon (native/src/addon/launcher.cc).
 */
#ifndef XLURM_LAUNCHER_H
#define XLURM_LAUNCHER_H

#include <stdint.h>

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

#ifdef __cplusplus
extern "C" {
#endif
/* The launcher's loop; returns its exit status. */
int launcher_main(void);
/* The supervisor proper (stepd.c): what main() runs, also entered by a launcher's child. */
int supervisor_main(void);
#ifdef __cplusplus
}
#endif

#endif
