/*
 * gpus.h: the GPUs this machine gives the job, and what is known of each:
 * the name CUDA_VISIBLE_DEVICES calls it by, and (where the source says)
 * its model, memory and UUID. The sources, the first that has an answer:
 *
 *  1. CUDA_VISIBLE_DEVICES in spotrun's own environment (Slurm's gres, a
 *     container's device plugin, the user): its entries, in order, as
 *     written, up to the first empty one (CUDA hides every device after an
 *     entry it cannot use, so spotrun hands out none past it);
 *  2. the driver's device nodes, DEV/nvidiaN: index N, in index order.
 *
 * NVML (model, memory, UUID) is the agent's discovery (issue 12); it folds
 * in as a source before the device nodes, filling the same struct.
 */
#ifndef SR_GPUS_H
#define SR_GPUS_H

#include <stddef.h>

#define SR_GPU_ID_MAX	96	/* NVML_DEVICE_UUID_V2_BUFFER_SIZE is 96 */

struct sr_gpu {
	char id[SR_GPU_ID_MAX];		/* for CUDA_VISIBLE_DEVICES: "3", "GPU-8f1c..." */
	char model[SR_GPU_ID_MAX];	/* "NVIDIA H100 80GB HBM3"; "": not known */
	char uuid[SR_GPU_ID_MAX];	/* "GPU-..."; "": not known */
	unsigned long long mem_bytes;	/* 0: not known */
};

struct sr_gpus {
	struct sr_gpu *v;
	size_t n;
	/* "CUDA_VISIBLE_DEVICES", "/dev/nvidia*", or "none" (no GPU found) */
	const char *source;
	int by_index;			/* ids are the driver's indices (source 2):
					 * CUDA counts in PCI bus order only with
					 * CUDA_DEVICE_ORDER=PCI_BUS_ID */
};

/* Find the GPUs: env is spotrun's environment (NULL-terminated), dev the
 * directory of the device nodes ("/dev"). 0 with *g filled (n may be 0),
 * or -1 with err when dev cannot be read for a reason other than absence. */
int sr_gpus_discover(char *const *env, const char *dev, struct sr_gpus *g, char *err);
void sr_gpus_free(struct sr_gpus *g);

#endif
