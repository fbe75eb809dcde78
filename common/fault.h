/*
 * fault.h: named crash points for the fault tests. When the environment
 * variable SPOTRUN_FAULT names a point (for example "ckpt-manifest"), the
 * process kills itself with SIGKILL on reaching it, so tests can prove that a
 * crash at any step of a checkpoint leaves the store consistent.
 */
#ifndef SR_FAULT_H
#define SR_FAULT_H

/* Kill this process with SIGKILL if SPOTRUN_FAULT names this point. */
void sr_fault(const char *point);

#endif
