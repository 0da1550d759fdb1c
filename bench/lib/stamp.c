/*
 * The submit -> start probe (bench/measures/latency.js): prints the wall clock, as
 * seconds.nanoseconds like `date +%s.%N`, as the first thing it does. Linked statically, it
 * prints within microseconds of its execve(2): no loader, no libraries, no locale.
 */
#include <stdio.h>
#include <time.h>

int main(void)
{
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0)
        return 1;
    printf("%lld.%09ld\n", (long long)now.tv_sec, now.tv_nsec);
    return 0;
}
