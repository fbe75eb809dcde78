/*
 * method.h: the ways of taking a checkpoint ([checkpoint] mode) as the
 * supervisor sees them.
 */
#ifndef SR_METHOD_H
#define SR_METHOD_H

/* Why a checkpoint is asked for. */
enum sr_ckpt_reason {
	SR_REASON_PERIODIC,	/* interval elapsed */
	SR_REASON_NOTICE,	/* a preemption notice: due by its deadline minus margin */
	SR_REASON_EARLY		/* an early warning (rebalance, migrate): the job goes on */
};

/* "periodic", "notice", "early": the word the timeline shows and the
 * request file carries (doc/spotrun.1, CHECKPOINT PROTOCOL). */
const char *sr_ckpt_reason_name(enum sr_ckpt_reason reason);

#endif
