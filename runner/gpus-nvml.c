/*
 * gpus-nvml.c: the GPUs NVIDIA's management library reports (gpus.h).
 * NVML is opened with dlopen and its versioned entry points looked up by
 * name (nvmlInit_v2, nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2;
 * names, UUIDs and memory through the unversioned ones), so nothing of
 * NVIDIA's is needed to build. A device NVML refuses (no permission, say)
 * still counts, nameless: the job may be given it all the same.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "gpus.h"
#include "util.h"

#define NVML_GPUS_MAX	64	/* what one machine may report */

/* NVML's types, as its header declares them (nvml.h is not needed). */
typedef void *nvml_device;
struct nvml_memory {
	unsigned long long total, free, used;
};

struct nvml {
	void *lib;
	int (*init)(void);
	int (*shutdown)(void);
	int (*count)(unsigned int *);
	int (*handle)(unsigned int, nvml_device *);
	int (*name)(nvml_device, char *, unsigned int);
	int (*uuid)(nvml_device, char *, unsigned int);
	int (*memory)(nvml_device, struct nvml_memory *);
	const char *(*error)(int);
};

static const char *
nvml_error(const struct nvml *n, int rc)
{
	const char *s = n->error != NULL ? n->error(rc) : NULL;

	return s != NULL ? s : "unknown error";
}

/* dlopen lib and find the entry points: 0, or -1 with why. */
static int
nvml_open(const char *lib, struct nvml *n, char *why, size_t whylen)
{
	const char *e;

	memset(n, 0, sizeof *n);
	n->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (n->lib == NULL) {
		e = dlerror();
		snprintf(why, whylen, "load %s: %s", lib, e != NULL ? e : "not found");
		return -1;
	}
	*(void **)&n->init = dlsym(n->lib, "nvmlInit_v2");
	*(void **)&n->shutdown = dlsym(n->lib, "nvmlShutdown");
	*(void **)&n->count = dlsym(n->lib, "nvmlDeviceGetCount_v2");
	*(void **)&n->handle = dlsym(n->lib, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&n->name = dlsym(n->lib, "nvmlDeviceGetName");
	*(void **)&n->uuid = dlsym(n->lib, "nvmlDeviceGetUUID");
	*(void **)&n->memory = dlsym(n->lib, "nvmlDeviceGetMemoryInfo");
	*(void **)&n->error = dlsym(n->lib, "nvmlErrorString");
	if (n->init == NULL || n->shutdown == NULL || n->count == NULL || n->handle == NULL) {
		snprintf(why, whylen, "load %s: it lacks nvmlInit_v2, nvmlDeviceGetCount_v2 or "
		    "nvmlDeviceGetHandleByIndex_v2 (a driver before NVML's v2 calls?)", lib);
		dlclose(n->lib);
		return -1;
	}
	return 0;
}

/* Device i's facts into d (left "" / 0 where NVML refuses). */
static void
nvml_device_facts(const struct nvml *n, unsigned int i, struct sr_gpu *d)
{
	struct nvml_memory m;
	nvml_device h;

	memset(d, 0, sizeof *d);
	snprintf(d->id, sizeof d->id, "%u", i);
	if (n->handle(i, &h) != 0)
		return;
	if (n->name != NULL && n->name(h, d->model, sizeof d->model) != 0)
		d->model[0] = '\0';
	if (n->uuid != NULL && n->uuid(h, d->uuid, sizeof d->uuid) != 0)
		d->uuid[0] = '\0';
	if (n->memory != NULL && n->memory(h, &m) == 0)
		d->mem_bytes = m.total;
	d->model[sizeof d->model - 1] = '\0';
	d->uuid[sizeof d->uuid - 1] = '\0';
}

int
sr_gpus_nvml_read(const char *lib, struct sr_gpus *g, char *why, size_t whylen)
{
	struct nvml n;
	unsigned int count = 0, i;
	int rc;

	if (nvml_open(lib, &n, why, whylen) == -1)
		return -1;
	if ((rc = n.init()) != 0) {
		snprintf(why, whylen, "nvmlInit_v2: %s (NVML code %d)", nvml_error(&n, rc), rc);
		dlclose(n.lib);
		return -1;
	}
	if ((rc = n.count(&count)) != 0) {
		snprintf(why, whylen, "nvmlDeviceGetCount_v2: %s (NVML code %d)",
		    nvml_error(&n, rc), rc);
		n.shutdown();
		dlclose(n.lib);
		return -1;
	}
	if (count > NVML_GPUS_MAX)
		count = NVML_GPUS_MAX;
	g->v = sr_reallocarray(g->v, g->n + count + 1, sizeof *g->v);
	for (i = 0; i < count; i++)
		nvml_device_facts(&n, i, &g->v[g->n++]);
	n.shutdown();
	dlclose(n.lib);
	return 0;
}
