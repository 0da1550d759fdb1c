/* The job's result file: one line of compact JSON,
 *   {"state":"COMPLETED","exit_code":0,"finished_at":1700000000,"error":null}
 * written atomically (docs/behaviour.md §7.3) so the daemon sees either no result or a whole one. */
#include "job.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *state_name(enum job_state s)
{
    switch (s) {
    case JOB_COMPLETED:
        return "COMPLETED";
    case JOB_CANCELLED:
        return "CANCELLED";
    case JOB_TIMED_OUT:
        return "TIMED_OUT";
    case JOB_OUT_OF_MEMORY:
        return "OUT_OF_MEMORY";
    case JOB_FAILED:
        break;
    }
    return "FAILED";
}

/* Length of a valid UTF-8 sequence at p (at most `left` bytes), or 0 if it is not one
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_len(const unsigned char *p, size_t left)
{
    unsigned c = p[0], min;
    size_t n;
    if (c < 0x80)
        return 1;
    if ((c & 0xe0) == 0xc0) {
        n = 2;
        min = 0x80;
        c &= 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
        n = 3;
        min = 0x800;
        c &= 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
        n = 4;
        min = 0x10000;
        c &= 0x07;
    } else {
        return 0;
    }
    if (n > left)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (p[i] & 0x3fu);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    return n;
}

/* Appends s as a JSON string to out (which has room for 6 bytes per input byte + 2). Error
 * texts contain argv[0], i.e. arbitrary user bytes: valid UTF-8 is kept as is, control
 * characters are escaped, and bytes that are not UTF-8 become U+FFFD so the file stays valid
 * JSON for any input. */
static char *json_string(char *out, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t left = strlen(s);
    *out++ = '"';
    while (left) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            *out++ = '\\';
            *out++ = (char)c;
        } else if (c == '\n') {
            *out++ = '\\';
            *out++ = 'n';
        } else if (c == '\t') {
            *out++ = '\\';
            *out++ = 't';
        } else if (c == '\r') {
            *out++ = '\\';
            *out++ = 'r';
        } else if (c < 0x20 || c == 0x7f) {
            memcpy(out, "\\u00", 4);
            out[4] = hex[c >> 4];
            out[5] = hex[c & 15];
            out += 6;
        } else if (c >= 0x80) {
            size_t n = utf8_len(p, left);
            if (n == 0) {
                memcpy(out, "\\ufffd", 6);
                out += 6;
                n = 1;
            } else {
                memcpy(out, p, n);
                out += n;
            }
            p += n;
            left -= n;
            continue;
        } else {
            *out++ = (char)c;
        }
        p++;
        left--;
    }
    *out++ = '"';
    return out;
}

static int write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* fsync(2) the directory holding path, so the rename itself survives a crash. */
static int sync_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    char *dir = malloc(len + 1);
    if (!dir)
        return ENOMEM;
    memcpy(dir, path, len);
    dir[len] = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0)
        return errno;
    /* EINVAL: the file system cannot sync directories; nothing more to do there. */
    int rc = fsync(fd) < 0 && errno != EINVAL ? errno : 0;
    close(fd);
    return rc;
}

int result_write(const char *path, enum job_state state, int exit_code, const char *error,
                 time_t finished_at, const struct job_usage *usage)
{
    size_t cap = 192 + (error ? strlen(error) * 6 : 0);
    char *json = malloc(cap), *p;
    char *tmp = malloc(strlen(path) + 32);
    int fd = -1, rc = 0;
    if (!json || !tmp) {
        rc = ENOMEM;
        goto out;
    }

    p = json + snprintf(json, cap, "{\"state\":\"%s\",\"exit_code\":%d,\"finished_at\":%lld,\"error\":",
                        state_name(state), exit_code, (long long)finished_at);
    if (error) {
        p = json_string(p, error);
    } else {
        memcpy(p, "null", 4);
        p += 4;
    }
    /* What the job's cgroup measured (docs/behaviour.md §24.5), where it had one. */
    if (usage && usage->peak_memory >= 0)
        p += snprintf(p, 32, ",\"peak_memory\":%lld", (long long)usage->peak_memory);
    if (usage && usage->cpu_usec >= 0) {
        long long ms = (long long)((usage->cpu_usec + 500) / 1000);
        p += snprintf(p, 40, ",\"cpu_seconds\":%lld.%03lld", ms / 1000, ms % 1000);
    }
    memcpy(p, "}\n", 2);
    p += 2;

    /* Temp name <path-without-ext>.tmp.<pid> (jobs/7.result -> jobs/7.tmp.<pid>;
     * docs/behaviour.md §7.3): the name jobPaths().temp makes in packages/protocol/src/paths.ts,
     * which retention removes; test/unit/daemon/runner/job-files.ts fails if the two differ.
     * O_EXCL + O_NOFOLLOW: never write through something already there (a stale file from an
     * earlier process with our pid is removed once and the create retried). */
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    const char *dot = strrchr(name, '.');
    int stem = (int)(dot && dot != name ? (size_t)(dot - path) : strlen(path));
    snprintf(tmp, strlen(path) + 32, "%.*s.tmp.%ld", stem, path, (long)getpid());
    for (int attempt = 0; attempt < 2; attempt++) {
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST || attempt == 1)
            break;
        unlink(tmp);
    }
    if (fd < 0) {
        rc = errno;
        goto out;
    }
    if (write_all(fd, json, (size_t)(p - json)) < 0 || fsync(fd) < 0) {
        rc = errno;
        close(fd);
        unlink(tmp);
        goto out;
    }
    if (close(fd) < 0 && errno != EINTR) {
        rc = errno;
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, path) < 0) {
        rc = errno;
        unlink(tmp);
        goto out;
    }
    rc = sync_parent(path);
out:
    free(json);
    free(tmp);
    return rc;
}
