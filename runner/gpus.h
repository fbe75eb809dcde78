/*
 * gpus.h: the GPUs this machine gives the job, and what is known of each:
 * the name CUDA_VISIBLE_DEVICES calls it by, and (where the source says)
 * its model, memory and UUID. The sources, the first that has an answer:
 *
 *  1. CUDA_VISIBLE_DEVICES in spotrun's own environment (Slurm's gres, a
 *     container's device plugin, the user): its entries, in order, as
 *     written, up to the first empty one (CUDA hides every device after an
 *     entry it cannot use, so spotrun hands out none past it); NVML, when
 *     it runs, fills in the model, memory and UUID of each entry it knows
 *     (by index or by UUID);
 *  2. NVIDIA's management library (NVML, libnvidia-ml.so.1, which the
 *     driver installs), loaded at run time (gpus-nvml.c), so spotrun needs
 *     nothing of NVIDIA's to build or run: index N, in NVML's order;
 *  3. the driver's device nodes, DEV/nvidiaN: index N, in index order,
 *     models unknown.
 *
 * Device nodes with no working driver behind them (NVML absent, failing,
 * or listing no GPU: a VM whose driver is not installed or not loaded)
 * are told apart from no GPUs at all: no_driver says why, for whoever
 * must not count on them (the agent, fleet/agent.c).
 */
#ifndef SR_GPUS_H
#define SR_GPUS_H

#include <stddef.h>

#define SR_GPU_ID_MAX	96	/* NVML_DEVICE_UUID_V2_BUFFER_SIZE is 96 */
#define SR_GPUS_NVML_LIB "libnvidia-ml.so.1"

struct sr_gpu {
	char id[SR_GPU_ID_MAX];		/* for CUDA_VISIBLE_DEVICES: "3", "GPU-8f1c..." */
	char model[SR_GPU_ID_MAX];	/* "NVIDIA H100 80GB HBM3"; "": not known */
	char uuid[SR_GPU_ID_MAX];	/* "GPU-..."; "": not known */
	unsigned long long mem_bytes;	/* 0: not known */
};

struct sr_gpus {
	struct sr_gpu *v;
	size_t n;
	/* "CUDA_VISIBLE_DEVICES", "NVML", "/dev/nvidia*", or "none" */
	const char *source;
	int by_index;			/* ids are the driver's indices (sources 2
					 * and 3): CUDA counts in PCI bus order only
					 * with CUDA_DEVICE_ORDER=PCI_BUS_ID */
	char nvml_why[256];		/* why NVML told nothing ("": it did) */
	/* DEV/nvidiaN nodes seen when NVML, asked, was absent, failed or
	 * listed none (0 otherwise: not looked for), and their paths
	 * ("/dev/nvidia0, /dev/nvidia1", cut with "..." when long) */
	size_t nodes;
	char node_paths[160];
	/* nodes > 0 with NVML absent, failing or listing no GPU: the driver
	 * does not work, and this says why (NVML's or the loader's words);
	 * "": it works, or there are no nodes */
	char no_driver[288];
};

/* Where sr_gpus_discover looks. */
struct sr_gpus_where {
	char *const *env;	/* spotrun's environment (NULL-terminated) */
	/* the device nodes' directory; NULL: $SPOTRUN_GPU_DEV_DIR of env
	 * when set and not empty (tests), else "/dev" */
	const char *dev;
	/* NVML's library: NULL for SR_GPUS_NVML_LIB found as dlopen searches
	 * (LD_LIBRARY_PATH first), "" not to use NVML. */
	const char *nvml;
};

/* Find the GPUs. 0 with *g filled (n may be 0; free it with
 * sr_gpus_free), or -1 with err when dev cannot be read for a reason
 * other than absence. NVML failing is not an error: g->nvml_why says
 * what it answered, and g->no_driver whether device nodes are there all
 * the same (the nodes are then g's GPUs when nothing else named any, as
 * source 3 says: a caller that needs a working driver checks no_driver). */
int sr_gpus_discover(const struct sr_gpus_where *w, struct sr_gpus *g, char *err);
void sr_gpus_free(struct sr_gpus *g);

/* Keep the first n GPUs, or add index-named ones up to n ("an operator's
 * label says this machine has n"). */
void sr_gpus_resize(struct sr_gpus *g, size_t n);

/* The model a job's gpu_type names, from an NVML name, into buf: the
 * name without the words NVIDIA, Tesla, GeForce, Quadro and RTX, its first
 * word up to a '-' ("NVIDIA H100 80GB HBM3" -> "H100", "NVIDIA
 * A100-SXM4-80GB" -> "A100", "Tesla T4" -> "T4"); a number left alone
 * after RTX keeps it ("NVIDIA GeForce RTX 4090" -> "RTX4090"). "" for an
 * empty name. */
const char *sr_gpus_model(const char *name, char *buf, size_t len);

/* Whether the first n GPUs are all of the model gpu_type (as
 * sr_gpus_model says, case aside): 0 yes (or gpu_type is NULL or ""), 1
 * cannot tell (a model not known: no NVML), -1 no, with err naming the
 * model found and the job file's way out. */
int sr_gpus_check_type(const struct sr_gpus *g, size_t n, const char *gpu_type,
    const char *job, char *err);

/* gpus-nvml.c: append the GPUs NVML reports to g (ids are indices). 0, or
 * -1 with why (lib could not be loaded, or NVML did not start). */
int sr_gpus_nvml_read(const char *lib, struct sr_gpus *g, char *why, size_t whylen);

#endif
