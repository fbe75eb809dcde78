/*
 * jobspec.h: the job file (INI, parsed with inih) as a validated struct.
 * Every key, its type, default and an example are in doc/spotrun-job.5.
 * Parsing collects every error ("FILE:LINE: message naming the key and
 * what would be valid") instead of stopping at the first, so `spotrun check`
 * shows them all and nothing is started while any remains.
 */
#ifndef SR_JOBSPEC_H
#define SR_JOBSPEC_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"
#include "provider.h"

#define SR_JOBSPEC_FILE_MAX	(1024 * 1024)	/* bytes of a job file: a short text file */
#define SR_JOBSPEC_LINE_MAX	65536		/* bytes of a line, without its newline */
#define SR_JOBSPEC_NAME_MAX	64		/* characters of a job name */

#define SR_JOBSPEC_METHODS_MAX	8	/* checkpoint methods a caller may name */

/* What a job file may name that modules above this one define, filled by
 * the caller (the runner's sr_method_names), so that a new one is a line in
 * that module's table and nothing here. */
struct sr_jobspec_names {
	/* The checkpoint methods, the words of [checkpoint] mode, in table
	 * order and NULL-terminated; the first is the default. */
	const char *methods[SR_JOBSPEC_METHODS_MAX + 1];
};

/* [resources] launch: who starts the job's processes. */
enum sr_launch_mode {
	SR_LAUNCH_RANKS = 0,	/* spotrun: one per GPU, or procs, each a rank with
				 * torchrun's environment (the default) */
	SR_LAUNCH_ONCE		/* one process, which brings its own launcher:
				 * spotrun sets no rank variable */
};

/* [job] container_runtime: which container runtime runs the image. */
enum sr_container_runtime {
	SR_CONTAINER_AUTO = 0,	/* podman if it is on PATH, else docker (the default) */
	SR_CONTAINER_PODMAN,
	SR_CONTAINER_DOCKER
};

#define SR_JOBSPEC_PROCS_MAX	256	/* processes (ranks) of one job on a machine */
#define SR_JOBSPEC_WORKDIR_MAX	((size_t)1 << 30)	/* workdir_max's default: 1 GiB */
#define SR_JOBSPEC_NODES_MAX	64	/* machines of one job (a gang, doc/fleet.md) */

/* One line of [data] (doc/spotrun-job.5): a store's object, or every
 * object under a prefix, copied to the machine before the job starts
 * (runner/data.h). */
struct sr_data_entry {
	char *dest;		/* the key, tidied (no ".", no doubled or trailing
				 * '/'): absolute, or relative to the working
				 * directory, which an agent chooses at the run */
	char *url;		/* as written; ending in '/': a folder */
	int line;
};

/* One parameter of [sweep] (runner/sweep.h makes the trials). */
struct sr_sweep_param {
	char *key;		/* as written: ${key} in the command and [env] */
	char **values;		/* expanded: "1..3" -> "1","2","3"; at least one */
	size_t nvalues;
	int line;
};

struct sr_jobspec {
	char *path;		/* the job file as given */
	char *dir;		/* absolute directory of the job file */

	/* [job] */
	char *name;		/* required; [A-Za-z0-9][A-Za-z0-9._-]{0,63} */
	char *command;		/* required */
	char **argv;		/* command split into words (NULL-terminated); with
				 * shell = yes: { "/bin/sh", "-c", command }; in a
				 * sweep file, the first trial's */
	int shell;		/* default no */
	char *workdir;		/* absolute; default: the job file's directory */
	/* spotrun submit ships workdir to the agents as a snapshot (default
	 * yes; no: an agent runs the job in workdir as a path of its machine),
	 * of at most workdir_max bytes (default SR_JOBSPEC_WORKDIR_MAX) */
	int ship_workdir;
	size_t workdir_max;
	/* run once per machine by an agent before the job's first attempt
	 * there, with /bin/sh -c in the working directory (doc/fleet.md,
	 * "Setup"); NULL: none */
	char *setup;
	/* image: every rank runs in a container of this image (a reference
	 * as docker and podman take it, runner/container.h); NULL: none.
	 * container_runtime: the runtime that runs it (default auto) */
	char *image;
	enum sr_container_runtime container_runtime;
	char **env;		/* KEY=VALUE from [env], NULL-terminated */

	/* [resources] */
	int gpus_min, gpus_max;	/* "8" or "1-8"; default 0 (CPU only) */
	char *gpu_type;		/* optional */
	/* procs: the processes (ranks) of a CPU job, "4" or "2-8" (as many
	 * as there are CPUs within the range); 0-0: not set (one per GPU
	 * with GPUs, else 1). Not with gpus, nor with launch = once. */
	int procs_min, procs_max;
	enum sr_launch_mode launch;	/* default ranks */
	/* nodes: the machines the job runs on together, "2" or "2-4" (a
	 * gang of agents, doc/fleet.md, as many as join within the range);
	 * default 1-1. More than one only with launch = ranks. */
	int nodes_min, nodes_max;

	/* [checkpoint] */
	char *mode;		/* the checkpoint method, one of the names given to
				 * the parse (default: the first, directory) */
	double interval;	/* seconds; 0 = no periodic checkpoints (default 0) */
	char *store;		/* URL; default file://$XDG_DATA_HOME/spotrun */
	int store_line;		/* where the file sets it; 0: not set (the default; a
				 * submitted job's is then its queue's Q/ckpt) */
	char *local_dir;	/* default <workdir>/.spotrun/<name> */
	int request_signal;	/* default SIGUSR1; 0 = none (marker file only) */
	double write_timeout;	/* seconds the job has to write a periodic one (default 10m) */
	double margin;		/* safety margin before a deadline (default 5 s) */
	/* The checkpoint module's own settings, as ckpt.h takes them, filled
	 * by the key table: chunk_size (1 MiB .. 256 MiB; default 0: the
	 * save chooses it from the state's size, ckpt/chunksize.h),
	 * level (zstd, default 1; 1..19), keep (default 3). The rest (job,
	 * callbacks, deadline) stays zero here; the run sets them. */
	struct sr_ckpt_opts ckpt;

	/* [provider]: the provider module's settings, as provider.h takes
	 * them, filled by the key table (the strings are owned here):
	 * name (auto | aws | gcp | azure | local | signal; default auto),
	 * endpoint (NULL: the provider's default or its env variable), poll
	 * (0: the default), ipv6 (default no), window and grace (default
	 * 30 s), after and random_mean (0 = off), seed (default 1),
	 * notice_file, trace (absolute paths), trace_scale (default 1),
	 * trace_start (default 0), max_preemptions (key "preemptions";
	 * -1 = no limit, the default). */
	struct sr_provider_conf provider;
	int early_checkpoint;	/* an early warning starts a checkpoint (default yes) */

	/* [retry] */
	int max_restarts;	/* default 0 */
	int *on_exit_codes;	/* codes that restart; empty = any non-zero */
	size_t n_on_exit_codes;
	double backoff;		/* first restart delay (default 1 s), doubling */
	double backoff_max;	/* default 5 min */

	/* [sweep]: its parameters in file order; none (0) in a file that is
	 * one job. A file with a [sweep] is a sweep file: ${name} in its
	 * command and [env] values stands for a parameter (sweep.h). */
	struct sr_sweep_param *sweep;
	size_t nsweep;

	/* [data]: what is copied to the machine before the job, in file
	 * order; none (0) without the section */
	struct sr_data_entry *data;
	size_t ndata;

	/* The names it was parsed against, to parse its sweep's trials back. */
	struct sr_jobspec_names names;

	/* The file as read, and where in it (1-based lines) are the keys that
	 * sweep.c rewrites when it writes each trial's job file: name,
	 * command, each js->env entry (env_line[i]), and the [sweep] headers. */
	char *text;
	size_t text_len;
	int name_line, command_line;
	int *env_line;
	int *sweep_header_line;
	size_t nsweep_headers;
};

/* One error found in the file. */
struct sr_jobspec_error {
	int line;		/* 0: not tied to a line */
	char msg[400];
};

struct sr_jobspec_errors {
	struct sr_jobspec_error *v;
	size_t n;
};

/* Parse and validate path, the names of the modules above (the
 * checkpoint methods) taken from names. Returns 0 with *out set, or -1 with every error
 * in errs (each printed as "PATH:LINE: msg" by sr_jobspec_errors_print).
 * errs is (re)initialised by the call, so it must not hold errors still to
 * be freed; it may be NULL. On success errs is empty and every default is
 * filled in: workdir, local_dir, store, argv are set, paths are absolute.
 * On failure *out is NULL. Errors come sorted by line, those of the whole
 * file (line 0: missing keys, unreadable file) last; after 100 the rest are
 * only counted, in a last error. */
int sr_jobspec_load(const char *path, const struct sr_jobspec_names *names,
    struct sr_jobspec **out, struct sr_jobspec_errors *errs);
/* The same for a job file held in memory: the len bytes at text (copied;
 * no NUL needed), named path in js->path and in messages, its relative
 * paths taken against dir (absolute; NULL: the current directory). What
 * the queue's agent reads from the store, and what sweep.c's trials parse
 * back with. */
int sr_jobspec_parse(const char *path, const char *dir, const char *text, size_t len,
    const struct sr_jobspec_names *names, struct sr_jobspec **out,
    struct sr_jobspec_errors *errs);
/* Free js and everything it holds; NULL is allowed. */
void sr_jobspec_free(struct sr_jobspec *js);
/* Print each error to fp (a FILE *) as "PATH:LINE: msg", or "PATH: msg"
 * for line 0. */
void sr_jobspec_errors_print(const char *path, const struct sr_jobspec_errors *errs, void *fp);
/* Free the errors and empty errs; NULL is allowed. */
void sr_jobspec_errors_free(struct sr_jobspec_errors *errs);

#endif
