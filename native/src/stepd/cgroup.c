/*
 * The job's cgroups at its end (docs/behaviour.md §24.5, §24.6): what they measured, read
 * once every process of the job is gone, and then their removal, so a cgroup never outlives
 * its job even when no daemon is there to collect it. The daemon made and configured them
 * (packages/daemon/src/resources/cgroup.ts) and removes what is left (a supervisor killed by
 * SIGKILL writes nothing).
 */
#include "job.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The contents of <dir>/<name> (NUL-terminated, truncated to the buffer), or -1. */
static int read_file(const char *dir, const char *name, char *buf, size_t size)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n;
    do
        n = read(fd, buf, size - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* A plain decimal file ("max" and the like are not numbers: -1). */
static int64_t read_number(const char *dir, const char *name)
{
    char buf[64], *end;
    if (read_file(dir, name, buf, sizeof buf) < 0 || buf[0] < '0' || buf[0] > '9')
        return -1;
    unsigned long long v = strtoull(buf, &end, 10);
    return *end == '\0' || *end == '\n' ? (int64_t)(v > INT64_MAX ? INT64_MAX : v) : -1;
}

/* The value of the line "<key> <n>" of a flat-keyed file, or -1. */
static int64_t read_key(const char *dir, const char *name, const char *key)
{
    char buf[4096];
    if (read_file(dir, name, buf, sizeof buf) < 0)
        return -1;
    size_t k = strlen(key);
    for (char *line = buf; line && *line;) {
        if (strncmp(line, key, k) == 0 && line[k] == ' ')
            return (int64_t)strtoull(line + k + 1, NULL, 10);
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return -1;
}

void cgroup_usage(const struct job_spec *spec, struct job_usage *u)
{
    u->peak_memory = u->cpu_usec = u->oom_kills = u->mem_limit = -1;
    for (size_t i = 0; i < spec->ncgroups; i++) {
        const char *d = spec->cgroup_dirs[i];
        int64_t v;
        /* v2 (the unified directory holds memory) or v1's memory controller. */
        if (u->peak_memory < 0 && ((v = read_number(d, "memory.peak")) >= 0 || (v = read_number(d, "memory.max_usage_in_bytes")) >= 0))
            u->peak_memory = v;
        if (u->oom_kills < 0 && ((v = read_key(d, "memory.events", "oom_kill")) >= 0 || (v = read_key(d, "memory.oom_control", "oom_kill")) >= 0))
            u->oom_kills = v;
        /* v1 writes a huge number for "no limit". */
        if (u->mem_limit < 0 && ((v = read_number(d, "memory.max")) >= 0 || ((v = read_number(d, "memory.limit_in_bytes")) >= 0 && v < (INT64_C(1) << 62))))
            u->mem_limit = v;
        /* The unified cpu.stat (also on the hybrid layout), else v1 cpuacct. */
        if (u->cpu_usec < 0 && (v = read_key(d, "cpu.stat", "usage_usec")) >= 0)
            u->cpu_usec = v;
    }
    if (u->cpu_usec < 0) {
        for (size_t i = 0; i < spec->ncgroups; i++) {
            int64_t ns = read_number(spec->cgroup_dirs[i], "cpuacct.usage");
            if (ns >= 0) {
                u->cpu_usec = ns / 1000;
                break;
            }
        }
    }
}

void cgroup_remove(const struct job_spec *spec)
{
    for (size_t i = spec->ncgroups; i-- > 0;)
        rmdir(spec->cgroup_dirs[i]); /* EBUSY (still exiting): the daemon removes it later */
}

/* Like the daemon's formatSize (packages/protocol/src/size.ts): the largest unit that leaves at
 * least 1, one decimal, dropped when 0 unless fixed. */
static void format_size(char *out, size_t size, int64_t bytes, int fixed)
{
    static const char units[] = "TGMK";
    for (int i = 0; i < 4; i++) {
        uint64_t per = (uint64_t)1 << (10 * (4 - i));
        if ((uint64_t)bytes >= per) {
            uint64_t tenths = ((uint64_t)bytes * 10 + per / 2) / per;
            if (fixed || tenths % 10)
                snprintf(out, size, "%llu.%llu%c", (unsigned long long)(tenths / 10), (unsigned long long)(tenths % 10), units[i]);
            else
                snprintf(out, size, "%llu%c", (unsigned long long)(tenths / 10), units[i]);
            return;
        }
    }
    snprintf(out, size, "%lld", (long long)bytes);
}

char *oom_error(const struct job_usage *u)
{
    char limit[32], peak[32];
    format_size(limit, sizeof limit, u->mem_limit, 0);
    format_size(peak, sizeof peak, u->peak_memory >= 0 ? u->peak_memory : u->mem_limit, 1);
    size_t n = strlen(limit) + strlen(peak) + 80;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "out of memory: the job exceeded its memory limit of %s (peak %s)", limit, peak);
    return s;
}
