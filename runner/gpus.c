/*
 * gpus.c: this machine's GPUs (gpus.h). NVML is opened with dlopen and its
 * versioned entry points looked up by name (nvmlInit_v2,
 * nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2; the names, UUIDs
 * and memory through the unversioned ones), so nothing of NVIDIA's is
 * needed to build. A device NVML refuses (no permission, say) still
 * counts, nameless: the job may be given it all the same.
 */
#include "config.h"

#include <ctype.h>
#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gpus.h"
#include "util.h"

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

/* dlopen lib and find the entry points: 0, or -1 with g->why. */
static int
nvml_open(const char *lib, struct nvml *n, struct sr_gpus *g)
{
	const char *e;

	memset(n, 0, sizeof *n);
	n->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (n->lib == NULL) {
		e = dlerror();
		snprintf(g->why, sizeof g->why, "load %s: %s", lib, e != NULL ? e : "not found");
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
		snprintf(g->why, sizeof g->why, "load %s: it lacks nvmlInit_v2, "
		    "nvmlDeviceGetCount_v2 or nvmlDeviceGetHandleByIndex_v2 (a driver before "
		    "NVML's v2 calls?)", lib);
		dlclose(n->lib);
		return -1;
	}
	return 0;
}

/* The GPUs NVML reports: 0, or -1 with g->why (NVML did not start). */
static int
nvml_discover(const char *lib, struct sr_gpus *g)
{
	struct nvml n;
	unsigned int count = 0, i;
	int rc;

	if (nvml_open(lib, &n, g) == -1)
		return -1;
	if ((rc = n.init()) != 0) {
		snprintf(g->why, sizeof g->why, "nvmlInit_v2: %s (NVML code %d)", nvml_error(&n, rc),
		    rc);
		dlclose(n.lib);
		return -1;
	}
	if ((rc = n.count(&count)) != 0) {
		snprintf(g->why, sizeof g->why, "nvmlDeviceGetCount_v2: %s (NVML code %d)",
		    nvml_error(&n, rc), rc);
		n.shutdown();
		dlclose(n.lib);
		return -1;
	}
	g->count = count > SR_GPUS_MAX ? SR_GPUS_MAX : (int)count;
	for (i = 0; i < (unsigned int)g->count; i++) {
		struct sr_gpu *d = &g->gpu[i];
		struct nvml_memory m;
		nvml_device h;

		if (n.handle(i, &h) != 0)
			continue;	/* e.g. no permission for this one: it still counts */
		if (n.name != NULL && n.name(h, d->name, sizeof d->name) != 0)
			d->name[0] = '\0';
		if (n.uuid != NULL && n.uuid(h, d->uuid, sizeof d->uuid) != 0)
			d->uuid[0] = '\0';
		if (n.memory != NULL && n.memory(h, &m) == 0)
			d->memory = m.total;
		d->name[sizeof d->name - 1] = '\0';
		d->uuid[sizeof d->uuid - 1] = '\0';
	}
	n.shutdown();
	dlclose(n.lib);
	g->source = "nvml";
	return 0;
}

void
sr_gpus_discover(const char *lib, struct sr_gpus *g)
{
	glob_t gl;

	memset(g, 0, sizeof *g);
	g->source = "none";
	if (nvml_discover(lib != NULL ? lib : SR_GPUS_NVML_LIB, g) == 0) {
		sr_gpus_model(g->count > 0 ? g->gpu[0].name : "", g->model, sizeof g->model);
		return;
	}
	if (glob("/dev/nvidia[0-9]*", 0, NULL, &gl) == 0 && gl.gl_pathc > 0) {
		g->count = gl.gl_pathc > SR_GPUS_MAX ? SR_GPUS_MAX : (int)gl.gl_pathc;
		g->source = "device nodes";
	}
	globfree(&gl);
}

/* Whether the word (len bytes) is one of the brand words a model drops. */
static int
brand_word(const char *w, size_t len)
{
	static const char *const words[] = { "NVIDIA", "Tesla", "GeForce", "Quadro", "RTX" };
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(words); i++) {
		if (strlen(words[i]) == len && strncasecmp(w, words[i], len) == 0)
			return 1;
	}
	return 0;
}

const char *
sr_gpus_model(const char *name, char *buf, size_t len)
{
	const char *p = name;
	int rtx = 0;
	size_t n, i, digits;

	buf[0] = '\0';
	for (;;) {
		while (*p == ' ')
			p++;
		n = strcspn(p, " ");
		if (n == 0)
			return buf;
		if (!brand_word(p, n))
			break;
		rtx |= n == 3 && strncasecmp(p, "RTX", 3) == 0;
		p += n;
	}
	n = strcspn(p, " -");
	for (i = 0, digits = 1; i < n; i++)
		digits &= isdigit((unsigned char)p[i]) != 0;
	snprintf(buf, len, "%s%.*s", rtx && digits ? "RTX" : "", (int)n, p);
	return buf;
}
