/*
 * restore-tensors.c: sr_ckpt_restore_tensors, the newest usable checkpoint
 * back into buffers in memory (the library's registered tensors), along
 * the same walk of candidates as a directory (restore.h). A candidate must
 * hold each buffer's tensor with the same type and shape and a piece of
 * exactly the buffer's box; then each chunk of that piece is read by one
 * ranged read, decoded straight into the buffer and checked (XXH3-128, or
 * the SHA-256 id for a chunk without it) before the next one. One thread:
 * the first increment of the library; readers in parallel come with
 * resharding, which reads pieces of several saved ones.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "chunkhash.h"
#include "ckpt.h"
#include "codec.h"
#include "manifest.h"
#include "restore.h"
#include "util.h"

struct mem_restore {
	const struct sr_ckpt_tensor *t;
	size_t n;
	struct sr_codec *codec;
	struct sr_chunkhash *h;
	uint8_t *cbuf;
	size_t ccap;
};

/* "[4,8]" */
static const char *
dims_str(const uint64_t *v, int n, char *buf, size_t len)
{
	size_t off = 0;
	int d;

	off += (size_t)snprintf(buf, len, "[");
	for (d = 0; d < n && off < len; d++)
		off += (size_t)snprintf(buf + off, len - off, "%s%" PRIu64, d ? "," : "", v[d]);
	if (off < len)
		snprintf(buf + off, len - off, "]");
	return buf;
}

static const struct sr_mtensor *
find_tensor(const struct sr_manifest *m, const char *name)
{
	size_t lo = 0, hi = m->ntensors;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->tensors[mid].name, name);
		if (c == 0)
			return &m->tensors[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The piece of mt saved for buffer t's box, or NULL with why set. */
static const struct sr_mpiece *
match(const struct sr_mtensor *mt, const struct sr_ckpt_tensor *t, char *why)
{
	char a[200], b[200], c[200];
	size_t k;

	if (mt == NULL) {
		sr_err(why, "it has no tensor \"%s\"", t->name);
		return NULL;
	}
	if ((int)mt->dtype != t->dtype) {
		sr_err(why, "tensor \"%s\" is %s there, but registered as %s", t->name,
		    sr_dtype_name(mt->dtype), sr_dtype_name((enum sr_dtype)t->dtype));
		return NULL;
	}
	if (mt->ndim != t->ndim || memcmp(mt->shape, t->shape, (size_t)t->ndim * sizeof *t->shape)) {
		sr_err(why, "tensor \"%s\" has shape %s there, but registered with %s", t->name,
		    dims_str(mt->shape, mt->ndim, a, sizeof a), dims_str(t->shape, t->ndim, b, sizeof b));
		return NULL;
	}
	for (k = 0; k < mt->npieces; k++) {
		const struct sr_mpiece *p = &mt->pieces[k];
		if (memcmp(p->offsets, t->offsets, (size_t)t->ndim * sizeof *t->offsets) == 0 &&
		    memcmp(p->sizes, t->sizes, (size_t)t->ndim * sizeof *t->sizes) == 0)
			return p;
	}
	sr_err(why, "tensor \"%s\" has no saved piece at offsets %s sizes %s (it has %zu other%s; "
	    "restoring a different slicing is not built yet)", t->name,
	    dims_str(t->offsets, t->ndim, a, sizeof a), dims_str(t->sizes, t->ndim, c, sizeof c),
	    mt->npieces, mt->npieces == 1 ? "" : "s");
	return NULL;
}

/* Chunk k of piece p into buffer t: read, decode in place, check. */
static int
fill_chunk(struct mem_restore *r, struct sr_store *st, enum sr_chunk_id cid,
    const struct sr_ckpt_tensor *t, const struct sr_mpiece *p, size_t k, uint64_t off, char *why)
{
	const struct sr_mchunk *c = &p->data.chunks[k];
	char hex[65], got[65], want[65], err[SR_ERRMAX];
	uint8_t id[32], check[16];
	int rc;

	sr_id_hex(cid, c->id, hex);
	if (r->ccap < c->clen) {
		free(r->cbuf);
		r->cbuf = sr_malloc(c->clen);
		r->ccap = c->clen;
	}
	rc = sr_store_read_range(st, c->pack, c->offset, (size_t)c->clen, r->cbuf, err);
	if (rc == SR_STORE_NOTFOUND)
		return sr_err(why, "chunk %s of tensor \"%s\": pack %s is missing", hex, t->name,
		    c->pack);
	if (rc != 0)
		return sr_err(why, "chunk %s of tensor \"%s\": %s", hex, t->name, err);
	if (sr_codec_decode(r->codec, r->cbuf, c->clen, c->xf, (uint8_t *)t->data + off, c->rlen,
	    err) != 0)
		return sr_err(why, "chunk %s of tensor \"%s\": %s", hex, t->name, err);
	if (sr_chunkhash_buf(r->h, c->has_check ? SR_CH_CHECK : SR_CH_ID, (uint8_t *)t->data + off,
	    c->rlen, id, check, err) == -1)
		return sr_err(why, "chunk %s of tensor \"%s\": %s", hex, t->name, err);
	if (c->has_check && memcmp(check, c->check, sizeof check) != 0) {
		sr_hex_of(check, sizeof check, got);
		sr_hex_of(c->check, sizeof c->check, want);
		return sr_err(why, "chunk %s of tensor \"%s\": checksum mismatch (XXH3-128 %s, the "
		    "manifest says %s)", hex, t->name, got, want);
	}
	if (!c->has_check && memcmp(id, c->id, sizeof id) != 0) {
		sr_id_hex(SR_ID_SHA256, id, got);
		return sr_err(why, "chunk %s of tensor \"%s\": checksum mismatch (the data hashes to "
		    "%s)", hex, t->name, got);
	}
	return 0;
}

static int
mem_try(void *arg, struct sr_store *st, const struct sr_ckpt_opts *o, uint64_t seq,
    struct sr_manifest *m, char *why)
{
	struct mem_restore *r = arg;
	const struct sr_mpiece **pieces;
	size_t i, k;
	uint64_t off;

	if (sr_catalog_load(st, o->job, seq, m, why) != 0)
		return TRY_BAD;
	if (m->ntensors == 0 && r->n > 0) {
		sr_err(why, "it holds %s, not tensors (a directory checkpoint)",
		    m->nentries > 0 ? "files" : "nothing");
		return TRY_MISMATCH;
	}
	/* All matched before a byte is written. */
	pieces = sr_calloc(r->n + 1, sizeof *pieces);
	for (i = 0; i < r->n; i++) {
		if ((pieces[i] = match(find_tensor(m, r->t[i].name), &r->t[i], why)) == NULL) {
			free(pieces);
			return TRY_MISMATCH;
		}
	}
	for (i = 0; i < r->n; i++) {
		for (k = 0, off = 0; k < pieces[i]->data.nchunks; k++) {
			if (sr_flag_get(o->cancel)) {
				free(pieces);
				return TRY_CANCELLED;
			}
			if (fill_chunk(r, st, m->chunk_id, &r->t[i], pieces[i], k, off, why) == -1) {
				free(pieces);
				return TRY_BAD;
			}
			off += pieces[i]->data.chunks[k].rlen;
		}
	}
	free(pieces);
	return TRY_OK;
}

int
sr_ckpt_restore_tensors(struct sr_store *st, const struct sr_ckpt_opts *opts,
    const struct sr_ckpt_tensor *t, size_t n, struct sr_ckpt_stats *stats, char *err)
{
	struct mem_restore r;
	int rc, unusable = 0;

	memset(&r, 0, sizeof r);
	r.t = t;
	r.n = n;
	if ((r.codec = sr_codec_new(1)) == NULL)
		return sr_err(err, "restore %s: cannot create a chunk codec", opts->job);
	r.h = sr_chunkhash_new();
	rc = sr_restore_walk(st, opts, NULL, mem_try, &r, stats, &unusable, err);
	sr_chunkhash_free(r.h);
	sr_codec_free(r.codec);
	free(r.cbuf);
	return rc == -1 && unusable ? SR_CKPT_UNUSABLE : rc;
}
