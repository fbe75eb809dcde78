/*
 * container.h: [job] image, every rank of the job run inside a container
 * by docker or podman (doc/spotrun-job.5). The rank's process is then the
 * runtime's client, `RUNTIME run --rm --init --sig-proxy=true ...`, which
 * the supervisor spawns, signals and reaps as it would the job itself:
 *
 *  - the client passes every signal it can catch on to the container,
 *    whose init (--init) passes it to the job, so SIGTERM, the request
 *    signal and a Ctrl-C reach the job as without a container;
 *  - a client that dies itself (SIGKILL after the grace period, a kill
 *    from outside) leaves the container running: sr_container_kill kills
 *    it by its name;
 *  - the runtime reports a job killed by signal N as exit 128+N, which
 *    sr_container_status turns back into that death, so that spotrun's
 *    exit status and its words about the end are those without a container;
 *    125 is the runtime's own failure, 126 and 127 a command that cannot run.
 *
 * The container shares the machine's network and IPC (NCCL, MASTER_PORT),
 * has its own pid namespace, runs as spotrun's user, gets the rank's GPUs
 * (podman: CDI, --device nvidia.com/gpu=ID; docker: --gpus device=ID),
 * and mounts the working directory and the job's local directory (its
 * checkpoint directory, the request and done files, the logs) at the same
 * paths, so that every path in the job's environment means the same inside.
 */
#ifndef SR_CONTAINER_H
#define SR_CONTAINER_H

#include <stddef.h>

struct sr_jobspec;
struct sr_container;

/* Find the runtime js->container_runtime names on the PATH of envp (auto:
 * podman, else docker). 0 with *out set, or -1 with err naming the key
 * when there is none ("image = REF: no container runtime: ..."). */
int sr_container_open(const struct sr_jobspec *js, char *const *envp,
    struct sr_container **out, char *err);
/* The runtime's name and path, in words: "podman (/usr/bin/podman)". */
const char *sr_container_how(const struct sr_container *c);
/* Make sure the image is on this machine: `RUNTIME image inspect`, and
 * only when it is not there `RUNTIME pull` (so once per machine). *pulled
 * is 1 when it pulled, and *secs how long that took. 0, or -1 with err
 * naming the key and holding the runtime's last line of error. Forks and
 * waits for its own children: call before any job process exists. */
int sr_container_pull(struct sr_container *c, char *const *envp, int *pulled, double *secs,
    char *err);

/* What one rank's container gets. */
struct sr_container_rank {
	int attempt, rank;
	/* the rank's CUDA_VISIBLE_DEVICES (ids, comma-separated), whose GPUs
	 * are passed in and renumbered 0.. inside; NULL: no GPU */
	const char *visible;
	const char *local_dir;	/* mounted, with the working directory */
	char *const *base;	/* spotrun's own environment, not passed */
};

/* The client's argv for the rank's command argv with environment env
 * (jobenv.c's; the client gets it too): every entry of env that is not
 * in base verbatim is passed by name (-e NAME, its value from the
 * client's environment), CUDA_VISIBLE_DEVICES with its value inside.
 * Malloc'd, NULL-terminated; free with sr_container_argv_free. */
char **sr_container_argv(const struct sr_container *c, const struct sr_jobspec *js,
    const struct sr_container_rank *k, char *const *argv, char *const *env);
void sr_container_argv_free(char **argv);
/* The container's name for rank k of attempt a ("spotrun-JOB-PID-aA-rK"),
 * into buf. */
const char *sr_container_name(const struct sr_container *c, int attempt, int rank, char *buf,
    size_t len);
/* Kill the container by name (`RUNTIME kill NAME`, its --rm removes it),
 * for a client that died while the job may run on. Waits for the runtime;
 * its output is dropped. Forks and waits for its own child: call where no
 * reaping runs beside it. */
void sr_container_kill(const struct sr_container *c, const char *name, char *const *envp);
/* The wait status of the job from the client's: exit 128+N (N a signal)
 * becomes death by N; anything else is left alone. */
int sr_container_status(int wstatus);
void sr_container_free(struct sr_container *c);

#endif
