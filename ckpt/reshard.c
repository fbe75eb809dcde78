/*
 * reshard.c: see reshard.h. The index sorts a tensor's pieces by their
 * offset along the dimension where their offsets differ most (the one the
 * ranks split): a box then meets only the pieces whose offset along it
 * lies in [box start - the longest piece along it, box end), found by a
 * binary search, and for a tensor split along one dimension that is the
 * pieces it actually meets, plus at most a neighbour. A grid split in two
 * dimensions costs the pieces of one stripe. No query looks at every
 * piece of every tensor.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pathsafe.h"
#include "reshard.h"
#include "util.h"

/* Grid cells times boxes that sr_box_covered looks at to name a gap. */
#define GAP_WORK ((uint64_t)1 << 24)

void
sr_box_of_piece(const struct sr_mtensor *t, const struct sr_mpiece *p, struct sr_box *b)
{
	b->ndim = t->ndim;
	memcpy(b->off, p->offsets, sizeof b->off);
	memcpy(b->size, p->sizes, sizeof b->size);
}

uint64_t
sr_box_volume(const struct sr_box *b)
{
	uint64_t v = 1;
	int d;

	for (d = 0; d < b->ndim; d++)
		v *= b->size[d];
	return v;
}

int
sr_box_meet(const struct sr_box *a, const struct sr_box *b, struct sr_box *o)
{
	int d;

	o->ndim = a->ndim;
	for (d = 0; d < a->ndim; d++) {
		uint64_t lo = a->off[d] > b->off[d] ? a->off[d] : b->off[d];
		uint64_t ae = a->off[d] + a->size[d], be = b->off[d] + b->size[d];
		uint64_t hi = ae < be ? ae : be;

		if (hi <= lo)
			return 0;
		o->off[d] = lo;
		o->size[d] = hi - lo;
	}
	return 1;
}

static size_t
dims_at(char *buf, size_t len, size_t off, const uint64_t *v, int n)
{
	int d;

	off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "[");
	for (d = 0; d < n; d++)
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%" PRIu64,
		    d ? "," : "", v[d]);
	off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "]");
	return off;
}

const char *
sr_dims_str(const uint64_t *v, int n, char *buf, size_t len)
{
	dims_at(buf, len, 0, v, n);
	return buf;
}

const char *
sr_box_str(const struct sr_box *b, char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "offsets ");

	off = dims_at(buf, len, off, b->off, b->ndim);
	off += (size_t)snprintf(buf + off, off < len ? len - off : 0, " sizes ");
	dims_at(buf, len, off, b->size, b->ndim);
	return buf;
}

/* ---- the index ---- */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct by_off_arg {
	const struct sr_mtensor *t;
	int dim;
};

static int
by_off(const void *a, const void *b, void *arg)
{
	const struct by_off_arg *x = arg;
	uint64_t p = x->t->pieces[*(const size_t *)a].offsets[x->dim];
	uint64_t q = x->t->pieces[*(const size_t *)b].offsets[x->dim];

	return p < q ? -1 : p > q;
}

int
sr_pindex_build(struct sr_pindex *x, const struct sr_mtensor *t, char *err)
{
	uint64_t *v;
	size_t i, best = 0, distinct;
	struct by_off_arg arg;
	int d;

	memset(x, 0, sizeof *x);
	x->t = t;
	x->n = t->npieces;
	if ((v = sr_try_calloc(t->npieces + 1, sizeof *v, err)) == NULL ||
	    (x->order = sr_try_calloc(t->npieces + 1, sizeof *x->order, err)) == NULL) {
		free(v);
		return sr_err_prefix(err, "index the pieces of tensor \"%s\"", t->name);
	}
	for (i = 0; i < t->npieces; i++)
		x->order[i] = i;
	x->dim = -1;
	for (d = 0; d < t->ndim; d++) {
		for (i = 0; i < t->npieces; i++)
			v[i] = t->pieces[i].offsets[d];
		sr_sort(v, t->npieces, sizeof *v, cmp_u64);
		for (i = 0, distinct = 0; i < t->npieces; i++)
			distinct += i == 0 || v[i] != v[i - 1];
		if (x->dim < 0 || distinct > best) {
			x->dim = d;
			best = distinct;
		}
	}
	free(v);
	if (x->dim < 0)
		return 0;
	arg.t = t;
	arg.dim = x->dim;
	qsort_r(x->order, x->n, sizeof *x->order, by_off, &arg);
	for (i = 0; i < x->n; i++) {
		if (t->pieces[i].sizes[x->dim] > x->maxlen)
			x->maxlen = t->pieces[i].sizes[x->dim];
	}
	return 0;
}

void
sr_pindex_free(struct sr_pindex *x)
{
	free(x->order);
	x->order = NULL;
}

size_t
sr_pindex_query(const struct sr_pindex *x, const struct sr_box *b, size_t *out)
{
	const struct sr_mtensor *t = x->t;
	size_t lo = 0, hi = x->n, i, n = 0;
	uint64_t from, end = 0;
	struct sr_box pb, o;

	if (x->dim >= 0) {
		/* a piece starting at or before b's start - maxlen ends before it */
		from = b->off[x->dim] >= x->maxlen ? b->off[x->dim] - x->maxlen + 1 : 0;
		end = b->off[x->dim] + b->size[x->dim];
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (t->pieces[x->order[mid]].offsets[x->dim] < from)
				lo = mid + 1;
			else
				hi = mid;
		}
		hi = x->n;
	}
	for (i = lo; i < hi; i++) {
		const struct sr_mpiece *p = &t->pieces[x->order[i]];

		if (x->dim >= 0 && p->offsets[x->dim] >= end)
			break;
		sr_box_of_piece(t, p, &pb);
		if (sr_box_meet(&pb, b, &o))
			out[n++] = x->order[i];
	}
	return n;
}

/* ---- coverage ---- */

/* Sorted distinct boundaries of the boxes along dim d, clipped to b. */
static size_t
bounds(const struct sr_box *b, const struct sr_box *boxes, size_t n, int d, uint64_t *v)
{
	uint64_t lo = b->off[d], hi = b->off[d] + b->size[d];
	size_t i, k = 0, u;

	v[k++] = lo;
	v[k++] = hi;
	for (i = 0; i < n; i++) {
		uint64_t s = boxes[i].off[d], e = boxes[i].off[d] + boxes[i].size[d];
		v[k++] = s < lo ? lo : s > hi ? hi : s;
		v[k++] = e < lo ? lo : e > hi ? hi : e;
	}
	sr_sort(v, k, sizeof *v, cmp_u64);
	for (i = 1, u = 1; i < k; i++) {
		if (v[i] != v[u - 1])
			v[u++] = v[i];
	}
	return u;
}

static int
inside(const struct sr_box *cell, const struct sr_box *box)
{
	int d;

	for (d = 0; d < cell->ndim; d++) {
		if (cell->off[d] < box->off[d] ||
		    cell->off[d] + cell->size[d] > box->off[d] + box->size[d])
			return 0;
	}
	return 1;
}

int
sr_box_covered(const struct sr_box *b, const struct sr_box *boxes, size_t n, struct sr_box *gap,
    char *err)
{
	uint64_t *v[SR_TENSOR_DIMS], cells = 1, c, rest;
	size_t nv[SR_TENSOR_DIMS], i;
	struct sr_box cell;
	int d, covered = 1;

	if (sr_box_volume(b) == 0)
		return 1;
	if (b->ndim == 0) {
		*gap = *b;
		return n > 0;
	}
	for (d = 0; d < b->ndim; d++)
		v[d] = NULL;
	for (d = 0; d < b->ndim; d++) {
		if ((v[d] = sr_try_calloc(2 * n + 2, sizeof *v[d], err)) == NULL) {
			covered = SR_BOX_OOM;
			goto out;
		}
		nv[d] = bounds(b, boxes, n, d, v[d]);
		if (cells <= GAP_WORK)
			cells *= nv[d] - 1;
	}
	if (cells > GAP_WORK / (n + 1)) {
		gap->ndim = -1;
		covered = -1;
		goto out;
	}
	cell.ndim = b->ndim;
	for (c = 0; c < cells && covered; c++) {
		for (d = b->ndim - 1, rest = c; d >= 0; d--) {
			size_t j = (size_t)(rest % (nv[d] - 1));
			rest /= nv[d] - 1;
			cell.off[d] = v[d][j];
			cell.size[d] = v[d][j + 1] - v[d][j];
		}
		for (i = 0; i < n && !inside(&cell, &boxes[i]); i++)
			;
		if (i == n) {
			*gap = cell;
			covered = 0;
		}
	}
out:
	for (d = 0; d < b->ndim; d++)
		free(v[d]);
	return covered;
}

int
sr_pieces_tile(const struct sr_mtensor *t, char *err)
{
	struct sr_pindex x;
	struct sr_box whole, pb, qb, gap, *boxes;
	size_t *hit, i, j, n;
	uint64_t held = 0, total;
	char a[240], b[240], q[SR_TENSOR_NAME_MAX + 8];
	int rc = 0, cov;

	sr_path_quote(t->name, q, sizeof q);
	whole.ndim = t->ndim;
	memcpy(whole.size, t->shape, sizeof whole.size);
	memset(whole.off, 0, sizeof whole.off);
	total = sr_box_volume(&whole);
	if ((hit = sr_try_calloc(t->npieces + 1, sizeof *hit, err)) == NULL)
		return sr_err_prefix(err, "check the pieces of tensor %s", q);
	if (sr_pindex_build(&x, t, err) == -1) {
		sr_pindex_free(&x);
		free(hit);
		return -1;
	}
	for (i = 0; i < t->npieces && rc == 0; i++) {
		sr_box_of_piece(t, &t->pieces[i], &pb);
		held += sr_box_volume(&pb);
		n = sr_pindex_query(&x, &pb, hit);
		for (j = 0; j < n; j++) {
			if (hit[j] == i)
				continue;
			sr_box_of_piece(t, &t->pieces[hit[j]], &qb);
			rc = sr_err(err, "tensor %s: the pieces at %s and at %s overlap (two ranks "
			    "registered the same elements)", q, sr_box_str(&pb, a, sizeof a),
			    sr_box_str(&qb, b, sizeof b));
			break;
		}
	}
	sr_pindex_free(&x);
	free(hit);
	if (rc != 0 || held == total)
		return rc;
	if ((boxes = sr_try_calloc(t->npieces + 1, sizeof *boxes, err)) == NULL)
		return sr_err_prefix(err, "check the pieces of tensor %s", q);
	for (i = 0; i < t->npieces; i++)
		sr_box_of_piece(t, &t->pieces[i], &boxes[i]);
	cov = sr_box_covered(&whole, boxes, t->npieces, &gap, err);
	free(boxes);
	if (cov == SR_BOX_OOM)
		return sr_err_prefix(err, "check the pieces of tensor %s", q);
	if (cov == 1 || t->ndim == 0)
		return sr_err(err, "tensor %s: no rank registered it", q);
	if (cov == -1)
		return sr_err(err, "tensor %s: its ranks' pieces hold %" PRIu64 " of its %" PRIu64
		    " elements", q, held, total);
	return sr_err(err, "tensor %s: no rank registered the box %s of its shape", q,
	    sr_box_str(&gap, a, sizeof a));
}

/* ---- runs ---- */

void
sr_runs_init(struct sr_runs *r, const struct sr_box *p, const struct sr_box *b,
    const struct sr_box *o, size_t esize)
{
	uint64_t pe[SR_TENSOR_DIMS] = { 0 }, be[SR_TENSOR_DIMS] = { 0 }, ps = esize, bs = esize;
	int d, nd = p->ndim, k;

	memset(r, 0, sizeof *r);
	for (d = nd - 1; d >= 0; d--) {
		pe[d] = ps;
		be[d] = bs;
		ps *= p->size[d];
		bs *= b->size[d];
	}
	r->count = 1;
	if (nd == 0) {
		r->len = esize;
		return;
	}
	for (k = nd - 1; k > 0 && o->size[k] == p->size[k] && o->size[k] == b->size[k]; k--)
		;
	r->k = k;
	r->len = o->size[k] * pe[k];
	for (d = 0; d <= k; d++) {
		r->src0 += (o->off[d] - p->off[d]) * pe[d];
		r->dst0 += (o->off[d] - b->off[d]) * be[d];
	}
	for (d = 0; d < k; d++) {
		r->osize[d] = o->size[d];
		r->sstride[d] = pe[d];
		r->dstride[d] = be[d];
		r->count *= o->size[d];
	}
}

void
sr_runs_at(const struct sr_runs *r, uint64_t i, uint64_t *src, uint64_t *dst)
{
	uint64_t s = r->src0, t = r->dst0, c;
	int d;

	for (d = r->k - 1; d >= 0; d--) {
		c = i % r->osize[d];
		i /= r->osize[d];
		s += c * r->sstride[d];
		t += c * r->dstride[d];
	}
	*src = s;
	*dst = t;
}

uint64_t
sr_runs_after(const struct sr_runs *r, uint64_t x)
{
	uint64_t lo = 0, hi = r->count, s, t;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		sr_runs_at(r, mid, &s, &t);
		if (s + r->len <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
sr_runs_touch(const struct sr_runs *r, uint64_t from, uint64_t n)
{
	uint64_t i = sr_runs_after(r, from), s, t;

	if (i == r->count)
		return 0;
	sr_runs_at(r, i, &s, &t);
	return s < from + n;
}

int
sr_runs_each(const struct sr_runs *r, uint64_t from, uint64_t n,
    int (*fn)(void *arg, uint64_t dst, uint64_t at, uint64_t len), void *arg)
{
	uint64_t i, s, t, lo, hi;

	for (i = sr_runs_after(r, from); i < r->count; i++) {
		sr_runs_at(r, i, &s, &t);
		if (s >= from + n)
			break;
		lo = s > from ? s : from;
		hi = s + r->len < from + n ? s + r->len : from + n;
		if (fn(arg, t + (lo - s), lo - from, hi - lo) == -1)
			return -1;
	}
	return 0;
}

struct copy_arg {
	const uint8_t *src;
	uint8_t *dst;
};

static int
copy_run(void *arg, uint64_t dst, uint64_t at, uint64_t len)
{
	struct copy_arg *c = arg;

	memcpy(c->dst + dst, c->src + at, len);
	return 0;
}

void
sr_runs_copy(const struct sr_runs *r, uint64_t from, uint64_t n, const uint8_t *src,
    uint8_t *dst)
{
	struct copy_arg c = { src, dst };

	sr_runs_each(r, from, n, copy_run, &c);
}
