/*
 * jobenv.h: the environment the job's processes get: spotrun's own
 * environment, then the job file's [env], then the SPOTRUN_* variables and
 * the torchrun-compatible rank variables, which always win.
 */
#ifndef SR_JOBENV_H
#define SR_JOBENV_H

struct sr_jobspec;

struct sr_jobenv_vars {
	int attempt;
	const char *ckpt_dir;
	const char *request_path;
	const char *done_path;
	const char *signal_name;	/* "USR1" or "none" */
	long long resume_step;		/* -1: fresh start */
	const char *provider;
	int rank, world_size;
};

/* A NULL-terminated, malloc'd environment; free with sr_jobenv_free. */
char **sr_jobenv_build(char *const *base, const struct sr_jobspec *js,
    const struct sr_jobenv_vars *v);
void sr_jobenv_free(char **env);

#endif
