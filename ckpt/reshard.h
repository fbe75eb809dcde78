/*
 * reshard.h: boxes of a tensor and the saved pieces that overlap them
 * (doc/design.md, "Resharding"). A restore onto another number of ranks
 * asks, for each registered box, which saved pieces overlap it, and which
 * of their bytes it needs; the merge of a save by several ranks asks
 * whether the pieces tile their tensor. Both go through an index of a
 * tensor's pieces sorted by their offset along one dimension, so a query
 * costs a binary search and the pieces near the box, not a pass over
 * every piece.
 */
#ifndef SR_RESHARD_H
#define SR_RESHARD_H

#include <stddef.h>
#include <stdint.h>

#include "manifest.h"

/* A box of a tensor: [off[d], off[d] + size[d]) in each of ndim dims. */
struct sr_box {
	int ndim;
	uint64_t off[SR_TENSOR_DIMS], size[SR_TENSOR_DIMS];
};

/* The pieces of a tensor, by their offset along dimension dim (the one
 * along which their offsets differ most): order[] holds piece indices,
 * maxlen the largest size along dim. */
struct sr_pindex {
	const struct sr_mtensor *t;
	int dim;
	size_t *order;
	size_t n;
	uint64_t maxlen;
};

/* The box of piece p of t. */
void sr_box_of_piece(const struct sr_mtensor *t, const struct sr_mpiece *p, struct sr_box *b);
/* Elements of b (0 if any size is 0); 1 for a scalar. */
uint64_t sr_box_volume(const struct sr_box *b);
/* The intersection of a and b into o: 1, or 0 when it is empty. */
int sr_box_meet(const struct sr_box *a, const struct sr_box *b, struct sr_box *o);
/* "[4,8]" into buf. */
const char *sr_dims_str(const uint64_t *v, int n, char *buf, size_t len);
/* "offsets [4,0] sizes [3,8]" into buf. */
const char *sr_box_str(const struct sr_box *b, char *buf, size_t len);

/* Index t's pieces (freed with sr_pindex_free, also after a failure): 0,
 * or -1 with err on out-of-memory. */
int sr_pindex_build(struct sr_pindex *x, const struct sr_mtensor *t, char *err);
void sr_pindex_free(struct sr_pindex *x);
/* The pieces that overlap b with at least one element, into out (at most
 * x->n): their count, in the index's order. */
size_t sr_pindex_query(const struct sr_pindex *x, const struct sr_box *b, size_t *out);

/* Whether the n boxes (inside b) cover b: 1, or 0 with *gap set to a box
 * of b that none of them holds, or -1 with gap->ndim = -1 when there are
 * too many to say which (then only the count is known); SR_BOX_OOM with
 * err on out-of-memory. */
#define SR_BOX_OOM (-2)
int sr_box_covered(const struct sr_box *b, const struct sr_box *boxes, size_t n,
    struct sr_box *gap, char *err);

/* Whether the pieces of t tile its shape (no element in two, none in
 * none): 0, or -1 with err naming t and the two pieces that overlap or a
 * box that no piece holds. */
int sr_pieces_tile(const struct sr_mtensor *t, char *err);

#endif

/*
 * The bytes of a saved piece that a buffer needs, as runs: the overlap
 * o of the piece's box p and the buffer's box b is, in row-major order,
 * count runs of len bytes each, contiguous in the piece and in the buffer
 * (the dims after dim k where o spans both p and b whole belong to a run).
 * Run i starts at byte src(i) of the piece and dst(i) of the buffer, both
 * increasing with i.
 */
struct sr_runs {
	int k;				/* the runs' index spans dims 0 to k - 1 */
	uint64_t count, len;
	uint64_t osize[SR_TENSOR_DIMS];	/* o's sizes: the index's radixes */
	uint64_t sstride[SR_TENSOR_DIMS], dstride[SR_TENSOR_DIMS];	/* bytes */
	uint64_t src0, dst0;		/* run 0 */
};

/* The runs of o (= p meet b, non-empty) for elements of esize bytes. */
void sr_runs_init(struct sr_runs *r, const struct sr_box *p, const struct sr_box *b,
    const struct sr_box *o, size_t esize);
/* Where run i starts in the piece and in the buffer. */
void sr_runs_at(const struct sr_runs *r, uint64_t i, uint64_t *src, uint64_t *dst);
/* The first run that ends after byte x of the piece (count if none). */
uint64_t sr_runs_after(const struct sr_runs *r, uint64_t x);
/* Whether bytes [from, from + n) of the piece hold any byte of a run. */
int sr_runs_touch(const struct sr_runs *r, uint64_t from, uint64_t n);
/* Call fn for what the runs need of bytes [from, from + n) of the piece:
 * each run's part there, len bytes at byte dst of the buffer and at byte
 * at of [from, from + n); stop at the first fn that returns -1: -1, else
 * 0. */
int sr_runs_each(const struct sr_runs *r, uint64_t from, uint64_t n,
    int (*fn)(void *arg, uint64_t dst, uint64_t at, uint64_t len), void *arg);
/* Copy what the runs need of bytes [from, from + n) of the piece, held at
 * src, to the buffer at dst. */
void sr_runs_copy(const struct sr_runs *r, uint64_t from, uint64_t n, const uint8_t *src,
    uint8_t *dst);
