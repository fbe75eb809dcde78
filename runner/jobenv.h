/*
 * jobenv.h: the environment the job's processes get: spotrun's own
 * environment, then the job file's [env], then the SPOTRUN_* variables
 * (the checkpoint method's among them) and the torchrun-compatible rank
 * variables, which always win, and with GPUs CUDA_VISIBLE_DEVICES. The one
 * place that builds it: the attempt describes itself (struct
 * sr_jobenv_vars) and each of its processes (struct sr_jobenv_proc).
 */
#ifndef SR_JOBENV_H
#define SR_JOBENV_H

struct sr_jobspec;

/* What every process of an attempt gets alike. */
struct sr_jobenv_vars {
	int attempt;
	const char *ckpt_dir;
	/* The checkpoint method's own variables, KEY=VALUE, NULL-terminated
	 * (directory: SPOTRUN_CKPT_REQUEST, _DONE, _SIGNAL); NULL: none.
	 * They follow SPOTRUN_CKPT_DIR. */
	char *const *method_env;
	long long resume_step;		/* -1: fresh start */
	const char *provider;
	int world_size;			/* processes of the attempt */
	/* Appended to PYTHONPATH (the `spotrun` module of a build that was
	 * not installed: sr_default_python_dir); NULL: none. */
	const char *python_dir;
};

/* What differs between the processes of an attempt (one per GPU, later). */
struct sr_jobenv_proc {
	int rank;			/* RANK and LOCAL_RANK */
	/* The GPUs it sees: CUDA_VISIBLE_DEVICES=first_gpu,...,
	 * first_gpu+ngpus-1; ngpus 0: the variable is left as inherited. */
	int first_gpu, ngpus;
};

/* A NULL-terminated, malloc'd environment for process p of the attempt
 * described by v; free with sr_jobenv_free. */
char **sr_jobenv_build(char *const *base, const struct sr_jobspec *js,
    const struct sr_jobenv_vars *v, const struct sr_jobenv_proc *p);
void sr_jobenv_free(char **env);

#endif
