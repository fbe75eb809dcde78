/*
 * jobenv.h: the environment the job's processes get: spotrun's own
 * environment, then the job file's [env], then the SPOTRUN_* variables
 * (the checkpoint method's among them) and torchrun's variables for each
 * rank (doc/spotrun.1, RANKS), which always win, and with GPUs
 * CUDA_VISIBLE_DEVICES, which replaces an inherited one. The one
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
	/* The checkpoint method's variables for every process, KEY=VALUE,
	 * NULL-terminated (directory: SPOTRUN_CKPT_REQUEST, _SIGNAL); NULL:
	 * none. They follow SPOTRUN_CKPT_DIR. */
	char *const *method_env;
	long long resume_step;		/* -1: fresh start */
	const char *provider;
	/* Appended to PYTHONPATH (the `spotrun` module of a build that was
	 * not installed: sr_default_python_dir); NULL: none. */
	const char *python_dir;
	/* The ranks (ranks.h). world_size 0: launch = once, where none of
	 * torchrun's variables is spotrun's to set. */
	int world_size;
	/* A gang (doc/fleet.md): this machine's node rank and how many nodes
	 * (nodes 0 or 1: one machine). world_size is then this node's ranks
	 * (LOCAL_WORLD_SIZE); WORLD_SIZE is nodes * world_size, RANK
	 * node_rank * world_size + the local rank, as torchrun --nnodes. */
	int node_rank, nodes;
	int prev_world_size;		/* of the restored checkpoint; 0: none, not known */
	const char *master_addr;	/* MASTER_ADDR, MASTER_PORT (node 0's in a gang) */
	int master_port;
	int restart_count;		/* TORCHELASTIC_RESTART_COUNT: restarts after failures */
	int max_restarts;		/* TORCHELASTIC_MAX_RESTARTS: [retry] max_restarts */
	const char *run_id;		/* TORCHELASTIC_RUN_ID */
	int pci_order;			/* CUDA_DEVICE_ORDER=PCI_BUS_ID (ranks.h) */
	/* SPOTRUN_METRICS of the job's rank 0 (node 0's local rank 0, or the
	 * one process of launch = once); every other process gets /dev/null,
	 * so that a rank's writes go nowhere and fail nothing. NULL: /dev/null
	 * for all (a gang's other nodes). */
	const char *metrics;
};

/* What differs between the processes of an attempt. */
struct sr_jobenv_proc {
	int rank;			/* LOCAL_RANK (RANK, ROLE_RANK with one node) */
	/* CUDA_VISIBLE_DEVICES, replacing an inherited one; NULL: left as
	 * inherited (the job has no GPU). */
	const char *visible;
	/* The method's variables for this process alone (directory: its
	 * SPOTRUN_CKPT_DONE), after method_env; NULL: none. */
	char *const *method_env;
	const char *error_file;		/* TORCHELASTIC_ERROR_FILE; NULL: none */
};

/* A NULL-terminated, malloc'd environment for process p of the attempt
 * described by v; free with sr_jobenv_free. */
char **sr_jobenv_build(char *const *base, const struct sr_jobspec *js,
    const struct sr_jobenv_vars *v, const struct sr_jobenv_proc *p);
/* The environment of the job's [job] setup command (doc/fleet.md,
 * "Setup"): base and [env] as for the job, then SPOTRUN_JOB, SPOTRUN_SETUP=1
 * and SPOTRUN_PROVIDER (provider) alone, since what setup makes is shared
 * by every attempt and job with the same code and setup on the machine.
 * Malloc'd, NULL-terminated; free with sr_jobenv_free. */
char **sr_jobenv_setup(char *const *base, const struct sr_jobspec *js, const char *provider);
void sr_jobenv_free(char **env);

#endif
