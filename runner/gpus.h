/*
 * gpus.h: this machine's GPUs, as NVIDIA's management library (NVML) sees
 * them: how many, their names, memory and UUIDs. NVML is loaded at run
 * time (dlopen of libnvidia-ml.so.1, which the driver installs), so
 * spotrun needs no CUDA to build or run, and a machine without the driver
 * simply has none. Without NVML the driver's device nodes (/dev/nvidia0,
 * ...) are counted, as `spotrun run` always did, with no names.
 */
#ifndef SR_GPUS_H
#define SR_GPUS_H

#include <stddef.h>
#include <stdint.h>

#define SR_GPUS_MAX		64	/* GPUs one machine may report */
#define SR_GPU_NAME_MAX		96	/* NVML's buffers for names and UUIDs */
#define SR_GPUS_NVML_LIB	"libnvidia-ml.so.1"

struct sr_gpu {
	char name[SR_GPU_NAME_MAX];	/* "NVIDIA H100 80GB HBM3"; "" unknown */
	char uuid[SR_GPU_NAME_MAX];	/* "GPU-5fb2..."; "" unknown */
	uint64_t memory;		/* bytes; 0 unknown */
};

struct sr_gpus {
	int count;
	struct sr_gpu gpu[SR_GPUS_MAX];
	char model[64];			/* the short model of GPU 0 (sr_gpus_model) */
	const char *source;		/* "nvml", "device nodes" or "none" */
	char why[256];			/* why NVML was not used ("" when it was) */
};

/* Find this machine's GPUs through NVML loaded from lib (NULL:
 * SR_GPUS_NVML_LIB, found the way dlopen searches), else by counting
 * /dev/nvidia[0-9]*. Never fails: a machine where neither works has none,
 * and g->why says what NVML answered. */
void sr_gpus_discover(const char *lib, struct sr_gpus *g);

/* The model a job's gpu_type names, from an NVML name, into buf: the
 * name without the words NVIDIA, Tesla, GeForce, Quadro and RTX, its first
 * word up to a '-' ("NVIDIA H100 80GB HBM3" -> "H100", "NVIDIA
 * A100-SXM4-80GB" -> "A100", "Tesla T4" -> "T4"); a number left alone
 * after RTX keeps it ("NVIDIA GeForce RTX 4090" -> "RTX4090"). "" for an
 * empty name. */
const char *sr_gpus_model(const char *name, char *buf, size_t len);

#endif
