/* Small helpers of both modes of xlurm-stepd (util.h). No stdio: the log is shared with the
 * job (O_APPEND), so every message is one write(2). */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
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

void ensure_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0 && nul != fd) {
            dup2(nul, fd);
            close(nul);
        }
    }
}

/* Anything the daemon leaked by mistake must neither be held for a job's (or the daemon's)
 * lifetime nor reach the job. close_range(2) (Linux 5.9), else walk /proc/self/fd. */
void close_from(int lowfd)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lowfd, ~0u, 0u) == 0)
        return;
#endif
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    int self = dirfd(d);
    struct dirent *e;
    /* Collect first: closing while iterating would disturb the directory stream. */
    int fds[256];
    size_t n;
    do {
        n = 0;
        rewinddir(d);
        while ((e = readdir(d)) && n < sizeof fds / sizeof fds[0]) {
            uint64_t v;
            if (parse_u64(e->d_name, 1u << 30, &v) == 0 && (int)v >= lowfd && (int)v != self)
                fds[n++] = (int)v;
        }
        for (size_t i = 0; i < n; i++)
            close(fds[i]);
    } while (n == sizeof fds / sizeof fds[0]);
    closedir(d);
}

static const int cancel_signals[] = {SIGTERM, SIGINT, SIGUSR1};

int is_cancel_signal(int sig)
{
    for (size_t i = 0; i < sizeof cancel_signals / sizeof cancel_signals[0]; i++)
        if (sig == cancel_signals[i])
            return 1;
    return 0;
}

void waited_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGCHLD);
    sigaddset(set, SIGHUP);
    for (size_t i = 0; i < sizeof cancel_signals / sizeof cancel_signals[0]; i++)
        sigaddset(set, cancel_signals[i]);
}
