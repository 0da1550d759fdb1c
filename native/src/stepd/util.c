/* Small helpers of xlurm-stepd: unbuffered error output and strict number parsing. No stdio:
 * the log is shared with the job (O_APPEND), so every message is one write(2). */
#include "stepd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

void say(const char *a, const char *b, const char *c)
{
    struct iovec iov[5];
    int n = 0;
    iov[n].iov_base = (void *)"xlurm: ";
    iov[n++].iov_len = 7;
    iov[n].iov_base = (void *)a;
    iov[n++].iov_len = strlen(a);
    if (b) {
        iov[n].iov_base = (void *)b;
        iov[n++].iov_len = strlen(b);
    }
    if (c) {
        iov[n].iov_base = (void *)c;
        iov[n++].iov_len = strlen(c);
    }
    iov[n].iov_base = (void *)"\n";
    iov[n++].iov_len = 1;
    /* Best effort: there is nowhere else to report a failure to write the log. */
    while (writev(STDERR_FILENO, iov, n) < 0 && errno == EINTR) {
    }
}

static char oom_text[] = "out of memory";

char *str_join(const char *a, const char *b, const char *c)
{
    size_t la = a ? strlen(a) : 0, lb = b ? strlen(b) : 0, lc = c ? strlen(c) : 0;
    char *s = malloc(la + lb + lc + 1);
    if (!s)
        return oom_text;
    if (la)
        memcpy(s, a, la);
    if (lb)
        memcpy(s + la, b, lb);
    if (lc)
        memcpy(s + la + lb, c, lc);
    s[la + lb + lc] = '\0';
    return s;
}

int str_is_static(const char *s)
{
    return s == oom_text;
}

int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (*s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (d > max || v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}
