/*
 * record.h: the job's record of attempts in the store: one small JSON
 * object per attempt, J/attempts/<run>-<attempt>.json, written when the
 * attempt starts and again when it ends, so that `spotrun ls -a` can say
 * where and how each attempt ran, and for how long, even when the machine
 * vanished without a word (the record then has no end).
 */
#ifndef SR_RECORD_H
#define SR_RECORD_H

#include "provider.h"
#include "store.h"

struct sr_attempt_record {
	char run[40];		/* the run's id: start time and pid */
	int attempt;
	int vm;
	double started;		/* epoch seconds */
	double ended;		/* 0: still running, or vanished */
	char outcome[64];	/* "exit 0", "preempted", "exec failed", ... */
	int exit_code;		/* -1 if none */
	int signal;		/* the signal that killed the job (exit_code is then
				 * 128 + it); 0: none, or a record of an older version */
	long long restored_step;	/* -1: started fresh */
	int checkpoints;	/* committed during this attempt */
	int ranks;		/* processes spotrun started (0: not recorded) */
	int gpus;		/* GPUs the job was given */
	char gpu_model[96];	/* the first one's, as NVML names it ("": not known) */
	double lost;		/* seconds of its work no checkpoint held, which a
				 * later attempt did again; counted by the run of
				 * that attempt (0: none, or not yet known; absent
				 * from older records) */
	struct sr_facts facts;
};

/* Write (or overwrite) the record of r for job; 0 or -1 with err. */
int sr_record_put(struct sr_store *st, const char *job, const struct sr_attempt_record *r,
    char *err);
/* Call fn for each record of job, by run: the runs in the order their
 * first attempts started, each run's attempts in order. A record that
 * cannot be parsed is skipped (it says nothing trustworthy). */
int sr_record_list(struct sr_store *st, const char *job,
    int (*fn)(const struct sr_attempt_record *r, void *arg), void *arg, char *err);

#endif
