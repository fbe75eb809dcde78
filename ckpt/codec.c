/*
 * codec.c: one checkpoint chunk <-> concatenated zstd frames (see codec.h).
 *
 * Encoding: a sample of the chunk (up to SAMPLE_SLICES slices) is compressed
 * as it is and as byte planes of width 2 and 4; the smallest estimate wins,
 * with a margin so that a wider transform must earn its keep. The sample
 * also says which planes are noise (mantissa bytes): those are written as
 * raw frames straight away, without spending CPU on a compression attempt.
 * A plane that is compressed but does not shrink below RAW_KEEP of its size
 * is written raw as well, so decoding it is a copy.
 *
 * Decoding does not need to know the plane boundaries: the frames'
 * contents, concatenated, are the split chunk, which must be exactly rlen
 * bytes; the transform is then undone. Every frame is bounded by what is
 * left of rlen before zstd sees it, so no frame can write past dst.
 */
#include "config.h"

#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_c_literalCompressionMode */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "byteplane.h"
#include "codec.h"
#include "util.h"
#include "zframe.h"

/* Sampling: slices at the start, middle and end of the chunk, each at
 * most SAMPLE_SLICE and at most 1/SAMPLE_SHARE of the chunk: the three
 * probes compress the sample three times, which was 56% of the work on
 * top of the chunk's own at 1 MiB chunks with whole slices (9% now), 3.5%
 * at 16 MiB (the same as before). */
#define SAMPLE_SLICES 3
#define SAMPLE_SLICE ((size_t)64 * 1024)
#define SAMPLE_SHARE 32
/* Chunks smaller than this are not worth sampling: no transform. */
#define SAMPLE_MIN ((size_t)4096)
/* A frame is kept compressed only below this fraction of its raw size (31/32). */
#define RAW_KEEP(len) ((len) - (len) / 32)
/* A wider transform is chosen only if it beats the best so far by 1%. */
#define CHOOSE_MARGIN(best) ((best) - (best) / 100)
/* Pieces smaller than this are written raw: a compressed frame would not
 * win back its header. */
#define COMPRESS_MIN 64

/*
 * Byte planes are compressed with zstd's fastest strategy at its largest
 * acceleration, with Huffman coding of literals forced on (negative levels
 * turn it off by default): the match finder then barely runs and the frames
 * are almost pure entropy coding, which is where the gain on exponent planes
 * is. Measured on 64 MiB of N(0, 0.02) bf16 (doc/benchmarks.md): level 1
 * gives 0.684 of raw at 0.6 GB/s, this 0.670 at 1.4 GB/s (bound ~0.666).
 */
#define PLANE_LEVEL (-1000)

struct sr_codec {
	int level;
	ZSTD_CCtx *cctx;	/* untransformed chunks: the caller's level */
	ZSTD_CCtx *pctx;	/* byte planes: PLANE_LEVEL */
	ZSTD_DCtx *dctx;
	uint8_t *planes;	/* a split chunk: encode source or decode output */
	size_t planes_cap;
	uint8_t *sample;	/* sample, its planes, compression output */
	size_t sample_cap;
};

/* Which planes of the chosen transform to try compressing. */
struct plan {
	unsigned width;
	int compress[4];
};

static int
set_param(ZSTD_CCtx *cctx, ZSTD_cParameter p, int v)
{
	return ZSTD_isError(ZSTD_CCtx_setParameter(cctx, p, v)) ? -1 : 0;
}

/* A zstd error as err: its allocation failure is out-of-memory (never
 * "a bad frame", which a restore would take for a damaged checkpoint). */
static int
zstd_err(char *err, const char *what, size_t pos, size_t r)
{
	char where[96];

	snprintf(where, sizeof where, pos == (size_t)-1 ? "%s: zstd" : "%s: frame at byte %zu",
	    what, pos);
	if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
		return sr_err_oom(err, where);
	return sr_err(err, "%s: %s", where, ZSTD_getErrorName(r));
}

struct sr_codec *
sr_codec_new(int level, char *err)
{
	struct sr_codec *c = sr_try_calloc(1, sizeof *c, err);

	if (c == NULL)
		return NULL;
	c->level = level;
	c->cctx = ZSTD_createCCtx();
	c->pctx = ZSTD_createCCtx();
	c->dctx = ZSTD_createDCtx();
	if (c->cctx == NULL || c->pctx == NULL || c->dctx == NULL) {
		sr_codec_free(c);
		sr_err_oom(err, "create zstd contexts");
		return NULL;
	}
	/* The frames carry their content size (the decoder checks it); no zstd
	 * checksum: the manifest has a checksum of every chunk. */
	if (set_param(c->cctx, ZSTD_c_compressionLevel, level) == -1 ||
	    set_param(c->cctx, ZSTD_c_contentSizeFlag, 1) == -1 ||
	    set_param(c->cctx, ZSTD_c_checksumFlag, 0) == -1) {
		sr_codec_free(c);
		sr_err(err, "create chunk codec: zstd refuses compression level %d", level);
		return NULL;
	}
	/* A libzstd without the literals switch gets level 1 for planes. */
	if (set_param(c->pctx, ZSTD_c_compressionLevel, PLANE_LEVEL) == -1 ||
	    set_param(c->pctx, ZSTD_c_literalCompressionMode, ZSTD_ps_enable) == -1)
		set_param(c->pctx, ZSTD_c_compressionLevel, 1);
	set_param(c->pctx, ZSTD_c_contentSizeFlag, 1);
	set_param(c->pctx, ZSTD_c_checksumFlag, 0);
	return c;
}

void
sr_codec_free(struct sr_codec *c)
{
	if (c == NULL)
		return;
	ZSTD_freeCCtx(c->cctx);
	ZSTD_freeCCtx(c->pctx);
	ZSTD_freeDCtx(c->dctx);
	free(c->planes);
	free(c->sample);
	free(c);
}

size_t
sr_codec_bound(size_t n)
{
	/* Every piece (at most 4 planes, the last with the tail) written raw. */
	size_t extra = 4 * SR_ZFRAME_HEADER_MAX + 3 * (n / SR_ZFRAME_BLOCK_MAX + 4);

	return n > SIZE_MAX - extra ? SIZE_MAX : n + extra;
}

const char *
sr_transform_name(int xf)
{
	switch (xf) {
	case SR_XF_NONE:
		return "none";
	case SR_XF_PLANE2:
		return "plane2";
	case SR_XF_PLANE4:
		return "plane4";
	}
	return NULL;
}

int
sr_transform_parse(const char *name)
{
	static const int all[] = { SR_XF_NONE, SR_XF_PLANE2, SR_XF_PLANE4 };
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(all); i++)
		if (name != NULL && strcmp(name, sr_transform_name(all[i])) == 0)
			return all[i];
	return -1;
}

/* Element width of a transform: 1, 2 or 4; 0 if unknown. */
static unsigned
xf_width(int xf)
{
	switch (xf) {
	case SR_XF_NONE:
		return 1;
	case SR_XF_PLANE2:
		return 2;
	case SR_XF_PLANE4:
		return 4;
	}
	return 0;
}

/* At least need bytes at *buf (its old contents dropped): 0, or -1 with
 * err and *buf as it was. */
static int
grow(uint8_t **buf, size_t *cap, size_t need, char *err)
{
	uint8_t *b;

	if (*cap >= need)
		return 0;
	if ((b = sr_try_bigbuf(need, need, err)) == NULL)	/* a chunk's planes: huge pages */
		return -1;
	free(*buf);
	*buf = b;
	*cap = need;
	return 0;
}

/* Copy up to SAMPLE_SLICES slices of src into out; returns the sample size,
 * a multiple of 16 so that elements stay aligned for any width. A chunk
 * too small for SAMPLE_SLICES slices of SAMPLE_MIN gets one slice from its
 * middle (past a file's header), 1/SAMPLE_SHARE of it but at least
 * SAMPLE_MIN: three slices of SAMPLE_MIN were 12 KiB of a 32 KiB file's
 * chunk, probed three times, more work than the chunk's own compression
 * (a save of 10,000 such files, doc/benchmarks.md). */
static size_t
take_sample(const uint8_t *src, size_t n, uint8_t *out)
{
	size_t i, len = 0, slice = n / SAMPLE_SHARE / SAMPLE_SLICES & ~(size_t)15;
	size_t slices = SAMPLE_SLICES;

	if (slice > SAMPLE_SLICE)
		slice = SAMPLE_SLICE;
	if (slice < SAMPLE_MIN) {
		slices = 1;
		slice = n / SAMPLE_SHARE & ~(size_t)15;
		if (slice < SAMPLE_MIN)
			slice = SAMPLE_MIN;
	}
	if (n <= slices * slice) {
		len = n & ~(size_t)15;
		memcpy(out, src, len);
		return len;
	}
	if (slices == 1) {
		memcpy(out, src + ((n - slice) / 2 & ~(size_t)15), slice);
		return slice;
	}
	for (i = 0; i < SAMPLE_SLICES; i++) {
		size_t off = (n - slice) / (SAMPLE_SLICES - 1) * i;

		off &= ~(size_t)15;
		memcpy(out + len, src + off, slice);
		len += slice;
	}
	return len;
}

/* Compressed size of a sample piece if it is worth compressing, else its
 * raw size with *raw set. */
static size_t
probe_piece(ZSTD_CCtx *cctx, const uint8_t *p, size_t len, uint8_t *out, size_t cap,
    int *raw)
{
	size_t r;

	*raw = 1;
	if (len < COMPRESS_MIN)
		return len;
	r = ZSTD_compress2(cctx, out, cap, p, len);
	if (ZSTD_isError(r) || r >= RAW_KEEP(len))
		return len;
	*raw = 0;
	return r;
}

/* Estimated encoded size of the sample under width w; fills pl. */
static size_t
probe(struct sr_codec *c, const uint8_t *s, size_t slen, unsigned w, struct plan *pl)
{
	uint8_t *planes = c->sample + slen, *out = planes + slen;
	size_t m = slen / w, total = 0, cap = ZSTD_compressBound(slen);
	unsigned k;
	int raw;

	pl->width = w;
	if (w == 1) {
		total = probe_piece(c->cctx, s, slen, out, cap, &raw);
		pl->compress[0] = !raw;
		return total;
	}
	sr_byteplane_split(s, slen, w, planes);
	for (k = 0; k < w; k++) {
		total += probe_piece(c->pctx, planes + k * m, m, out, cap, &raw);
		pl->compress[k] = !raw;
	}
	return total;
}

/* Decide the plan for src: force (an SR_XF_* value) or -1 for the best;
 * -1 with err if its scratch cannot be allocated. */
static int
choose(struct sr_codec *c, const uint8_t *src, size_t n, int force, struct plan *pl,
    char *err)
{
	static const unsigned widths[] = { 1, 2, 4 };
	struct plan try;
	size_t slen, best = 0, est, i;

	if (n < SAMPLE_MIN) {
		/* too small to sample: compress everything, raw if that fails */
		pl->width = force >= 0 ? xf_width(force) : 1;
		for (i = 0; i < 4; i++)
			pl->compress[i] = 1;
		return 0;
	}
	if (grow(&c->sample, &c->sample_cap, 2 * SAMPLE_SLICES * SAMPLE_SLICE +
	    ZSTD_compressBound(SAMPLE_SLICES * SAMPLE_SLICE), err) == -1)
		return sr_err_prefix(err, "encode chunk");
	slen = take_sample(src, n, c->sample);
	if (force >= 0) {
		probe(c, c->sample, slen, xf_width(force), pl);
		return 0;
	}
	for (i = 0; i < SR_ARRAY_LEN(widths); i++) {
		est = probe(c, c->sample, slen, widths[i], &try);
		if (i == 0 || est < CHOOSE_MARGIN(best)) {
			best = est;
			*pl = try;
		}
	}
	return 0;
}

/* The plan for src that holds its byte planes of width w already (split
 * on a GPU, SR_CODEC_SPLIT): each plane probed on a sample of its own. */
static int
choose_split(struct sr_codec *c, const uint8_t *src, size_t n, unsigned w, struct plan *pl,
    char *err)
{
	size_t m = n / w, cap = ZSTD_compressBound(SAMPLE_SLICES * SAMPLE_SLICE), slen;
	unsigned k;
	int raw;

	pl->width = w;
	for (k = 0; k < 4; k++)
		pl->compress[k] = 1;
	if (n < SAMPLE_MIN)
		return 0;
	if (grow(&c->sample, &c->sample_cap, SAMPLE_SLICES * SAMPLE_SLICE + cap, err) == -1)
		return sr_err_prefix(err, "encode chunk");
	for (k = 0; k < w; k++) {
		slen = take_sample(src + k * m, m, c->sample);
		probe_piece(c->pctx, c->sample, slen, c->sample + SAMPLE_SLICES * SAMPLE_SLICE, cap,
		    &raw);
		pl->compress[k] = !raw;
	}
	return 0;
}

/* Append one frame holding p (len bytes) at dst + *pos. */
static int
emit(ZSTD_CCtx *cctx, const uint8_t *p, size_t len, int compress, uint8_t *dst,
    size_t cap, size_t *pos, char *err)
{
	size_t r;

	if (compress && len >= COMPRESS_MIN) {
		/* Too little room makes zstd give up as soon as it cannot win. */
		size_t limit = RAW_KEEP(len);

		if (limit > cap - *pos)
			limit = cap - *pos;
		r = ZSTD_compress2(cctx, dst + *pos, limit, p, len);
		if (!ZSTD_isError(r) && r < RAW_KEEP(len)) {
			*pos += r;
			return 0;
		}
		if (ZSTD_isError(r) && ZSTD_getErrorCode(r) != ZSTD_error_dstSize_tooSmall)
			return zstd_err(err, "encode chunk", (size_t)-1, r);
	}
	r = sr_zframe_write_raw(dst + *pos, cap - *pos, p, len);
	if (r == 0)
		return sr_err(err, "encode chunk: output buffer too small");
	*pos += r;
	return 0;
}

int
sr_codec_encode(struct sr_codec *c, const void *src, size_t n, int force,
    void *dst, size_t cap, size_t *outlen, enum sr_transform *xf, char *err)
{
	const uint8_t *s = src, *planes;
	uint8_t *out = dst;
	struct plan pl;
	size_t pos = 0, m;
	unsigned k;
	int split = force != -1 && (force & SR_CODEC_SPLIT) != 0;

	force &= split ? ~SR_CODEC_SPLIT : ~0;
	if (force != -1 && xf_width(force) == 0)
		return sr_err(err, "encode chunk: unknown transform %d", force);
	if (split && force == SR_XF_NONE)
		return sr_err(err, "encode chunk: planes of width 1 (transform none)");
	if (n > SR_CODEC_MAX_CHUNK)
		return sr_err(err, "encode chunk: %zu bytes, more than the %zu a chunk may hold",
		    n, SR_CODEC_MAX_CHUNK);
	if (cap < sr_codec_bound(n))
		return sr_err(err, "encode chunk: output buffer of %zu bytes, %zu needed",
		    cap, sr_codec_bound(n));
	if ((split ? choose_split(c, s, n, xf_width(force), &pl, err) :
	    choose(c, s, n, force, &pl, err)) == -1)
		return -1;
	m = n / pl.width;
	if (pl.width == 1 || m == 0) {
		/* also chunks shorter than one element: all tail, nothing to split */
		if (emit(c->cctx, s, n, pl.compress[0], out, cap, &pos, err) == -1)
			return -1;
	} else {
		planes = s;
		if (!split) {
			if (grow(&c->planes, &c->planes_cap, n, err) == -1)
				return sr_err_prefix(err, "encode chunk");
			sr_byteplane_split(s, n, pl.width, c->planes);
			planes = c->planes;
		}
		for (k = 0; k < pl.width; k++) {
			/* the last plane's frame carries the n % width tail */
			size_t len = k + 1 < pl.width ? m : n - k * m;

			if (emit(c->pctx, planes + k * m, len, pl.compress[k], out, cap,
			    &pos, err) == -1)
				return -1;
		}
	}
	*outlen = pos;
	*xf = pl.width == 1 ? SR_XF_NONE : pl.width == 2 ? SR_XF_PLANE2 : SR_XF_PLANE4;
	return 0;
}

/* Decode the frames of src into exactly rlen bytes at out. */
static int
decode_frames(struct sr_codec *c, const uint8_t *src, size_t clen, uint8_t *out,
    size_t rlen, char *err)
{
	size_t pos = 0, done = 0;

	if (clen == 0)
		return sr_err(err, "decode chunk: no zstd frame");
	while (pos < clen) {
		size_t left = rlen - done, fsize, used, made, r;
		unsigned long long fcs;

		if (sr_zframe_copy_raw(src + pos, clen - pos, out != NULL ? out + done : NULL, left,
		    &used, &made)) {
			pos += used;
			done += made;
			continue;
		}
		fsize = ZSTD_findFrameCompressedSize(src + pos, clen - pos);
		if (ZSTD_isError(fsize))
			return sr_err(err, "decode chunk: frame at byte %zu: %s", pos,
			    ZSTD_getErrorName(fsize));
		fcs = ZSTD_getFrameContentSize(src + pos, fsize);
		if (fcs == ZSTD_CONTENTSIZE_ERROR)
			return sr_err(err, "decode chunk: frame at byte %zu: bad frame header", pos);
		if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs > left)
			return sr_err(err, "decode chunk: frame at byte %zu holds %llu bytes, "
			    "more than the %zu left of the chunk's %zu", pos, fcs, left, rlen);
		r = ZSTD_decompressDCtx(c->dctx, out + done,
		    fcs == ZSTD_CONTENTSIZE_UNKNOWN ? left : (size_t)fcs, src + pos, fsize);
		if (ZSTD_isError(r)) {
			if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall &&
			    fcs != ZSTD_CONTENTSIZE_UNKNOWN)
				return sr_err(err, "decode chunk: frame at byte %zu: more content "
				    "than the %llu bytes its header says", pos, fcs);
			if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall)
				return sr_err(err, "decode chunk: frame at byte %zu holds more than "
				    "the %zu bytes left of the chunk's %zu", pos, left, rlen);
			return zstd_err(err, "decode chunk", pos, r);
		}
		if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && r != fcs)
			return sr_err(err, "decode chunk: frame at byte %zu: %zu bytes, header "
			    "says %llu", pos, r, fcs);
		pos += fsize;
		done += r;
	}
	if (done != rlen)
		return sr_err(err, "decode chunk: frames hold %zu bytes, expected %zu", done, rlen);
	return 0;
}

int
sr_codec_decode(struct sr_codec *c, const void *src, size_t clen, enum sr_transform xf,
    void *dst, size_t rlen, char *err)
{
	unsigned w = xf_width((int)xf);

	if (w == 0)
		return sr_err(err, "decode chunk: unknown transform %d", (int)xf);
	if (rlen > SR_CODEC_MAX_CHUNK)
		return sr_err(err, "decode chunk: %zu bytes, more than the %zu a chunk may hold",
		    rlen, SR_CODEC_MAX_CHUNK);
	if (w == 1)
		return decode_frames(c, src, clen, dst, rlen, err);
	if (grow(&c->planes, &c->planes_cap, rlen, err) == -1)
		return sr_err_prefix(err, "decode chunk");
	if (decode_frames(c, src, clen, c->planes, rlen, err) == -1)
		return -1;
	sr_byteplane_join(c->planes, rlen, w, dst);
	return 0;
}
