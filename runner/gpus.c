/*
 * gpus.c: see gpus.h.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		qsort(g->v, g->n, sizeof *g->v, by_number);
	return 0;
}

int
sr_gpus_discover(char *const *env, const char *dev, struct sr_gpus *g, char *err)
{
	size_t i;

	memset(g, 0, sizeof *g);
	for (i = 0; env != NULL && env[i] != NULL; i++) {
		if (strncmp(env[i], "CUDA_VISIBLE_DEVICES=", 21) == 0) {
			from_visible(env[i] + 21, g);
			return 0;
		}
	}
	if (from_nodes(dev, g, err) == -1)
		return -1;
	if (g->n == 0)
		g->source = "none";
	return 0;
}

void
sr_gpus_free(struct sr_gpus *g)
{
	free(g->v);
	memset(g, 0, sizeof *g);
}
