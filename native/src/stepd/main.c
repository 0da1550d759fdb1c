/*
 * xlurm-stepd: one executable, two modes.
 *   xlurm-stepd             the per-job supervisor (supervisor.c), started with the job's
 *                           descriptors 0-3 (spec, log, log, lock); the spec on stdin
 *   xlurm-stepd --launcher  one per daemon: forks supervisors on request (launcher.c)
 * This file only picks the mode. A child of the launcher becomes a supervisor by calling the
 * function handed to launcher_main, so neither half includes or calls the other.
 *
 * Source files:
 *   main.c        this dispatch
 *   supervisor.c  descriptors, signals, identity, vfork/exec, supervision, reaping (supervisor.h)
 *   spec.c        the job spec read from stdin (job.h)
 *   result.c      the result file, compact JSON written atomically (job.h)
 *   launcher.c    the launcher's loop and its spare (launcher.h; the messages it exchanges with
 *                 the daemon's addon: ../launch-proto.h)
 *   util.c        error output, strings, numbers, descriptors, the waited signals (util.h)
 */
#include "launcher.h"
#include "supervisor.h"
#include "util.h"

#include <stddef.h>
#include <string.h>

int main(int argc, char **argv)
{
    ensure_std_fds();
    if (argc == 2 && strcmp(argv[1], "--launcher") == 0)
        return launcher_main(supervisor_main);
    /* The job spec arrives on stdin only; other arguments are a caller error. */
    if (argc > 1) {
        say("invalid worker arguments", NULL, NULL);
        return 1;
    }
    return supervisor_main();
}
