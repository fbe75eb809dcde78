/*
 * save-tensors.c: sr_ckpt_save_tensors, buffers in memory (the library's
 * registered tensors) as a source of save.c's pipeline (savesrc.h). Each
 * buffer is one piece of its tensor; the manifest lists the tensors by
 * name, and the workers hash and encode each chunk where it lies in the
 * buffer, with no copy.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "manifest.h"
#include "savesrc.h"
#include "util.h"

struct mem_src {
	const struct sr_ckpt_tensor *t;
	size_t n;
	size_t *order;			/* indices of t by name */
};

static int
by_name(const void *a, const void *b, void *arg)
{
	const struct sr_ckpt_tensor *t = arg;

	return strcmp(t[*(const size_t *)a].name, t[*(const size_t *)b].name);
}

size_t *
sr_ckpt_tensors_order(const struct sr_ckpt_tensor *t, size_t n)
{
	size_t *order = sr_calloc(n + 1, sizeof *order), i;

	for (i = 0; i < n; i++)
		order[i] = i;
	if (n > 1)
		qsort_r(order, n, sizeof *order, by_name, (void *)t);
	return order;
}

int
sr_ckpt_tensors_describe(const struct sr_ckpt_tensor *tt, const size_t *order, size_t n,
    struct sr_manifest *m, char *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct sr_ckpt_tensor *t = &tt[order[i]];
		struct sr_mtensor *mt;

		if (i > 0 && strcmp(tt[order[i - 1]].name, t->name) == 0)
			return sr_err(err, "tensor \"%s\" is given twice", t->name);
		mt = sr_manifest_add_tensor(m, t->name, (enum sr_dtype)t->dtype, t->ndim, t->shape);
		sr_mtensor_add_piece(mt, t->offsets, t->sizes)->data.size = t->bytes;
	}
	m->stats.files = n;
	return 0;
}

static int
mem_describe(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, char *err)
{
	struct mem_src *s = arg;

	return sr_ckpt_tensors_describe(s->t, s->order, s->n, m, err);
}

/* The pieces in the manifest's order, each read where it lies. */
static int
mem_next(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, size_t *cursor,
    struct sr_save_item *it, char *err)
{
	struct mem_src *s = arg;

	for (; *cursor < s->n; (*cursor)++) {
		const struct sr_ckpt_tensor *t = &s->t[s->order[*cursor]];

		if (t->bytes == 0)
			continue;
		it->e = &m->tensors[*cursor].pieces[0].data;
		it->fd = -1;
		it->mem = t->data;
		it->size = t->bytes;
		(*cursor)++;
		return 1;
	}
	return 0;
}

int
sr_ckpt_save_tensors(struct sr_store *st, const struct sr_ckpt_opts *opts,
    const struct sr_ckpt_tensor *t, size_t n, long long step, struct sr_ckpt_stats *stats,
    char *err)
{
	struct mem_src s = { t, n, sr_ckpt_tensors_order(t, n) };
	struct sr_save_src src = { &s, mem_describe, mem_next, NULL };
	int rc;

	rc = sr_ckpt_save_src(st, opts, &src, step, stats, err);
	free(s.order);
	return rc;
}
