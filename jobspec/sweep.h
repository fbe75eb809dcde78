/*
 * sweep.h: a sweep file's trials. A job file with a [sweep] section is a
 * sweep: its grid, the cartesian product of every parameter's values (the
 * first parameter varying slowest, the last fastest), is one trial per
 * point, each a job of its own:
 *  - named NAME.NNN: NAME the sweep's name, NNN the trial's number from 1,
 *    zero-padded to the width of the number of trials (12 trials: .01 to
 *    .12);
 *  - its command and [env] values with each ${name} replaced by the
 *    value of parameter name ($${ stands for a literal ${), and every
 *    parameter in its environment as SPOTRUN_PARAM_<NAME> (the name in
 *    upper case);
 *  - written out as a job file of its own (sr_sweep_trial): the sweep's
 *    file with those lines rewritten, [sweep] commented out, a header
 *    naming the sweep and the parameters, and the SPOTRUN_PARAM_ variables
 *    in an [env] at the end. It parses back (sr_jobspec_parse, same
 *    directory) to the trial's spec. This is what `spotrun submit` puts in
 *    the queue as Q/jobs/ID/spec.ini (doc/fleet.md).
 * Content ids: the sweep's is the first 16 hex digits of the SHA-256 of
 * the job file's bytes (`sha256sum FILE | cut -c1-16`), a trial's is the
 * sweep's id, '.', and the trial's number (5b3c0e1f2a4d6e8f.03); each
 * trial's job file names the sweep's in its header, so that any change to
 * the file shows in every trial. The queue knows a trial by its name
 * (NAME.NNN, what users type), and `spotrun submit` tells the same file
 * submitted again from a changed one by comparing the trials' job files.
 *
 * The job file parser validates all of it (jobspec-sweep.c), so a spec
 * that loaded without errors expands without any.
 */
#ifndef SR_SWEEP_H
#define SR_SWEEP_H

#include <stddef.h>

struct sr_jobspec;

#define SR_SWEEP_TRIALS_MAX	10000	/* trials of one sweep (AWS Batch arrays: 10,000) */
#define SR_SWEEP_PARAMS_MAX	100	/* parameters of one sweep */
#define SR_SWEEP_NAME_MAX	64	/* characters of a parameter's name */
#define SR_SWEEP_VALUE_MAX	4096	/* bytes of one value */
#define SR_SWEEP_ID_LEN		16	/* hex digits of a sweep's id */
/* sr_sweep_subst's trial for "check the references only". */
#define SR_SWEEP_CHECK		((size_t)-1)

/* How many trials js's [sweep] makes: 0 when js has none (a plain job
 * file); the product of the numbers of values, SIZE_MAX if that overflows. */
size_t sr_sweep_count(const struct sr_jobspec *js);

/* The value of parameter k (js->sweep[k]) in trial t (0-based, below
 * sr_sweep_count). */
const char *sr_sweep_value(const struct sr_jobspec *js, size_t t, size_t k);

/* The trial whose values are the longest, which makes the longest
 * command, [env] values and job file of all trials. */
size_t sr_sweep_longest(const struct sr_jobspec *js);

/* The name of trial t: NAME.NNN, as above, into name (SR_JOBSPEC_NAME_MAX
 * + 1 bytes). -1 with err when it would be longer than a job name may be
 * (the parser refuses such a sweep). */
int sr_sweep_trial_name(const struct sr_jobspec *js, size_t t, char *name, char *err);

/*
 * s with every ${name} replaced by trial t's value of parameter name and
 * every $${ by ${, malloc'd into *out. With t = SR_SWEEP_CHECK only the
 * references are checked and *out is left alone (out may be NULL). -1
 * with err (no "verb object:" prefix; the parser adds the key) for a
 * reference to no parameter, a ${ that is not a reference, or a result
 * longer than SR_JOBSPEC_LINE_MAX bytes.
 */
int sr_sweep_subst(const struct sr_jobspec *js, size_t t, const char *s, char **out, char *err);

/* The sweep's id of the job file text (len bytes): SR_SWEEP_ID_LEN hex
 * digits and a NUL into id. */
void sr_sweep_id(const char *text, size_t len, char id[SR_SWEEP_ID_LEN + 1]);

/* One trial, expanded. */
struct sr_sweep_trial {
	size_t index;		/* 0-based; the number in its name is index + 1 */
	char *name;		/* NAME.NNN */
	char *id;		/* SWEEPID.NNN */
	const char **values;	/* js->nsweep values, js->sweep[k]'s for this trial
				 * (pointers into js) */
	char *ini;		/* its job file, NUL-terminated */
	size_t ini_len;
};

/* Expand trial t of js (a spec as sr_jobspec_load returned it: it holds
 * the file's text) into *tr; free it with sr_sweep_trial_free. -1 with
 * err when js has no such trial or the trial cannot be written (never for
 * a spec the parser accepted). Deterministic: the same spec, the same
 * bytes. */
int sr_sweep_trial(const struct sr_jobspec *js, size_t t, struct sr_sweep_trial *tr, char *err);
/* Free what tr holds; an all-zero tr is fine. */
void sr_sweep_trial_free(struct sr_sweep_trial *tr);

#endif
