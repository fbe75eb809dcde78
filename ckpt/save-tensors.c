/*
 * save-tensors.c: sr_ckpt_save_tensors, buffers in memory (the library's
 * registered tensors) as a source of save.c's pipeline (savesrc.h). Each
 * buffer is one piece of its tensor; the manifest lists the tensors by
 * name, and the workers hash and encode each chunk where it lies in the
 * buffer, with no copy. In a job of several ranks (opts->world_size >
 * 1), a buffer of its tensor's whole box is replicated, held alike by
 * every rank: this rank saves only its share of its chunks (a contiguous
 * run of chunk indices, rank r of W taking [r n / W, (r + 1) n / W) of the
 * n), and rank 0's merge joins the shares (gangparts.c).
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
sr_ckpt_tensors_order(const struct sr_ckpt_tensor *t, size_t n, char *err)
{
	size_t *order = sr_try_calloc(n + 1, sizeof *order, err), i;

	if (order == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		order[i] = i;
	if (n > 1)
		qsort_r(order, n, sizeof *order, by_name, (void *)t);
	return order;
}

/* Whether t is its tensor's whole box. */
static int
whole_box(const struct sr_ckpt_tensor *t)
{
	int d;

	for (d = 0; d < t->ndim; d++) {
		if (t->offsets[d] != 0 || t->sizes[d] != t->shape[d])
			return 0;
	}
	return 1;
}

int
sr_ckpt_tensor_share(const struct sr_ckpt_tensor *t, const struct sr_ckpt_opts *o,
    uint64_t *off, uint64_t *len, uint64_t *first, uint64_t *nchunks)
{
	uint64_t cs = sr_ckpt_chunk_size(o), n = (t->bytes + cs - 1) / cs;
	uint64_t w = (uint64_t)o->world_size, r = (uint64_t)o->rank, f, end;

	if (o->world_size <= 1 || !whole_box(t)) {
		*off = 0;
		*len = t->bytes;
		return 0;
	}
	f = r * n / w;
	end = (r + 1) * n / w;
	*off = f * cs < t->bytes ? f * cs : t->bytes;
	*len = (end * cs < t->bytes ? end * cs : t->bytes) - *off;
	if (first != NULL)
		*first = f;
	if (nchunks != NULL)
		*nchunks = n;
	return 1;
}

int
sr_ckpt_tensors_describe(const struct sr_ckpt_tensor *tt, const size_t *order, size_t n,
    struct sr_manifest *m, const struct sr_ckpt_opts *o, char *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct sr_ckpt_tensor *t = &tt[order[i]];
		struct sr_mtensor *mt;
		struct sr_mpiece *p;
		uint64_t off, len, first, of;

		if (i > 0 && strcmp(tt[order[i - 1]].name, t->name) == 0)
			return sr_err(err, "tensor \"%s\" is given twice", t->name);
		if ((mt = sr_manifest_add_tensor(m, t->name, (enum sr_dtype)t->dtype, t->ndim, t->shape,
		    err)) == NULL || (p = sr_mtensor_add_piece(mt, t->offsets, t->sizes, err)) == NULL)
			return sr_err_prefix(err, "tensor \"%s\"", t->name);
		p->data.size = t->bytes;
		/* a rank's share of a replicated tensor: the next() of every
		 * source of tensors reads it alone */
		if (sr_ckpt_tensor_share(t, o, &off, &len, &first, &of)) {
			p->share = 1;
			p->share_first = first;
			p->share_of = of;
			p->share_off = off;
			p->data.size = len;
		}
	}
	m->stats.files = n;
	return 0;
}

static int
mem_describe(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, char *err)
{
	struct mem_src *s = arg;

	return sr_ckpt_tensors_describe(s->t, s->order, s->n, m, o, err);
}

/* The pieces in the manifest's order, each read where it lies. */
static int
mem_next(void *arg, struct sr_manifest *m, const struct sr_ckpt_opts *o, size_t *cursor,
    struct sr_save_item *it, char *err)
{
	struct mem_src *s = arg;

	for (; *cursor < s->n; (*cursor)++) {
		const struct sr_ckpt_tensor *t = &s->t[s->order[*cursor]];
		struct sr_mpiece *p = &m->tensors[*cursor].pieces[0];

		if (p->data.size == 0)
			continue;
		it->e = &p->data;
		it->fd = -1;
		it->mem = (const uint8_t *)t->data + p->share_off;
		it->size = p->data.size;
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
	struct mem_src s = { t, n, sr_ckpt_tensors_order(t, n, err) };
	struct sr_save_src src = { &s, mem_describe, mem_next, NULL, NULL, 0, 0 };
	int rc;

	if (s.order == NULL)
		return sr_err_prefix(err, "save %s", opts->job);
	rc = sr_ckpt_save_src(st, opts, &src, step, stats, err);
	free(s.order);
	return rc;
}
