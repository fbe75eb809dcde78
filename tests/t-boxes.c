/*
 * t-boxes.c: the geometry of resharding (ckpt/reshard.c) against brute
 * force, on random tensors of 1 to 3 dimensions split into random grids:
 * the index returns exactly the pieces that meet a box; the runs, applied
 * to a piece cut into chunks of random sizes, copy into a buffer exactly
 * the elements of the overlap (element by element, the reference), and
 * say which chunks hold any; coverage finds a gap where the brute force
 * finds an element in no box, and the tiling check names overlapping
 * pieces and a box no piece holds.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

#include "manifest.h"
#include "reshard.h"
#include "util.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t
rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? rng % n : 0;
}

/* A tensor of ndim dims split into a grid of random cuts. */
static void
make_tensor(struct sr_mtensor *t, int ndim)
{
	uint64_t cuts[3][6], off[3], size[3];
	int ncut[3], d, idx[3] = { 0, 0, 0 };

	memset(t, 0, sizeof *t);
	t->name = sr_strdup("t");
	t->dtype = SR_DT_U8;
	t->ndim = ndim;
	for (d = 0; d < ndim; d++) {
		int k, j;
		t->shape[d] = 1 + rnd(12);
		ncut[d] = 1 + (int)rnd(4);
		cuts[d][0] = 0;
		for (k = 1; k < ncut[d]; k++)
			cuts[d][k] = rnd(t->shape[d] + 1);
		cuts[d][ncut[d]] = t->shape[d];
		for (k = 1; k < ncut[d]; k++)		/* sorted */
			for (j = k; j > 0 && cuts[d][j] < cuts[d][j - 1]; j--) {
				uint64_t x = cuts[d][j];
				cuts[d][j] = cuts[d][j - 1];
				cuts[d][j - 1] = x;
			}
	}
	for (;;) {
		for (d = 0; d < ndim; d++) {
			off[d] = cuts[d][idx[d]];
			size[d] = cuts[d][idx[d] + 1] - off[d];
		}
		if (sr_mtensor_add_piece(t, off, size, NULL) == NULL)
			abort();
		for (d = ndim - 1; d >= 0; d--) {
			if (++idx[d] < ncut[d])
				break;
			idx[d] = 0;
		}
		if (d < 0)
			break;
	}
}

static void
free_tensor(struct sr_mtensor *t)
{
	size_t k;

	for (k = 0; k < t->npieces; k++)
		free(t->pieces[k].data.path);
	free(t->pieces);
	free(t->name);
}

static void
rand_box(const struct sr_mtensor *t, struct sr_box *b)
{
	int d;

	b->ndim = t->ndim;
	for (d = 0; d < t->ndim; d++) {
		b->off[d] = rnd(t->shape[d]);
		b->size[d] = 1 + rnd(t->shape[d] - b->off[d]);
	}
}

/* Row-major index of point x in box b. */
static uint64_t
lin(const struct sr_box *b, const uint64_t *x)
{
	uint64_t i = 0;
	int d;

	for (d = 0; d < b->ndim; d++)
		i = i * b->size[d] + (x[d] - b->off[d]);
	return i;
}

/* The value of the tensor's element at x. */
static uint8_t
val(const uint64_t *x, int nd)
{
	uint64_t h = 7;
	int d;

	for (d = 0; d < nd; d++)
		h = h * 131 + x[d];
	return (uint8_t)(h ^ (h >> 8));
}

/* Piece p's bytes (val of each element) through the runs into a buffer
 * of box b, the piece cut into chunks of 1 to 7 bytes: 1 when the buffer
 * holds exactly the overlap's elements; counts the chunks the runs say
 * hold some (touched) against those that do (want). */
static int
check_runs(const struct sr_box *p, const struct sr_box *b, uint64_t *chunks_touched,
    uint64_t *chunks_want)
{
	struct sr_box o;
	struct sr_runs r;
	uint64_t pv = sr_box_volume(p), bv = sr_box_volume(b), x[3], i, from, n;
	uint8_t *pd = sr_calloc(pv + 1, 1), *got = sr_calloc(bv + 1, 1), *want = sr_calloc(bv + 1, 1);
	int d, good;

	if (!sr_box_meet(p, b, &o))
		return free(pd), free(got), free(want), 1;
	for (i = 0; i < pv; i++) {		/* the piece, element by element */
		uint64_t rest = i;
		for (d = p->ndim - 1; d >= 0; d--) {
			x[d] = p->off[d] + rest % p->size[d];
			rest /= p->size[d];
		}
		pd[i] = val(x, p->ndim);
		{
			int in = 1;
			for (d = 0; d < p->ndim; d++)
				in &= x[d] >= o.off[d] && x[d] < o.off[d] + o.size[d];
			if (in)
				want[lin(b, x)] = pd[i];
		}
	}
	sr_runs_init(&r, p, b, &o, 1);
	/* the piece in chunks of random sizes, as a save of another chunk
	 * size would have cut it */
	for (from = 0; from < pv; from += n) {
		n = 1 + rnd(pv - from < 7 ? pv - from : 7);
		int touch = sr_runs_touch(&r, from, n), any = 0;
		for (i = from; i < from + n && !any; i++) {
			uint64_t rest = i;
			int in = 1;
			for (d = p->ndim - 1; d >= 0; d--) {
				uint64_t c = p->off[d] + rest % p->size[d];
				rest /= p->size[d];
				in &= c >= o.off[d] && c < o.off[d] + o.size[d];
			}
			any = in;
		}
		*chunks_want += any;
		*chunks_touched += touch && any;
		if (touch != any)
			*chunks_touched += 1000000;	/* a wrong answer shows */
		if (touch)
			sr_runs_copy(&r, from, n, pd + from, got);
	}
	good = memcmp(got, want, bv) == 0;
	free(pd);
	free(got);
	free(want);
	return good;
}

int
main(void)
{
	int round, ok_query = 1, ok_runs = 1, ok_cover = 1, ndim;
	uint64_t touched = 0, wanted = 0, queries = 0;

	for (round = 0; round < 400; round++) {
		struct sr_mtensor t;
		struct sr_pindex x;
		struct sr_box b, pb, o, gap;
		size_t *hit, n, k, j;

		ndim = 1 + round % 3;
		make_tensor(&t, ndim);
		if (sr_pindex_build(&x, &t, NULL) == -1)
			ok_query = 0;
		hit = sr_calloc(t.npieces + 1, sizeof *hit);
		for (j = 0; j < 10; j++) {
			struct sr_box *meets = sr_calloc(t.npieces + 1, sizeof *meets);
			size_t brute = 0, m = 0;

			rand_box(&t, &b);
			n = sr_pindex_query(&x, &b, hit);
			queries++;
			for (k = 0; k < t.npieces; k++) {
				size_t h;
				int in = 0;
				sr_box_of_piece(&t, &t.pieces[k], &pb);
				for (h = 0; h < n; h++)
					in |= hit[h] == k;
				if (sr_box_meet(&pb, &b, &o)) {
					brute++;
					meets[m++] = o;
					if (!in)
						ok_query = 0;
					if (!check_runs(&pb, &b, &touched, &wanted))
						ok_runs = 0;
				} else if (in)
					ok_query = 0;
			}
			if (brute != n)
				ok_query = 0;
			/* the pieces tile the tensor: every box is covered */
			if (sr_box_covered(&b, meets, m, &gap, NULL) != 1)
				ok_cover = 0;
			/* without one of them, the gap is inside the missing one */
			if (m > 0) {
				size_t drop = (size_t)rnd(m);
				struct sr_box gone = meets[drop];
				meets[drop] = meets[m - 1];
				if (sr_box_covered(&b, meets, m - 1, &gap, NULL) != 0 ||
				    !sr_box_meet(&gap, &gone, &o) ||
				    sr_box_volume(&o) != sr_box_volume(&gap))
					ok_cover = 0;
			}
			free(meets);
		}
		free(hit);
		sr_pindex_free(&x);
		free_tensor(&t);
	}
	ok(ok_query, "the index returns exactly the pieces that meet a box (%" PRIu64 " queries "
	    "of grids of 1 to 3 dimensions)", queries);
	ok(ok_runs, "the runs copy exactly the overlap's elements, through chunks of random sizes");
	ok(touched == wanted, "a chunk is read exactly when it holds a byte of the overlap (%"
	    PRIu64 " of them)", wanted);
	ok(ok_cover, "coverage: the pieces that meet a box cover it; without one, the gap named "
	    "lies inside it");

	/* the tiling check's messages */
	{
		struct sr_mtensor t;
		uint64_t shape[2] = { 7, 5 }, o0[2] = { 0, 0 }, s3[2] = { 3, 5 }, o2[2] = { 2, 0 },
		    o4[2] = { 4, 0 }, s2[2] = { 2, 5 };
		char err[SR_ERRMAX];

		memset(&t, 0, sizeof t);
		t.name = sr_strdup("w");
		t.dtype = SR_DT_F32;
		t.ndim = 2;
		memcpy(t.shape, shape, sizeof shape);
		sr_mtensor_add_piece(&t, o0, s3, NULL);
		sr_mtensor_add_piece(&t, o4, s2, NULL);
		ok(sr_pieces_tile(&t, err) == -1 && strcmp(err, "tensor \"w\": no rank registered the "
		    "box offsets [3,0] sizes [1,5] of its shape") == 0, "a gap between two pieces: %s",
		    err);
		sr_mtensor_add_piece(&t, o2, s3, NULL);
		ok(sr_pieces_tile(&t, err) == -1 && strcmp(err, "tensor \"w\": the pieces at offsets "
		    "[0,0] sizes [3,5] and at offsets [2,0] sizes [3,5] overlap (two ranks registered "
		    "the same elements)") == 0, "two pieces that overlap: %s", err);
		free_tensor(&t);
	}
	return tap_done();
}
