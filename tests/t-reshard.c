/*
 * t-reshard.c: a checkpoint of several ranks (lib/ranks.c, ckpt/gangparts.c)
 * and its restore onto another number of ranks (ckpt/restore-tensors.c,
 * ckpt/reshard.c). Ranks are forked processes, each with a context of
 * its own (params.rank and world_size, or $RANK and $WORLD_SIZE). Saved by
 * N in 1..4 ranks, restored by M in 1..5, bit-exact, for tensors split
 * along dim 0 (7 rows over 3 ranks: uneven), along dim 1 (rows not
 * contiguous), in 2-D blocks, of f32, bf16, i8, i64 and raw bytes, one
 * spanning 16 chunks, and replicated ones (saved once: one piece, chunk k
 * in the pack of the rank whose share holds it, each rank's raw bytes its
 * boxes' and its share's); the parts deleted after the commit. A box of a
 * restore reads only the chunks that hold its bytes (the count and the
 * bytes said, exact). A rank that never saves, ranks at different steps,
 * overlapping or missing boxes: the exact errors on every rank, nothing
 * committed, LATEST unchanged; a later save ignores the failed one's
 * parts and sweeps them. The request protocol: every rank sees the
 * request, rank 0 alone writes the done marker; its deadline bounds the
 * waits. The same collective save through spotrun_save_async (every
 * rank's part from its save's thread, staged whole or in halves; each
 * rank's spotrun_wait returns once LATEST names the commit; a missing
 * rank's exact errors; rank 0's thread answers the request). On file://,
 * and on s3://
 * against the test RGW when there is one (SPOTRUN_TEST_S3_*).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SPOTRUN_EXPERIMENTAL	/* spotrun_save_async */
#include "libspotrun.h"

#include "tap.h"
#include "ckpt-util.h"
#include "mdemu-util.h"
#include "ranks-util.h"
#include "s3-util.h"

#include "catalog.h"
#include "ckpt.h"
#include "latest.h"
#include "manifest.h"
#include "store.h"
#include "util.h"

#define RANKS 5
#define CHUNK 4096

enum split { DIM0, DIM1, BLOCKS, REPL };

struct tdef {
	const char *name;
	spotrun_dtype dt;
	int ndim;
	uint64_t shape[2];
	enum split split;
};

static const struct tdef T[] = {
	{ "big", SPOTRUN_F32, 2, { 64, 256 }, DIM0 },		/* 64 KiB: 16 chunks */
	{ "blocks", SPOTRUN_I8, 2, { 8, 9 }, BLOCKS },
	{ "cols", SPOTRUN_BF16, 2, { 6, 10 }, DIM1 },
	{ "count", SPOTRUN_I64, 0, { 0 }, REPL },
	{ "raw", SPOTRUN_BYTES, 1, { 13 }, DIM0 },
	{ "rep", SPOTRUN_F32, 1, { 3000 }, REPL },		/* 12000 bytes: 3 chunks */
	{ "rows", SPOTRUN_F32, 2, { 7, 5 }, DIM0 },
};
#define NT (sizeof T / sizeof T[0])

struct result {
	int rc;
	long long step;
	int exact;
	char msg[SR_ERRMAX + 64];	/* the error, or the last info line */
	int requested_before, requested_after;
	char latest[32];		/* async: LATEST as spotrun_wait returned */
};

static struct result *res;	/* shared with the children */
static char *top;

static size_t
esize(spotrun_dtype dt)
{
	switch (dt) {
	case SPOTRUN_F32: return 4;
	case SPOTRUN_BF16: return 2;
	case SPOTRUN_I64: return 8;
	default: return 1;
	}
}

static uint64_t
total_elems(const struct tdef *t)
{
	uint64_t n = 1;
	int d;

	for (d = 0; d < t->ndim; d++)
		n *= t->shape[d];
	return n;
}

/* The grid of blocks for w ranks: rows of ranks by columns of ranks. */
static void
grid(int w, int *gr, int *gc)
{
	*gr = w == 3 ? 1 : w == 4 ? 2 : w;
	*gc = w / *gr;
}

/* Rank r of w's box of t. */
static void
box_of(const struct tdef *t, int w, int r, uint64_t *off, uint64_t *size)
{
	int d, gr, gc;

	for (d = 0; d < t->ndim; d++) {
		off[d] = 0;
		size[d] = t->shape[d];
	}
	if (t->split == DIM0 || t->split == DIM1) {
		d = t->split == DIM0 ? 0 : 1;
		off[d] = (uint64_t)r * t->shape[d] / (uint64_t)w;
		size[d] = (uint64_t)(r + 1) * t->shape[d] / (uint64_t)w - off[d];
	} else if (t->split == BLOCKS) {
		grid(w, &gr, &gc);
		off[0] = (uint64_t)(r / gc) * t->shape[0] / (uint64_t)gr;
		size[0] = (uint64_t)(r / gc + 1) * t->shape[0] / (uint64_t)gr - off[0];
		off[1] = (uint64_t)(r % gc) * t->shape[1] / (uint64_t)gc;
		size[1] = (uint64_t)(r % gc + 1) * t->shape[1] / (uint64_t)gc - off[1];
	}
}

/* The whole tensor t of data version v. */
static uint8_t *
global(size_t i, int v)
{
	size_t n = total_elems(&T[i]) * esize(T[i].dt);
	uint8_t *g = sr_malloc(n + 1);

	tu_fill(g, n, (uint64_t)(1000 * v + (int)i));
	return g;
}

/* The box of g (of t) into a buffer, row-major (to: 1), or back (0: the
 * buffer compared with it instead: 1 when equal). */
static int
box_copy(const struct tdef *t, const uint8_t *g, const uint64_t *off, const uint64_t *size,
    uint8_t *buf, int to)
{
	return ru_box_copy(t->ndim, t->shape, esize(t->dt), g, off, size, buf, to);
}

static uint64_t
box_bytes(const struct tdef *t, const uint64_t *size)
{
	uint64_t n = esize(t->dt);
	int d;

	for (d = 0; d < t->ndim; d++)
		n *= size[d];
	return n;
}

/* The children's last message of a level. */
struct cmsg {
	char info[SR_ERRMAX + 64];
};

static void
on_msg(void *opaque, spotrun_msg_level level, const char *text)
{
	struct cmsg *m = opaque;

	if (level == SPOTRUN_MSG_INFO && strstr(text, "retention") == NULL)
		strlcpy(m->info, text, sizeof m->info);
}

static spotrun_ctx *
ctx_of(const char *url, const char *job, int w, int r, struct cmsg *m, size_t staging)
{
	spotrun_params p;
	spotrun_ctx *ctx;

	spotrun_params_init(&p);
	p.store = url;
	p.job = job;
	p.chunk_size = CHUNK;
	p.threads = 2;
	p.keep = 0;
	p.message = on_msg;
	p.message_opaque = m;
	if (w > 0) {		/* else $RANK and $WORLD_SIZE */
		p.rank = r;
		p.world_size = w;
	}
	ctx = spotrun_create(&p);
	spotrun_set_staging_bytes(ctx, staging);
	return ctx;
}

/* What a rank does. */
struct job {
	const char *url, *job;
	int world;		/* -w: from the environment */
	long long step[RANKS];	/* save: each rank's step; -1: it never saves */
	int version;		/* of the data */
	int restore;		/* else save */
	int skip[NT];		/* tensors a rank leaves out: skip[i] = rank + 1 */
	int overlap;		/* "rows": every rank registers rank 0's box */
	const char *wait;	/* SPOTRUN_RANK_WAIT */
	const char *req, *done[RANKS];	/* the request protocol */
	int async;		/* spotrun_save_async, then spotrun_wait */
	size_t staging;		/* spotrun_set_staging_bytes */
};


static int
rank_main(const struct job *j, int r)
{
	int w = j->world < 0 ? -j->world : j->world;
	struct result *out = &res[r];
	uint64_t off[NT][2], size[NT][2];
	uint8_t *g[NT], *buf[NT];
	struct cmsg m;
	spotrun_ctx *ctx;
	size_t i;
	int rc = SPOTRUN_OK, exact = 1;

	memset(&m, 0, sizeof m);
	if (j->wait != NULL)
		setenv("SPOTRUN_RANK_WAIT", j->wait, 1);
	if (j->world < 0) {
		char v[16];
		snprintf(v, sizeof v, "%d", r);
		setenv("RANK", v, 1);
		snprintf(v, sizeof v, "%d", w);
		setenv("WORLD_SIZE", v, 1);
	}
	if (j->req != NULL) {
		setenv("SPOTRUN_CKPT_REQUEST", j->req, 1);
		setenv("SPOTRUN_CKPT_DONE", j->done[r], 1);
	}
	ctx = ctx_of(j->url, j->job, j->world < 0 ? 0 : w, r, &m, j->staging);
	for (i = 0; i < NT; i++) {
		box_of(&T[i], w, j->overlap && strcmp(T[i].name, "rows") == 0 ? 0 : r, off[i],
		    size[i]);
		g[i] = global(i, j->version);
		buf[i] = sr_calloc(box_bytes(&T[i], size[i]) + 1, 1);
		if (!j->restore)
			box_copy(&T[i], g[i], off[i], size[i], buf[i], 1);
		if (j->skip[i] == r + 1)
			continue;
		if (rc == SPOTRUN_OK)
			rc = spotrun_register(ctx, T[i].name, T[i].dt, T[i].ndim, T[i].shape, off[i],
			    size[i], buf[i]);
	}
	out->step = -1;
	out->requested_before = spotrun_checkpoint_requested(ctx);
	if (rc == SPOTRUN_OK && j->restore)
		rc = spotrun_restore(ctx, &out->step);
	else if (rc == SPOTRUN_OK && j->step[r] >= 0 && !j->async)
		rc = spotrun_save(ctx, j->step[r]);
	else if (rc == SPOTRUN_OK && j->step[r] >= 0) {
		struct sr_store *st;
		char err[SR_ERRMAX];

		/* the snapshot taken, the buffers change at once */
		if ((rc = spotrun_save_async(ctx, j->step[r])) == SPOTRUN_OK)
			for (i = 0; i < NT; i++)
				memset(buf[i], 0xa5, box_bytes(&T[i], size[i]));
		if (rc == SPOTRUN_OK)
			rc = spotrun_wait(ctx);
		if (sr_store_open(j->url, &st, err) == 0) {
			ru_latest_text(st, j->job, out->latest, sizeof out->latest);
			sr_store_close(st);
		}
	}
	out->requested_after = spotrun_checkpoint_requested(ctx);
	for (i = 0; i < NT; i++) {
		if (j->restore && rc == SPOTRUN_OK && !box_copy(&T[i], g[i], off[i], size[i], buf[i], 0))
			exact = 0;
		free(g[i]);
		free(buf[i]);
	}
	out->rc = rc;
	out->exact = exact;
	strlcpy(out->msg, rc != SPOTRUN_OK ? spotrun_getErrorString(ctx) : m.info, sizeof out->msg);
	spotrun_free(ctx);
	return 0;
}

static int
rank_entry(const void *j, int r)
{
	return rank_main(j, r);
}

/* Run j's ranks (w of them) as processes, at once; their results in res. */
static void
run_ranks(const struct job *j)
{
	int w = j->world < 0 ? -j->world : j->world, r, died[RANKS];

	memset(res, 0, RANKS * sizeof *res);
	ru_run_ranks(w, rank_entry, j, died);
	for (r = 0; r < w; r++) {
		if (died[r])
			res[r].rc = -100;	/* it died */
	}
}

static struct job
job_of(const char *url, const char *name, int world, long long step, int version)
{
	struct job j;
	int r;

	memset(&j, 0, sizeof j);
	j.url = url;
	j.job = name;
	j.world = world;
	for (r = 0; r < RANKS; r++)
		j.step[r] = step;
	j.version = version;
	return j;
}

/* The keys under prefix: their count. */
static int
count_keys(struct sr_store *st, const char *prefix)
{
	char err[SR_ERRMAX];
	int n = 0;

	if (sr_store_list(st, prefix, su_count_cb, &n, err) != 0)
		return -1;
	return n;
}

static int
json_cb(const struct sr_object_info *info, void *arg)
{
	size_t n = strlen(info->key);

	if (n > 5 && strcmp(info->key + n - 5, ".json") == 0)
		(*(int *)arg)++;
	return 0;
}

/* The manifests under prefix (JOB/manifests/), not their commit records. */
static int
count_manifests(struct sr_store *st, const char *prefix)
{
	char err[SR_ERRMAX];
	int n = 0;

	if (sr_store_list(st, prefix, json_cb, &n, err) != 0)
		return -1;
	return n;
}

static const struct sr_mtensor *
tensor_of(const struct sr_manifest *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->ntensors; i++) {
		if (strcmp(m->tensors[i].name, name) == 0)
			return &m->tensors[i];
	}
	return NULL;
}

/* The piece of mt at offsets off, or NULL. */
static const struct sr_mpiece *
piece_at(const struct sr_mtensor *mt, const uint64_t *off)
{
	size_t k;

	for (k = 0; k < mt->npieces; k++) {
		if (memcmp(mt->pieces[k].offsets, off, (size_t)mt->ndim * sizeof *off) == 0)
			return &mt->pieces[k];
	}
	return NULL;
}

/* What the checkpoint of job saved by w ranks holds. */
static void
check_saved(struct sr_store *st, const char *where, const char *job, int w, uint64_t seq)
{
	struct sr_manifest m;
	char err[SR_ERRMAX], *parts = sr_asprintf("%s/parts/", job);
	int ok_pieces = 1, ok_packs = 1, r, ndist;
	size_t i, k;

	if (sr_catalog_load(st, job, seq, &m, err) != 0) {
		ok(0, "%s: the manifest loads: %s", where, err);
		sr_manifest_free(&m);
		free(parts);
		return;
	}
	is_int(m.stats.world_size, w, "%s: it records world_size %d", where, w);
	for (i = 0; i < NT; i++) {
		const struct sr_mtensor *mt = tensor_of(&m, T[i].name);
		size_t want = T[i].split == REPL ? 1 : (size_t)w;

		if (mt == NULL || mt->npieces != want)
			ok_pieces = 0;
	}
	ok(ok_pieces, "%s: one piece a rank of each sharded tensor, one of each replicated one",
	    where);
	/* chunk k of a replicated tensor in the pack of the rank whose share
	 * holds it: that rank's piece of "rows" is in the same pack */
	for (i = 0; i < NT; i++) {
		const struct sr_mtensor *mt = tensor_of(&m, T[i].name), *rows = tensor_of(&m, "rows");
		uint64_t n, off[2], size[2];

		if (T[i].split != REPL || mt == NULL || rows == NULL)
			continue;
		n = mt->pieces[0].data.nchunks;
		for (k = 0; k < n; k++) {
			const struct sr_mpiece *rp;
			for (r = 0; r < w && !((uint64_t)r * n / (uint64_t)w <= k &&
			    k < (uint64_t)(r + 1) * n / (uint64_t)w); r++)
				;
			box_of(&T[NT - 1], w, r, off, size);
			rp = piece_at(rows, off);
			if (rp == NULL || rp->data.nchunks == 0 ||
			    strcmp(rp->data.chunks[0].pack, mt->pieces[0].data.chunks[k].pack) != 0)
				ok_packs = 0;
		}
	}
	for (i = 0, ndist = 0; i < m.npacks; i++)
		ndist++;
	ok(ok_packs && ndist == w, "%s: each chunk of a replicated tensor was stored by the rank "
	    "whose share holds it (%d packs, one a rank)", where, ndist);
	is_int(count_keys(st, parts), 0, "%s: no part is left under %s", where, parts);
	sr_manifest_free(&m);
	free(parts);
}

/* The bytes each rank stored, as its message says them: rank 0 the
 * checkpoint's (every chunk's clen, all new in a fresh job), rank r its
 * part's, the chunks in its pack (its "rows" piece's). */
static void
check_stored(struct sr_store *st, const char *where, const char *job, int w)
{
	struct sr_manifest m;
	uint64_t mine[RANKS] = { 0 }, all = 0, off[2], size[2], stored, fresh;
	const char *pack[RANKS];
	char err[SR_ERRMAX];
	size_t i, k, c;
	int r, good = 1;

	if (sr_catalog_load(st, job, 0, &m, err) != 0) {
		ok(0, "%s: the manifest loads: %s", where, err);
		sr_manifest_free(&m);
		return;
	}
	for (r = 0; r < w; r++) {
		const struct sr_mpiece *p;
		box_of(&T[NT - 1], w, r, off, size);
		p = piece_at(tensor_of(&m, "rows"), off);
		pack[r] = p != NULL && p->data.nchunks > 0 ? p->data.chunks[0].pack : "";
	}
	for (i = 0; i < m.ntensors; i++) {
		for (k = 0; k < m.tensors[i].npieces; k++) {
			const struct sr_mentry *e = &m.tensors[i].pieces[k].data;
			for (c = 0; c < e->nchunks; c++) {
				all += e->chunks[c].clen;
				for (r = 0; r < w; r++) {
					if (strcmp(e->chunks[c].pack, pack[r]) == 0)
						mine[r] += e->chunks[c].clen;
				}
			}
		}
	}
	for (r = 0; r < w; r++) {
		const char *q = strstr(res[r].msg, "bytes (");
		uint64_t want = r == 0 ? all : mine[r];

		if (q == NULL || sscanf(q, "bytes (%" SCNu64 " stored, %" SCNu64 " new)", &stored,
		    &fresh) != 2 || stored != want || fresh != want) {
			good = 0;
			tap_diag("rank %d: %s (want %" PRIu64 " stored and new)", r, res[r].msg, want);
		}
	}
	ok(good, "%s: each rank's stored and new bytes are its chunks' (rank 0: the "
	    "checkpoint's)", where);
	sr_manifest_free(&m);
}

/* The raw bytes rank r of w saves: its boxes', and its share of each
 * replicated tensor. */
static uint64_t
raw_of_rank(int w, int r)
{
	uint64_t sum = 0, off[2], size[2], b;
	size_t i;

	for (i = 0; i < NT; i++) {
		box_of(&T[i], w, r, off, size);
		b = box_bytes(&T[i], size);
		if (T[i].split == REPL && w > 1)
			b = ru_share_bytes(b, CHUNK, w, r);
		sum += b;
	}
	return sum;
}

/* The raw bytes of every tensor. */
static uint64_t
raw_all(void)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < NT; i++)
		sum += total_elems(&T[i]) * esize(T[i].dt);
	return sum;
}

/* Save by n ranks, then restore by 1 to 5, every byte checked. */
static void
test_matrix(const char *url, struct sr_store *st, const char *tag)
{
	char name[64], where[96], want[256], head[96];
	int n, mm, r, all;

	for (n = 1; n <= 4; n++) {
		struct job j;

		snprintf(name, sizeof name, "%s-n%d", tag, n);
		/* two ranks learn theirs from $RANK and $WORLD_SIZE */
		j = job_of(url, name, n == 2 ? -2 : n, 10 + n, n);
		run_ranks(&j);
		for (r = 0, all = 1; r < n; r++) {
			/* rank 0 says the checkpoint's, the others their own part's */
			snprintf(want, sizeof want, "checkpoint 0 of %s committed: step %d, %zu buffers, "
			    "%" PRIu64 " bytes (", name, 10 + n, NT, r == 0 ? raw_all() : raw_of_rank(n, r));
			if (res[r].rc != SPOTRUN_OK || strncmp(res[r].msg, want, strlen(want)) != 0) {
				all = 0;
				tap_diag("rank %d: rc %d: %s (want %s...)", r, res[r].rc, res[r].msg, want);
			}
		}
		ok(all, "%s: saved by %d rank%s: each says checkpoint 0 committed with its own "
		    "raw bytes (its boxes and its shares)", tag, n, n == 1 ? "" : "s");
		snprintf(where, sizeof where, "%s: %d rank%s", tag, n, n == 1 ? "" : "s");
		if (n > 1) {
			check_saved(st, where, name, n, 0);
			check_stored(st, where, name, n);
		}
		ru_latest_text(st, name, head, sizeof head);
		is_str(head, "0\n", "%s: one move of LATEST", where);
		for (mm = 1; mm <= 5; mm++) {
			j = job_of(url, name, mm, -1, n);
			j.restore = 1;
			run_ranks(&j);
			for (r = 0, all = 1; r < mm; r++) {
				if (res[r].rc != SPOTRUN_OK || res[r].step != 10 + n || !res[r].exact) {
					all = 0;
					tap_diag("rank %d of %d: rc %d step %lld exact %d: %s", r, mm,
					    res[r].rc, res[r].step, res[r].exact, res[r].msg);
				}
			}
			ok(all, "%s: saved by %d, restored by %d: every rank's boxes bit for bit, "
			    "step %d", tag, n, mm, 10 + n);
		}
	}
}

/* The chunks of the pieces of "big" in [c0, c1) of the piece at row
 * offset row: their encoded bytes. */
static uint64_t
clen_of(struct sr_store *st, const char *job, uint64_t row, size_t c0, size_t c1)
{
	struct sr_manifest m;
	const struct sr_mpiece *p;
	uint64_t off[2] = { row, 0 }, sum = 0;
	char err[SR_ERRMAX];
	size_t k;

	if (sr_catalog_load(st, job, 0, &m, err) == 0 &&
	    (p = piece_at(tensor_of(&m, "big"), off)) != NULL) {
		for (k = c0; k < c1 && k < p->data.nchunks; k++)
			sum += p->data.chunks[k].clen;
	}
	sr_manifest_free(&m);
	return sum;
}

/* Restore one box of "big" alone (saved by 2 ranks: rows 0-31, 32-63,
 * 8 chunks of 4 rows each): the message names the chunks read. */
static void
one_box(const char *url, struct sr_store *st, const char *job, uint64_t r0, uint64_t nr,
    uint64_t c0, uint64_t nc, uint64_t chunks, uint64_t bytes, const char *what)
{
	uint64_t off[2] = { r0, c0 }, size[2] = { nr, nc };
	uint8_t *g = global(0, 2), *buf = sr_calloc(nr * nc * 4 + 1, 1);
	struct cmsg m;
	spotrun_ctx *ctx;
	long long step = -1;
	char want[256];
	int rc;

	memset(&m, 0, sizeof m);
	ctx = ctx_of(url, job, 1, 0, &m, 0);
	spotrun_register(ctx, "big", SPOTRUN_F32, 2, T[0].shape, off, size, buf);
	rc = spotrun_restore(ctx, &step);
	ok(rc == SPOTRUN_OK && step == 7 && box_copy(&T[0], g, off, size, buf, 0),
	    "%s: restored bit for bit (rc %d)", what, rc);
	snprintf(want, sizeof want, "checkpoint 0 of %s restored: step 7 (%" PRIu64 " chunk%s "
	    "read, %" PRIu64 " bytes)", job, chunks, chunks == 1 ? "" : "s", bytes);
	is_str(m.info, want, "%s: only the chunks that hold its bytes are read", what);
	spotrun_free(ctx);
	free(g);
	free(buf);
}

static void
test_only_needed(const char *url, struct sr_store *st, const char *tag)
{
	char job[64];
	struct job j;

	snprintf(job, sizeof job, "%s-needed", tag);
	j = job_of(url, job, 2, 7, 2);
	run_ranks(&j);
	ok(res[0].rc == SPOTRUN_OK && res[1].rc == SPOTRUN_OK, "%s: saved by 2 ranks", tag);
	/* rows 30-33: the last chunk of rank 0's piece, the first of rank 1's */
	one_box(url, st, job, 30, 4, 0, 256, 2, clen_of(st, job, 0, 7, 8) +
	    clen_of(st, job, 32, 0, 1), "rows 30-33, across the two pieces");
	/* 16 columns of every row: every chunk holds some */
	one_box(url, st, job, 0, 64, 0, 16, 16, clen_of(st, job, 0, 0, 8) +
	    clen_of(st, job, 32, 0, 8), "columns 0-15 of every row");
	/* one element */
	one_box(url, st, job, 9, 1, 100, 1, 1, clen_of(st, job, 0, 2, 3), "element [9,100]");
	/* exactly rank 1's piece: the fast path */
	one_box(url, st, job, 32, 32, 0, 256, 8, clen_of(st, job, 32, 0, 8),
	    "exactly the piece saved by rank 1");
}

static void
test_failures(const char *url, struct sr_store *st)
{
	char before[96], after[96];
	struct job j;
	pid_t pid;
	int r, i, status;
	char *stale;

	/* a good checkpoint first */
	j = job_of(url, "miss", 3, 4, 1);
	run_ranks(&j);
	ok(res[0].rc == 0 && res[1].rc == 0 && res[2].rc == 0, "miss: step 4 saved by 3 ranks");
	ru_latest_text(st, "miss", before, sizeof before);

	/* rank 2 never saves */
	j = job_of(url, "miss", 3, 5, 2);
	j.step[2] = -1;
	j.wait = "3";
	run_ranks(&j);
	is_int(res[0].rc, SPOTRUN_ERROR_DEADLINE, "a rank that never saves: rank 0 fails");
	is_str(res[0].msg, "checkpoint of miss: rank 2 did not save step 5 within 3s (no part "
	    "miss/parts/0-5-rank2.json); nothing committed", "naming the rank and the step");
	is_int(res[1].rc, SPOTRUN_ERROR_DEADLINE, "rank 1 fails too");
	is_str(res[1].msg, "save miss: step 5: rank 0 committed nothing (it gave up on this save: "
	    "its error says why); nothing committed", "saying that rank 0 gave up");
	ru_latest_text(st, "miss", after, sizeof after);
	is_str(after, before, "LATEST unchanged");
	is_int(count_manifests(st, "miss/manifests/"), 1, "no manifest added");
	is_int(count_keys(st, "miss/parts/"), 0, "rank 1's part deleted");

	/* ranks at different steps */
	j = job_of(url, "steps", 2, 6, 1);
	j.step[1] = 7;
	j.wait = "3";
	run_ranks(&j);
	is_int(res[0].rc, SPOTRUN_ERROR_DEADLINE, "ranks at different steps: rank 0 fails");
	is_str(res[0].msg, "checkpoint of steps: rank 1 did not save step 6 within 3s (no part "
	    "steps/parts/0-6-rank1.json) (rank 1 saved step 7: the ranks saved different steps); "
	    "nothing committed", "naming both steps");
	is_int(res[1].rc, SPOTRUN_ERROR_DEADLINE, "rank 1 fails");
	is_str(res[1].msg, "checkpoint of steps: rank 0 did not commit step 7 within 6s; nothing "
	    "committed", "naming its step");
	ru_latest_text(st, "steps", after, sizeof after);
	is_str(after, "(none)", "nothing committed: no LATEST");
	is_int(count_keys(st, "steps/parts/"), 0, "no part left");

	/* a rank dies waiting, its part of step 5 left behind */
	j = job_of(url, "miss", 3, 5, 99);
	j.wait = "60";
	memset(res, 0, RANKS * sizeof *res);
	fflush(stdout);
	if ((pid = fork()) == 0)
		_exit(rank_main(&j, 1));
	stale = sr_asprintf("%s/miss/parts/0-5-rank1.json", top);
	for (i = 0; i < 3000 && access(stale, F_OK) != 0; i++)
		usleep(10000);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ok(access(stale, F_OK) == 0, "a part left by a rank killed while it waited");
	j = job_of(url, "miss", 3, 6, 3);
	run_ranks(&j);
	ok(res[0].rc == 0 && res[1].rc == 0 && res[2].rc == 0, "the next save, of step 6, commits");
	ok(access(stale, F_OK) != 0, "and deletes the part of the failed save");
	j = job_of(url, "miss", 2, -1, 3);
	j.restore = 1;
	run_ranks(&j);
	ok(res[0].rc == 0 && res[0].step == 6 && res[0].exact && res[1].exact,
	    "the checkpoint holds step 6's data alone, bit for bit");
	free(stale);

	/* boxes that do not tile */
	j = job_of(url, "tile", 2, 3, 1);
	j.overlap = 1;
	run_ranks(&j);
	is_int(res[0].rc, SPOTRUN_ERROR_MISMATCH, "two ranks registering the same rows: refused");
	is_str(res[0].msg, "save tile: step 3: tensor \"rows\": the pieces at offsets [0,0] sizes "
	    "[3,5] and at offsets [0,0] sizes [3,5] overlap (two ranks registered the same "
	    "elements)", "naming the tensor and the boxes");
	j = job_of(url, "tile", 2, 3, 1);
	j.skip[NT - 1] = 2;	/* rank 1 has no "rows" */
	run_ranks(&j);
	is_str(res[0].msg, "save tile: step 3: tensor \"rows\": no rank registered the box "
	    "offsets [3,0] sizes [4,5] of its shape", "a box no rank registered: named");
	j = job_of(url, "tile", 3, 3, 1);
	j.skip[5] = 3;		/* rank 2 has no "rep" */
	run_ranks(&j);
	is_str(res[0].msg, "save tile: step 3: tensor \"rep\" (replicated): no rank's share holds "
	    "chunk 2 of its 3 (a rank did not register it)", "a replicated tensor's share "
	    "missing: its chunk range named");
	for (r = 1; r < 3; r++)
		is_int(res[r].rc, SPOTRUN_ERROR_DEADLINE, "rank %d: rank 0 gave up", r);
	is_int(count_manifests(st, "tile/manifests/"), 0, "nothing committed");
	is_int(count_keys(st, "tile/parts/"), 0, "no part left");
}

static void
test_request(const char *url)
{
	char *req = tu_path(top, "request"), *d0 = tu_path(top, "done0"), *d1 = tu_path(top, "done1");
	char line[256];
	struct job j;
	FILE *fp;

	fp = fopen(req, "w");
	fprintf(fp, "seq=3 reason=periodic deadline=%.3f\n", sr_now() + 120);
	fclose(fp);
	j = job_of(url, "req", 2, 9, 1);
	j.req = req;
	j.done[0] = d0;
	j.done[1] = d1;
	run_ranks(&j);
	ok(res[0].requested_before && res[1].requested_before, "every rank sees the request");
	ok(res[0].rc == 0 && res[1].rc == 0 && !res[0].requested_after && !res[1].requested_after,
	    "both save, and the request is answered on both");
	line[0] = '\0';
	if ((fp = fopen(d0, "r")) != NULL) {
		if (fgets(line, sizeof line, fp) == NULL)
			line[0] = '\0';
		fclose(fp);
	}
	ok(strncmp(line, "seq=3 step=9 checkpoint=0 ", 26) == 0, "rank 0 writes the done "
	    "marker: %s", line);
	ok(access(d1, F_OK) != 0, "rank 1 writes none");
	free(req);
	free(d0);
	free(d1);
}

/* A request's deadline bounds the ranks' waits. */
static void
test_deadline(const char *url)
{
	char *req = tu_path(top, "request-late"), *d = tu_path(top, "done-late");
	struct job j;
	double t0;
	int missing;
	FILE *fp;

	for (missing = 1; missing >= 0; missing--) {
		fp = fopen(req, "w");
		fprintf(fp, "seq=%d reason=notice deadline=%.3f\n", 4 + missing, sr_now() + 1.5);
		fclose(fp);
		j = job_of(url, "late", 2, 3, 1);
		j.req = req;
		j.done[0] = j.done[1] = d;
		j.step[missing] = -1;
		j.wait = "300";
		t0 = sr_now();
		run_ranks(&j);
		if (missing == 1) {
			is_int(res[0].rc, SPOTRUN_ERROR_DEADLINE, "a notice, rank 1 missing: rank 0 "
			    "fails at the deadline");
			is_str(res[0].msg, "checkpoint of late missed its deadline: rank 1 did not save "
			    "step 3 (no part late/parts/0-3-rank1.json); nothing committed", "saying so");
		} else {
			is_int(res[1].rc, SPOTRUN_ERROR_DEADLINE, "a notice, rank 0 missing: rank 1 "
			    "fails at the deadline");
			is_str(res[1].msg, "checkpoint of late missed its deadline: rank 0 did not commit "
			    "step 3; nothing committed", "saying so");
		}
		ok(sr_now() - t0 < 30, "within the deadline, not SPOTRUN_RANK_WAIT's 300 s (%.1f s)",
		    sr_now() - t0);
	}
	ok(access(d, F_OK) != 0, "no done marker");
	free(req);
	free(d);
}

/* The collective save in the background: each rank's spotrun_save_async
 * returns with its snapshot taken (the test scribbles over its buffers at
 * once), its spotrun_wait once the commit of every rank's part is LATEST;
 * also staged in two halves; a missing rank; the request protocol. */
static void
test_async(const char *url, struct sr_store *st)
{
	char name[64], where[96], want[256], head[96], before[96];
	char *req = tu_path(top, "request-async"), *d0 = tu_path(top, "adone0");
	char *d1 = tu_path(top, "adone1"), line[256];
	int n, mm, r, all;
	struct job j;
	FILE *fp;

	for (n = 2; n <= 3; n++) {
		snprintf(name, sizeof name, "async-n%d", n);
		j = job_of(url, name, n, 20 + n, 5 + n);
		j.async = 1;
		/* 3 ranks: a budget of 4 chunks, below each rank's state */
		j.staging = n == 3 ? 4 * CHUNK : 0;
		run_ranks(&j);
		for (r = 0, all = 1; r < n; r++) {
			snprintf(want, sizeof want, "checkpoint 0 of %s committed: step %d, %zu buffers, "
			    "%" PRIu64 " bytes (", name, 20 + n, NT, r == 0 ? raw_all() : raw_of_rank(n, r));
			if (res[r].rc != SPOTRUN_OK || strncmp(res[r].msg, want, strlen(want)) != 0 ||
			    strstr(res[r].msg, "; training blocked ") == NULL) {
				all = 0;
				tap_diag("rank %d: rc %d: %s (want %s...)", r, res[r].rc, res[r].msg, want);
			}
		}
		ok(all, "async, %d ranks%s: each rank's spotrun_wait says checkpoint 0 committed with "
		    "its own raw bytes and the time training was blocked", n, n == 3 ?
		    " (staged in halves)" : "");
		for (r = 0, all = 1; r < n; r++)
			if (strcmp(res[r].latest, "0\n") != 0)
				all = 0;
		ok(all, "async, %d ranks: when spotrun_wait returned on each rank, LATEST named the "
		    "commit", n);
		snprintf(where, sizeof where, "async, %d ranks", n);
		check_saved(st, where, name, n, 0);
		check_stored(st, where, name, n);
		ru_latest_text(st, name, head, sizeof head);
		is_str(head, "0\n", "%s: one move of LATEST", where);
		for (mm = 1; mm <= 5; mm += 2) {
			j = job_of(url, name, mm, -1, 5 + n);
			j.restore = 1;
			run_ranks(&j);
			for (r = 0, all = 1; r < mm; r++) {
				if (res[r].rc != SPOTRUN_OK || res[r].step != 20 + n || !res[r].exact) {
					all = 0;
					tap_diag("rank %d of %d: rc %d step %lld exact %d: %s", r, mm,
					    res[r].rc, res[r].step, res[r].exact, res[r].msg);
				}
			}
			ok(all, "async, saved by %d, restored by %d: every box bit for bit as the "
			    "snapshots took it, step %d", n, mm, 20 + n);
		}
	}

	/* rank 2 never saves: every rank's wait fails, nothing committed */
	ru_latest_text(st, "async-n3", before, sizeof before);
	j = job_of(url, "async-n3", 3, 30, 1);
	j.async = 1;
	j.step[2] = -1;
	j.wait = "3";
	run_ranks(&j);
	is_int(res[0].rc, SPOTRUN_ERROR_DEADLINE, "async, a rank that never saves: rank 0's wait "
	    "fails");
	is_str(res[0].msg, "checkpoint of async-n3: rank 2 did not save step 30 within 3s (no part "
	    "async-n3/parts/0-30-rank2.json); nothing committed", "naming the rank and the step");
	is_int(res[1].rc, SPOTRUN_ERROR_DEADLINE, "rank 1's wait fails too");
	is_str(res[1].msg, "save async-n3: step 30: rank 0 committed nothing (it gave up on this "
	    "save: its error says why); nothing committed", "saying that rank 0 gave up");
	ru_latest_text(st, "async-n3", head, sizeof head);
	is_str(head, before, "LATEST unchanged");
	is_int(count_manifests(st, "async-n3/manifests/"), 1, "no manifest added");
	is_int(count_keys(st, "async-n3/parts/"), 0, "no part left");

	/* the request: rank 0's thread writes the done marker */
	fp = fopen(req, "w");
	fprintf(fp, "seq=7 reason=periodic deadline=%.3f\n", sr_now() + 120);
	fclose(fp);
	j = job_of(url, "async-req", 2, 9, 1);
	j.async = 1;
	j.req = req;
	j.done[0] = d0;
	j.done[1] = d1;
	run_ranks(&j);
	ok(res[0].requested_before && res[1].requested_before, "async: every rank sees the request");
	ok(res[0].rc == 0 && res[1].rc == 0 && !res[0].requested_after && !res[1].requested_after,
	    "both save in the background, and the request is answered on both");
	line[0] = '\0';
	if ((fp = fopen(d0, "r")) != NULL) {
		if (fgets(line, sizeof line, fp) == NULL)
			line[0] = '\0';
		fclose(fp);
	}
	ok(strncmp(line, "seq=7 step=9 checkpoint=0 ", 26) == 0, "rank 0 writes the done marker: "
	    "%s", line);
	ok(access(d1, F_OK) != 0, "rank 1 writes none");
	free(req);
	free(d0);
	free(d1);
}

static void
test_params(const char *url, struct sr_store *st)
{
	struct cmsg m;
	spotrun_ctx *ctx;
	uint64_t x;

	memset(&m, 0, sizeof m);
	setenv("RANK", "x", 1);
	setenv("WORLD_SIZE", "2", 1);
	ctx = ctx_of("file:///nonexistent", "j", 0, 0, &m, 0);
	is_int(spotrun_register(ctx, "x", SPOTRUN_U64, 0, NULL, NULL, NULL, &x),
	    SPOTRUN_ERROR_PARAMETER, "a bad $RANK: SPOTRUN_ERROR_PARAMETER");
	is_str(spotrun_getErrorString(ctx), "spotrun_create: RANK=x is not a rank in [0, 1]",
	    "naming the variable");
	spotrun_free(ctx);
	setenv("WORLD_SIZE", "0", 1);
	ctx = ctx_of("file:///nonexistent", "j", 0, 0, &m, 0);
	is_str(spotrun_getErrorString(ctx), "spotrun_create: WORLD_SIZE=0 is not a world_size in "
	    "[1, 65536]", "a bad $WORLD_SIZE, named");
	spotrun_free(ctx);
	unsetenv("RANK");
	unsetenv("WORLD_SIZE");
	ctx = ctx_of("file:///nonexistent", "j", 2, 2, &m, 0);
	is_str(spotrun_getErrorString(ctx), "spotrun_create: params.rank 2 is outside [0, 1] (-1: "
	    "from $RANK)", "a bad params.rank, named");
	spotrun_free(ctx);
	/* an async collective save whose other rank never comes */
	setenv("SPOTRUN_RANK_WAIT", "1", 1);
	ctx = ctx_of(url, "j", 2, 0, &m, 0);
	unsetenv("SPOTRUN_RANK_WAIT");
	spotrun_register(ctx, "x", SPOTRUN_U64, 0, NULL, NULL, NULL, &x);
	is_int(spotrun_save_async(ctx, 1), SPOTRUN_OK, "save_async of 2 ranks, rank 1 absent: the "
	    "snapshot is taken");
	is_int(spotrun_wait(ctx), SPOTRUN_ERROR_DEADLINE, "spotrun_wait: rank 1 did not come");
	is_str(spotrun_getErrorString(ctx), "checkpoint of j: rank 1 did not save step 1 within 1s "
	    "(no part j/parts/0-1-rank1.json); nothing committed", "naming the rank and the step");
	spotrun_free(ctx);
	is_int(count_manifests(st, "j/manifests/"), 0, "no manifest written");
	is_int(count_keys(st, "j/LATEST"), 0, "no LATEST");
}

int
main(void)
{
	struct sr_store *st;
	char err[SR_ERRMAX], *url, bucket[96];
	const char *ep = su_env("SPOTRUN_TEST_S3_ENDPOINT");

	no_cloud();
	unsetenv("RANK");
	unsetenv("WORLD_SIZE");
	unsetenv("SPOTRUN_CKPT_REQUEST");
	unsetenv("SPOTRUN_CKPT_DONE");
	unsetenv("SPOTRUN_EPOCH");
	res = mmap(NULL, RANKS * sizeof *res, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	    -1, 0);
	if (res == MAP_FAILED)
		sr_fatal("mmap: %s", strerror(errno));
	top = tu_tmpdir("reshard");
	url = sr_asprintf("file://%s", top);
	if (sr_store_open(url, &st, err) != 0)
		sr_fatal("%s", err);
	test_params(url, st);
	test_matrix(url, st, "file");
	test_only_needed(url, st, "file");
	test_failures(url, st);
	test_request(url);
	test_deadline(url);
	test_async(url, st);
	sr_store_close(st);
	free(url);

	if (su_server_maybe("s3://")) {
		su_bucket_new(bucket, sizeof bucket, "reshard");
		url = sr_asprintf("s3://%s/r/?endpoint=%s", bucket, ep);
		if (sr_store_open(url, &st, err) != 0)
			sr_fatal("%s", err);
		test_matrix(url, st, "s3");
		test_only_needed(url, st, "s3");
		sr_store_close(st);
		su_bucket_rm(bucket);
		free(url);
	}
	tu_rmtree(top);
	free(top);
	return tap_done();
}
