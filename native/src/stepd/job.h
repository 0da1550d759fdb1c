/*
 * The supervisor's job: the spec it reads from stdin (spec.c) and the result file it writes
 * (result.c).
 */
#ifndef XLURM_STEPD_JOB_H
#define XLURM_STEPD_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Magic first string of the spec; bump the number on any format change. */
#define STEPD_SPEC_MAGIC "XLURM-STEPD-5"

/* The job spec. Every string points into one buffer owned by spec_read's caller for the rest
 * of the process's life. argv and envp are NULL-terminated, ready for execvp/environ. */
struct job_spec {
    uint64_t job_id;
    const char *result_path; /* absolute; NULL until parsed (also on an invalid spec) */
    const char *cancel_path; /* absolute */
    uid_t uid;
    gid_t gid;
    const char *owner;       /* account name recorded at submission */
    size_t ngroups;          /* the owner's supplementary groups, resolved by the daemon at launch */
    gid_t *groups;
    int switch_user;         /* 1: become uid/gid with those groups; 0: must already be them */
    const char *cwd;
    uint64_t time_limit;     /* seconds; 0 = none */
    uint64_t kill_grace;     /* seconds from SIGTERM to SIGKILL on cancel and time-out */
    size_t ncgroups;         /* the job's cgroup directories (one per hierarchy; 0: none) */
    char **cgroup_dirs;
    char **cgroup_procs;     /* "<dir>/cgroup.procs" of each, made before the payload's vfork */
    const char *cgroup_kill; /* "<unified dir>/cgroup.kill", or NULL: kill each listed process */
    uint64_t private_tmp;    /* bytes of each private tmpfs /tmp and /dev/shm (docs/behaviour.md §28.12); 0: none */
    size_t argc;
    char **argv;
    size_t envc;
    char **envp;
};

/* Reads fd to EOF and parses the spec. Returns 0 when valid, -1 when not; on -1,
 * spec->result_path is still set when the spec got that far (so a FAILED result can be
 * written). */
int spec_read(int fd, struct job_spec *spec);

enum job_state { JOB_COMPLETED, JOB_FAILED, JOB_CANCELLED, JOB_TIMED_OUT, JOB_OUT_OF_MEMORY };

/* What the job's cgroups measured (cgroup.c); -1 where unknown or there are none. */
struct job_usage {
    int64_t peak_memory; /* bytes */
    int64_t cpu_usec;
    int64_t oom_kills;   /* processes the kernel killed for the cgroup's memory limit */
    int64_t mem_limit;   /* bytes */
};

/* Reads the usage of the job's cgroups (once they are empty). */
void cgroup_usage(const struct job_spec *spec, struct job_usage *u);
/* Removes the job's cgroup directories (deepest hierarchy order reversed; errors ignored). */
void cgroup_remove(const struct job_spec *spec);
/* "out of memory: the job exceeded its memory limit of 16G (peak 16.0G)" (heap, or NULL). */
char *oom_error(const struct job_usage *u);

/* Writes the result atomically (<path-without-ext>.tmp.<pid>, fsync, rename, fsync dir).
 * error may be NULL (JSON null); finished_at is the unix time the job ended. Returns 0, or an
 * errno value. */
int result_write(const char *path, enum job_state state, int exit_code, const char *error,
                 time_t finished_at, const struct job_usage *usage);

#endif
