/*
 * gpus.c: see gpus.h. Finding the GPUs and what a job's gpu_type means;
 * NVML itself is gpus-nvml.c.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpus.h"
#include "util.h"

static void
add(struct sr_gpus *g, const char *id, size_t len)
{
	struct sr_gpu *x;

	g->v = sr_reallocarray(g->v, g->n + 1, sizeof *g->v);
	x = &g->v[g->n++];
	memset(x, 0, sizeof *x);
	snprintf(x->id, sizeof x->id, "%.*s", (int)len, id);
	if (strncmp(x->id, "GPU-", 4) == 0)
		strlcpy(x->uuid, x->id, sizeof x->uuid);
}

/* The entries of an inherited CUDA_VISIBLE_DEVICES, up to the first empty
 * one (blanks around an entry are CUDA's to ignore, and ours). */
static void
from_visible(const char *v, struct sr_gpus *g)
{
	const char *p = v, *e;
	size_t len;

	g->source = "CUDA_VISIBLE_DEVICES";
	while (*p != '\0') {
		e = strchrnul(p, ',');
		while (p < e && *p == ' ')
			p++;
		len = (size_t)(e - p);
		while (len > 0 && p[len - 1] == ' ')
			len--;
		if (len == 0 || len >= SR_GPU_ID_MAX)
			break;
		add(g, p, len);
		if (*e == '\0')
			break;
		p = e + 1;
	}
}

/* What NVML knows of each CUDA_VISIBLE_DEVICES entry: an index is NVML's
 * index (CUDA's order is NVML's for GPUs of one model; with mixed models,
 * CUDA_DEVICE_ORDER=PCI_BUS_ID makes it so), a UUID (or its prefix, as
 * CUDA takes it) the device with that UUID. */
static void
fill_from(const struct sr_gpus *nv, struct sr_gpus *g)
{
	size_t i, j, len;
	char *end;
	unsigned long k;

	for (i = 0; i < g->n; i++) {
		struct sr_gpu *x = &g->v[i];
		const struct sr_gpu *y = NULL;

		errno = 0;
		k = strtoul(x->id, &end, 10);
		if (x->id[0] != '\0' && *end == '\0' && errno == 0) {
			if (k < nv->n)
				y = &nv->v[k];
		} else if (strncmp(x->id, "GPU-", 4) == 0) {
			len = strlen(x->id);
			for (j = 0; j < nv->n && y == NULL; j++)
				if (strncasecmp(nv->v[j].uuid, x->id, len) == 0)
					y = &nv->v[j];
		}
		if (y == NULL)
			continue;	/* MIG-..., or a device NVML does not list */
		strlcpy(x->model, y->model, sizeof x->model);
		strlcpy(x->uuid, y->uuid, sizeof x->uuid);
		x->mem_bytes = y->mem_bytes;
	}
}

static int
by_number(const void *a, const void *b)
{
	return atoi(((const struct sr_gpu *)a)->id) - atoi(((const struct sr_gpu *)b)->id);
}

/* DEV/nvidia0, nvidia1, ...: not nvidiactl, nvidia-uvm, nvidia-caps. */
static int
from_nodes(const char *dev, struct sr_gpus *g, char *err)
{
	struct dirent *de;
	const char *s;
	DIR *d = opendir(dev);

	g->source = "/dev/nvidia*";
	g->by_index = 1;
	if (d == NULL) {
		if (errno == ENOENT)
			return 0;
		return sr_errno(err, "read %s", dev);
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "nvidia", 6) != 0)
			continue;
		s = de->d_name + 6;
		if (*s == '\0' || strspn(s, "0123456789") != strlen(s) || strlen(s) > 3)
			continue;
		add(g, s, strlen(s));
	}
	closedir(d);
	if (g->n > 1)
		sr_sort(g->v, g->n, sizeof *g->v, by_number);
	return 0;
}

/* The device nodes' folder: w's, else SPOTRUN_GPU_DEV_DIR of its
 * environment, else /dev. */
static const char *
dev_dir(const struct sr_gpus_where *w)
{
	size_t i;

	if (w->dev != NULL)
		return w->dev;
	for (i = 0; w->env != NULL && w->env[i] != NULL; i++)
		if (strncmp(w->env[i], "SPOTRUN_GPU_DEV_DIR=", 20) == 0 && w->env[i][20] != '\0')
			return w->env[i] + 20;
	return "/dev";
}

/* Whether device nodes stand without a working driver: NVML was asked
 * (have_nvml: it answered, with nvml_n GPUs) and gave none, yet dev holds
 * nvidiaN nodes. Fills g->nodes, node_paths and no_driver. */
static void
driver_check(const char *dev, int have_nvml, size_t nvml_n, struct sr_gpus *g)
{
	struct sr_gpus nodes;
	char err[SR_ERRMAX];
	size_t i, o = 0;

	if (have_nvml && nvml_n > 0)
		return;
	memset(&nodes, 0, sizeof nodes);
	if (from_nodes(dev, &nodes, err) == -1 || nodes.n == 0) {
		sr_gpus_free(&nodes);
		return;		/* unreadable: no nodes seen, as with none */
	}
	g->nodes = nodes.n;
	for (i = 0; i < nodes.n; i++) {
		char one[SR_GPU_ID_MAX + 64];

		snprintf(one, sizeof one, "%s%s/nvidia%s", i > 0 ? ", " : "", dev, nodes.v[i].id);
		if (o + strlen(one) + 6 >= sizeof g->node_paths) {
			snprintf(g->node_paths + o, sizeof g->node_paths - o, ", ...");
			break;
		}
		o += (size_t)snprintf(g->node_paths + o, sizeof g->node_paths - o, "%s", one);
	}
	sr_gpus_free(&nodes);
	if (have_nvml)
		snprintf(g->no_driver, sizeof g->no_driver, "NVML (%s) lists no GPU",
		    SR_GPUS_NVML_LIB);
	else
		snprintf(g->no_driver, sizeof g->no_driver, "%s", g->nvml_why);
}

int
sr_gpus_discover(const struct sr_gpus_where *w, struct sr_gpus *g, char *err)
{
	struct sr_gpus nv;
	const char *visible = NULL, *dev = dev_dir(w);
	size_t i, nvml_n;
	int have_nvml, asked = 1;

	memset(g, 0, sizeof *g);
	memset(&nv, 0, sizeof nv);
	for (i = 0; w->env != NULL && w->env[i] != NULL; i++)
		if (strncmp(w->env[i], "CUDA_VISIBLE_DEVICES=", 21) == 0)
			visible = w->env[i] + 21;
	if (w->nvml != NULL && w->nvml[0] == '\0') {
		snprintf(g->nvml_why, sizeof g->nvml_why, "not used");
		have_nvml = 0;
		asked = 0;
	} else {
		have_nvml = sr_gpus_nvml_read(w->nvml != NULL ? w->nvml : SR_GPUS_NVML_LIB, &nv,
		    g->nvml_why, sizeof g->nvml_why) == 0;
	}
	nvml_n = nv.n;
	if (visible != NULL) {
		from_visible(visible, g);
		fill_from(&nv, g);
	} else if (have_nvml) {
		g->v = nv.v;
		g->n = nv.n;
		g->by_index = 1;
		nv.v = NULL;
		nv.n = 0;
	} else if (from_nodes(dev, g, err) == -1) {
		sr_gpus_free(&nv);
		return -1;
	}
	sr_gpus_free(&nv);
	if (g->n == 0)
		g->source = "none";
	else if (have_nvml && visible == NULL)
		g->source = "NVML";
	if (asked)
		driver_check(dev, have_nvml, nvml_n, g);
	return 0;
}

void
sr_gpus_free(struct sr_gpus *g)
{
	free(g->v);
	g->v = NULL;
	g->n = 0;
}

void
sr_gpus_resize(struct sr_gpus *g, size_t n)
{
	char id[16];

	while (g->n < n) {
		snprintf(id, sizeof id, "%zu", g->n);
		add(g, id, strlen(id));
	}
	g->n = n;
	if (n > 0 && strcmp(g->source, "none") == 0)
		g->source = "a label";
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

int
sr_gpus_check_type(const struct sr_gpus *g, size_t n, const char *gpu_type, const char *job,
    char *err)
{
	char m[SR_GPU_ID_MAX];
	size_t i;

	if (gpu_type == NULL || gpu_type[0] == '\0' || n == 0)
		return 0;
	for (i = 0; i < n && i < g->n; i++) {
		if (g->v[i].model[0] == '\0')
			return 1;
		if (strcasecmp(sr_gpus_model(g->v[i].model, m, sizeof m), gpu_type) != 0)
			return sr_err(err, "job %s: gpu_type = %s, but GPU %s of this machine is %s "
			    "(%s; as %s names it): run it on a machine with %s GPUs, or change or remove gpu_type "
			    "in its [resources]", job, gpu_type, g->v[i].id, m, g->v[i].model, g->source,
			    gpu_type);
	}
	return 0;
}
