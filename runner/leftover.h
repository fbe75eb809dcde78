/*
 * leftover.h: finding what an earlier, killed spotrun left running. A
 * supervisor killed with SIGKILL cannot stop its job; the job would go on
 * writing into the checkpoint directory the next run restores into. Every
 * process of a job carries SPOTRUN_CKPT_DIR=<dir> in its environment, which
 * identifies it even after setsid() or reparenting to init.
 */
#ifndef SR_LEFTOVER_H
#define SR_LEFTOVER_H

/* SIGKILL every process (other than this one) whose environment holds the
 * exact entry `entry` (e.g. "SPOTRUN_CKPT_DIR=/x/ckpt"), and wait up to 2 s
 * for them to go. Returns how many were killed, or -1 with err set when
 * some survived. Call only while holding the job's lock. */
int sr_leftover_kill(const char *entry, char *err);

#endif
