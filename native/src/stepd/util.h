/*
 * Helpers of both modes of xlurm-stepd (util.c): error output, strings and numbers,
 * descriptors, and the signals a supervisor waits for.
 */
#ifndef XLURM_STEPD_UTIL_H
#define XLURM_STEPD_UTIL_H

#include <signal.h>
#include <stdint.h>

/* Writes "xlurm: " a b c "\n" to stderr (the job log) in one write; b and c may be NULL. */
void say(const char *a, const char *b, const char *c);

/* Joins up to three strings into a new heap string; never NULL (falls back to a static
 * "out of memory" text, which must then not be freed: check with str_is_static). */
char *str_join(const char *a, const char *b, const char *c);
int str_is_static(const char *s);

/* Parses a plain decimal (digits only, no sign or spaces) no larger than max. 0 on success. */
int parse_u64(const char *s, uint64_t max, uint64_t *out);

/* Opens /dev/null on whichever of fds 0-2 is closed. Run first, before anything is opened, or
 * a pipe or result file could land on them (and a payload's stdout could end up being the
 * supervisor's exec-error pipe). */
void ensure_std_fds(void);

/* Closes every descriptor from lowfd up (close_range, or /proc/self/fd where it is missing). */
void close_from(int lowfd);

/* The signals a supervisor takes synchronously (sigtimedwait) instead of by handler: SIGCHLD
 * wakes its supervision loop; the cancel signals (is_cancel_signal) are cancellation requests;
 * SIGHUP is ignored (there is no terminal, but someone might still send it). Both modes block
 * them from their start: an exec'd supervisor so that an early cancel is remembered instead of
 * killing it before a result is written, the launcher so that every child it forks has them
 * blocked from its first instruction. */
void waited_signals(sigset_t *set);

/* SIGTERM, SIGINT and SIGUSR1: the cancellation requests among the waited signals. */
int is_cancel_signal(int sig);

#endif
