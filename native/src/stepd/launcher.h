/*
 * `xlurm-stepd --launcher` (launcher.c): forks supervisors for the daemon. The messages it
 * exchanges with the daemon are in ../launch-proto.h.
 */
#ifndef XLURM_STEPD_LAUNCHER_H
#define XLURM_STEPD_LAUNCHER_H

/* The launcher's loop; returns its exit status. Each child it forks for a job, once the job's
 * four descriptors are its fds 0-3 and it leads a session of its own, exits with what
 * `supervisor` returns: main.c passes the supervisor in, so the launcher knows nothing of what
 * a supervisor does. */
int launcher_main(int (*supervisor)(void));

#endif
