/*
 * The per-job supervisor (supervisor.c), what a plain `xlurm-stepd` runs.
 */
#ifndef XLURM_STEPD_SUPERVISOR_H
#define XLURM_STEPD_SUPERVISOR_H

/* From the inherited descriptors 0-3 (spec, log, log, lock) to the job's result; returns the
 * exit status. Entered by main() in an exec'd xlurm-stepd, or by a child the launcher forked,
 * which arrives with the same descriptors, a session of its own and the same signals blocked. */
int supervisor_main(void);

#endif
