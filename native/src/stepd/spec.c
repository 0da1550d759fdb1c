/* The job spec, read from stdin (an unlinked file the daemon wrote; never argv, which every user
 * can read in ps). Format: NUL-terminated byte strings, in order:
 *   "XLURM-STEPD-5", job_id, result_path, cancel_path, uid, gid, owner_name,
 *   ngroups, groups[ngroups] (the owner's supplementary groups, gid included, as the daemon
 *   resolved them when it launched the job: the supervisor and the job's child never load NSS
 *   modules, which cost milliseconds per job and ~0.5 MiB per supervisor),
 *   switch_user ("1"|"0"), cwd, time_limit_secs ("0" = none), kill_grace_secs,
 *   ncgroups, cgroup_dirs[ncgroups] (absolute: the job's cgroup in each hierarchy, which the
 *   payload's child joins before it execs), cgroup_kill (the unified directory's cgroup.kill,
 *   or "" where there is none), private_tmp_bytes (the size of each of the job's own tmpfs /tmp
 *   and /dev/shm, in a mount namespace of its own; "0": none), argc (>= 1), argv[argc],
 *   envc, env[envc] ("KEY=VALUE", arbitrary bytes)
 * and nothing after the last string. */
#include "job.h"

#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* More than any execve(2) could take (argv + env are limited to a quarter of the stack limit,
 * and a single string to 128 KiB), so a valid job always fits. */
#define SPEC_MAX_BYTES (64u << 20)

struct cursor {
    char *buf;
    size_t len;
    size_t pos;
};

/* The next NUL-terminated string, or NULL when the input ends without one. */
static char *next(struct cursor *c)
{
    if (c->pos >= c->len)
        return NULL;
    char *s = c->buf + c->pos;
    char *nul = memchr(s, '\0', c->len - c->pos);
    if (!nul)
        return NULL;
    c->pos = (size_t)(nul - c->buf) + 1;
    return s;
}

static int next_u64(struct cursor *c, uint64_t max, uint64_t *out)
{
    char *s = next(c);
    return s ? parse_u64(s, max, out) : -1;
}

static int read_all(int fd, char **bufp, size_t *lenp)
{
    size_t cap = 16384, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return -1;
    for (;;) {
        if (len == cap) {
            if (cap >= SPEC_MAX_BYTES)
                goto fail;
            char *bigger = realloc(buf, cap * 2);
            if (!bigger)
                goto fail;
            buf = bigger;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    *bufp = buf;
    *lenp = len;
    return 0;
fail:
    free(buf);
    return -1;
}

/* A vector of `count` strings, NULL-terminated. count was checked against the bytes left, so
 * a forged count cannot make us allocate more than the input's size in pointers. */
static char **next_vector(struct cursor *c, size_t count)
{
    if (count > c->len - c->pos)
        return NULL;
    char **v = malloc((count + 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        v[i] = next(c);
        if (!v[i]) {
            free(v);
            return NULL;
        }
    }
    v[count] = NULL;
    return v;
}

int spec_read(int fd, struct job_spec *spec)
{
    struct cursor c = {0};
    uint64_t v;
    char *s;

    memset(spec, 0, sizeof *spec);
    if (read_all(fd, &c.buf, &c.len) < 0)
        return -1;

    if (!(s = next(&c)) || strcmp(s, STEPD_SPEC_MAGIC) != 0)
        return -1;
    if (next_u64(&c, UINT64_MAX, &spec->job_id) < 0)
        return -1;
    if (!(s = next(&c)) || s[0] != '/')
        return -1;
    spec->result_path = s;
    if (!(s = next(&c)) || s[0] != '/')
        return -1;
    spec->cancel_path = s;
    /* (uid_t)-1 / (gid_t)-1 mean "unchanged" to setresuid/setresgid: never a valid owner. */
    if (next_u64(&c, (uid_t)-2, &v) < 0)
        return -1;
    spec->uid = (uid_t)v;
    if (next_u64(&c, (gid_t)-2, &v) < 0)
        return -1;
    spec->gid = (gid_t)v;
    if (!(s = next(&c)) || s[0] == '\0')
        return -1;
    spec->owner = s;
    /* NGROUPS_MAX is 65536 on Linux; the count is checked against the bytes left as well. */
    if (next_u64(&c, 65536, &v) < 0 || v > c.len - c.pos)
        return -1;
    spec->ngroups = (size_t)v;
    spec->groups = malloc((spec->ngroups ? spec->ngroups : 1) * sizeof *spec->groups);
    if (!spec->groups)
        return -1;
    for (size_t i = 0; i < spec->ngroups; i++) {
        if (next_u64(&c, (gid_t)-2, &v) < 0)
            return -1;
        spec->groups[i] = (gid_t)v;
    }
    if (next_u64(&c, 1, &v) < 0)
        return -1;
    spec->switch_user = (int)v;
    if (!(s = next(&c)) || s[0] == '\0')
        return -1;
    spec->cwd = s;
    /* Capped so that deadlines in nanoseconds cannot overflow (136 years). */
    if (next_u64(&c, UINT32_MAX, &spec->time_limit) < 0)
        return -1;
    if (next_u64(&c, UINT32_MAX, &spec->kill_grace) < 0)
        return -1;
    /* A handful of hierarchies at most; the count is checked against the bytes left as well. */
    if (next_u64(&c, 64, &v) < 0 || v > c.len - c.pos)
        return -1;
    spec->ncgroups = (size_t)v;
    if (!(spec->cgroup_dirs = next_vector(&c, spec->ncgroups)))
        return -1;
    spec->cgroup_procs = malloc((spec->ncgroups + 1) * sizeof *spec->cgroup_procs);
    if (!spec->cgroup_procs)
        return -1;
    for (size_t i = 0; i < spec->ncgroups; i++) {
        if (spec->cgroup_dirs[i][0] != '/')
            return -1;
        spec->cgroup_procs[i] = str_join(spec->cgroup_dirs[i], "/cgroup.procs", NULL);
        if (str_is_static(spec->cgroup_procs[i]))
            return -1;
    }
    spec->cgroup_procs[spec->ncgroups] = NULL;
    if (!(s = next(&c)) || (s[0] != '\0' && s[0] != '/'))
        return -1;
    spec->cgroup_kill = s[0] ? s : NULL;
    /* Up to 2^50 bytes (1 PiB): more than any host has, and the option string's size stays small. */
    if (next_u64(&c, UINT64_C(1) << 50, &spec->private_tmp) < 0)
        return -1;
    if (next_u64(&c, SIZE_MAX / sizeof(char *) - 1, &v) < 0 || v < 1)
        return -1;
    spec->argc = (size_t)v;
    if (!(spec->argv = next_vector(&c, spec->argc)))
        return -1;
    if (next_u64(&c, SIZE_MAX / sizeof(char *) - 1, &v) < 0)
        return -1;
    spec->envc = (size_t)v;
    if (!(spec->envp = next_vector(&c, spec->envc)))
        return -1;
    for (size_t i = 0; i < spec->envc; i++) {
        const char *eq = strchr(spec->envp[i], '=');
        if (!eq || eq == spec->envp[i])
            return -1;
    }
    if (c.pos != c.len)
        return -1;
    return 0;
}
