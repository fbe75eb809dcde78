/*
 * t-codec.c: the chunk codec (ckpt/codec.c) and its raw frames
 * (ckpt/zframe.c): round trips of every kind of input under every
 * transform, the transform the sampler picks, the frame bytes, `zstd -d`
 * reading what the codec writes, and refusal of bad input: wrong sizes,
 * truncation, corruption, decompression bombs, a seeded fuzz loop. Decoding
 * always goes into a buffer of exactly rlen bytes, so an overrun shows under
 * ASan (--enable-sanitizers).
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "byteplane.h"
#include "codec.h"
#include "tap.h"
#include "util.h"
#include "zframe.h"

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static float
normal(uint64_t *s, double sigma)
{
	double u1 = ((rnd(s) >> 11) + 0.5) / 9007199254740992.0;
	double u2 = ((rnd(s) >> 11) + 0.5) / 9007199254740992.0;

	return (float)(sigma * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2));
}

enum kind { K_RANDOM, K_ZERO, K_BF16, K_FP32, K_TEXT, K_NKINDS };
static const char *kind_name[] = { "random", "zeros", "bf16", "fp32", "text" };

static uint8_t *
make(enum kind k, size_t n, uint64_t seed)
{
	uint8_t *b = sr_malloc(n);
	size_t i;

	for (i = 0; i < n;) {
		float f;
		uint32_t u;

		switch (k) {
		case K_RANDOM:
			b[i++] = (uint8_t)rnd(&seed);
			break;
		case K_ZERO:
			b[i++] = 0;
			break;
		case K_BF16:
			f = normal(&seed, 0.02);
			memcpy(&u, &f, 4);
			u += 0x7fff + ((u >> 16) & 1);
			b[i++] = (uint8_t)(u >> 16);
			if (i < n)
				b[i++] = (uint8_t)(u >> 24);
			break;
		case K_FP32:
			f = normal(&seed, 0.02);
			memcpy(&u, &f, 4);
			for (int j = 0; j < 4 && i < n; j++)
				b[i++] = (uint8_t)(u >> (8 * j));
			break;
		default:
			b[i] = (uint8_t)"the quick brown fox jumps over the lazy dog\n"[i % 44];
			i++;
			break;
		}
	}
	return b;
}

/* Encode src (force: SR_XF_* or -1) into a malloc'd buffer. */
static uint8_t *
encode(struct sr_codec *c, const uint8_t *src, size_t n, int force, size_t *clen,
    enum sr_transform *xf, char *err)
{
	size_t cap = sr_codec_bound(n);
	uint8_t *out = sr_malloc(cap);

	if (sr_codec_encode(c, src, n, force, out, cap, clen, xf, err) == -1) {
		free(out);
		return NULL;
	}
	return out;
}

/* Decode into an exact-size buffer; returns it (NULL on error). */
static uint8_t *
decode(struct sr_codec *c, const uint8_t *enc, size_t clen, int xf, size_t rlen, char *err)
{
	uint8_t *out = sr_malloc(rlen);

	if (sr_codec_decode(c, enc, clen, (enum sr_transform)xf, out, rlen, err) == -1) {
		free(out);
		return NULL;
	}
	return out;
}

static int
roundtrip(struct sr_codec *c, const uint8_t *src, size_t n, int force, char *why)
{
	char err[SR_ERRMAX];
	enum sr_transform xf;
	size_t clen;
	uint8_t *enc, *dec;
	int r = 0;

	if ((enc = encode(c, src, n, force, &clen, &xf, err)) == NULL) {
		snprintf(why, SR_ERRMAX, "encode: %s", err);
		return -1;
	}
	if (force >= 0 && (int)xf != force) {
		snprintf(why, SR_ERRMAX, "forced %d, got %d", force, xf);
		r = -1;
	} else if (clen > sr_codec_bound(n)) {
		snprintf(why, SR_ERRMAX, "%zu bytes over the bound", clen);
		r = -1;
	} else if ((dec = decode(c, enc, clen, xf, n, err)) == NULL) {
		snprintf(why, SR_ERRMAX, "decode: %s", err);
		r = -1;
	} else {
		if (n > 0 && memcmp(dec, src, n) != 0) {
			snprintf(why, SR_ERRMAX, "decoded bytes differ");
			r = -1;
		}
		free(dec);
	}
	free(enc);
	return r;
}

static void
test_roundtrips(struct sr_codec *c)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 5, 15, 16, 63, 64, 65, 4095, 4096, 4099,
		100003, 196608, 196611, (1 << 20) + 3, (3 << 20) + 2 };
	static const int forces[] = { -1, SR_XF_NONE, SR_XF_PLANE2, SR_XF_PLANE4 };
	char why[SR_ERRMAX];
	size_t i, f;
	int k;

	for (k = 0; k < K_NKINDS; k++) {
		for (f = 0; f < SR_ARRAY_LEN(forces); f++) {
			int bad = 0;

			for (i = 0; i < SR_ARRAY_LEN(sizes) && !bad; i++) {
				uint8_t *src = make(k, sizes[i], 1000 + i);

				if (roundtrip(c, src, sizes[i], forces[f], why) == -1) {
					tap_diag("%s, %zu bytes: %s", kind_name[k], sizes[i], why);
					bad = 1;
				}
				free(src);
			}
			ok(!bad, "round trip of %s data, 0 bytes to 3 MiB, transform %s", kind_name[k],
			    forces[f] < 0 ? "auto" : sr_transform_name(forces[f]));
		}
	}
}

/* Planes split elsewhere (a GPU) encode as they are (SR_CODEC_SPLIT), and
 * decode to the elements; as small as the codec's own split of them. */
static void
test_presplit(struct sr_codec *c)
{
	static const size_t sizes[] = { 0, 1, 3, 4095, 4099, 196611, (1 << 20) + 3 };
	static const struct { int kind, xf; } cases[] = {
		{ K_BF16, SR_XF_PLANE2 }, { K_FP32, SR_XF_PLANE4 }, { K_RANDOM, SR_XF_PLANE4 },
	};
	size_t i, k, clen, own;
	char err[SR_ERRMAX];
	enum sr_transform xf, oxf;
	uint8_t *src, *planes, *enc, *dec, *oenc;
	int bad;

	for (k = 0; k < SR_ARRAY_LEN(cases); k++) {
		bad = 0;
		for (i = 0; i < SR_ARRAY_LEN(sizes) && !bad; i++) {
			size_t n = sizes[i];

			src = make(cases[k].kind, n, 50 + i);
			planes = sr_malloc(n + 1);
			sr_byteplane_split(src, n, (unsigned)cases[k].xf, planes);
			enc = encode(c, planes, n, cases[k].xf | SR_CODEC_SPLIT, &clen, &xf, err);
			oenc = encode(c, src, n, cases[k].xf, &own, &oxf, err);
			dec = enc != NULL ? decode(c, enc, clen, xf, n, err) : NULL;
			bad = enc == NULL || dec == NULL || (int)xf != cases[k].xf ||
			    (n > 0 && memcmp(dec, src, n) != 0) || oenc == NULL ||
			    clen > own + own / 50 + 64;
			if (bad)
				tap_diag("%s, %zu bytes: %s (%zu bytes, own split %zu)",
				    kind_name[cases[k].kind], n, enc == NULL || dec == NULL ? err :
				    "differs or larger", clen, own);
			free(src);
			free(planes);
			free(enc);
			free(dec);
			free(oenc);
		}
		ok(!bad, "%s data split beforehand (SR_CODEC_SPLIT, %s): decodes to the elements, "
		    "no larger than the codec's own split", kind_name[cases[k].kind],
		    sr_transform_name(cases[k].xf));
	}
	src = sr_malloc(64);
	memset(src, 0, 64);
	ok(encode(c, src, 64, SR_XF_NONE | SR_CODEC_SPLIT, &clen, &xf, err) == NULL &&
	    strcmp(err, "encode chunk: planes of width 1 (transform none)") == 0,
	    "planes of transform none are refused: %s", err);
	free(src);
}

static void
test_choice(struct sr_codec *c)
{
	static const int want[K_NKINDS] = { SR_XF_NONE, SR_XF_NONE, SR_XF_PLANE2,
		SR_XF_PLANE4, SR_XF_NONE };
	size_t n = 4 << 20, clen;
	char err[SR_ERRMAX];
	enum sr_transform xf;
	int k;

	for (k = 0; k < K_NKINDS; k++) {
		uint8_t *src = make(k, n, 7 + k), *enc = encode(c, src, n, -1, &clen, &xf, err);

		ok(enc != NULL && (int)xf == want[k], "auto picks %s for %s data (got %s)",
		    sr_transform_name(want[k]), kind_name[k], sr_transform_name(xf));
		if (k == K_BF16)
			ok((double)clen / n <= 0.69, "bf16 N(0,0.02) stored at %.4f of raw (<= 0.69)",
			    (double)clen / n);
		if (k == K_FP32)
			ok((double)clen / n <= 0.85, "fp32 N(0,0.02) stored at %.4f of raw (<= 0.85)",
			    (double)clen / n);
		if (k == K_RANDOM)
			ok(clen == sr_zframe_raw_size(n), "random data is stored raw: %zu bytes",
			    clen);
		free(src);
		free(enc);
	}
	/* Chunks below three slices of the sample's minimum (a small file's)
	 * are judged on one slice from their middle: the same picks, and no
	 * larger than without a transform. */
	for (k = K_BF16; k <= K_FP32; k++) {
		static const size_t small[] = { 4100, 32768, 200000, 393215 };
		size_t i, nlen;
		enum sr_transform nxf;

		for (i = 0; i < SR_ARRAY_LEN(small); i++) {
			uint8_t *src = make(k, small[i], 70 + k), *enc, *none;

			enc = encode(c, src, small[i], -1, &clen, &xf, err);
			none = encode(c, src, small[i], SR_XF_NONE, &nlen, &nxf, err);
			ok(enc != NULL && none != NULL && (int)xf == want[k] && clen < nlen,
			    "auto picks %s for %zu bytes of %s data (got %s), %zu bytes against "
			    "%zu without", sr_transform_name(want[k]), small[i], kind_name[k],
			    sr_transform_name(xf), clen, nlen);
			free(src);
			free(enc);
			free(none);
		}
	}
}

static void
test_names(void)
{
	is_str(sr_transform_name(SR_XF_NONE), "none", "name of SR_XF_NONE");
	is_str(sr_transform_name(SR_XF_PLANE2), "plane2", "name of SR_XF_PLANE2");
	is_str(sr_transform_name(SR_XF_PLANE4), "plane4", "name of SR_XF_PLANE4");
	ok(sr_transform_name(3) == NULL, "no name for transform 3");
	is_int(sr_transform_parse("plane4"), SR_XF_PLANE4, "parse plane4");
	is_int(sr_transform_parse("none"), SR_XF_NONE, "parse none");
	is_int(sr_transform_parse("plane3"), -1, "parse plane3 fails");
	is_int(sr_transform_parse(NULL), -1, "parse NULL fails");
}

static void
test_raw_frames(void)
{
	uint8_t src[300], out[400];
	size_t n, used, made;
	int i;

	for (i = 0; i < 300; i++)
		src[i] = (uint8_t)i;
	n = sr_zframe_write_raw(out, sizeof out, src, 100);
	ok(n == 109 && memcmp(out, "\x28\xb5\x2f\xfd\x20\x64\x21\x03\x00", 9) == 0 &&
	    memcmp(out + 9, src, 100) == 0,
	    "100-byte raw frame: magic, single segment, FCS 100, last raw block of 100");
	n = sr_zframe_write_raw(out, sizeof out, src, 300);
	ok(n == 4 + 1 + 2 + 3 + 300 && memcmp(out, "\x28\xb5\x2f\xfd\x60\x2c\x00\x61\x09\x00",
	    10) == 0, "300-byte raw frame: 2-byte FCS (300 - 256)");
	n = sr_zframe_write_raw(out, sizeof out, src, 0);
	ok(n == 9 && memcmp(out, "\x28\xb5\x2f\xfd\x20\x00\x01\x00\x00", 9) == 0,
	    "empty raw frame is zstd's own empty frame");
	is_int(sr_zframe_write_raw(out, 108, src, 100), 0, "write_raw refuses a short buffer");
	is_int(sr_zframe_raw_size((size_t)1 << 20), 4 + 1 + 1 + 4 + 3 * 8 + (1 << 20),
	    "1 MiB raw frame: windowed header, 8 blocks");

	n = sr_zframe_write_raw(out, sizeof out, src, 300);
	memset(src, 0, sizeof src);
	ok(sr_zframe_copy_raw(out, n, src, 300, &used, &made) == 1 && used == n && made == 300 &&
	    src[299] == (uint8_t)299, "copy_raw reads a raw frame back");
	is_int(sr_zframe_copy_raw(out, n, src, 299, &used, &made), 0,
	    "copy_raw leaves a frame larger than the room to zstd");
	is_int(sr_zframe_copy_raw(out, n - 1, src, 300, &used, &made), 0,
	    "copy_raw leaves a truncated frame to zstd");
}

/* The chunk file through the zstd command line tool equals want. */
static int
zstd_cli_gives(const uint8_t *enc, size_t clen, const uint8_t *want, size_t n,
    const char *dir)
{
	char *in = sr_asprintf("%s/chunk.zst", dir), *out = sr_asprintf("%s/chunk.out", dir);
	char *cmd = sr_asprintf("zstd -q -d -c '%s' > '%s'", in, out);
	char err[SR_ERRMAX], *got = NULL;
	size_t len = 0;
	int r = -1;

	if (sr_write_file_atomic(in, enc, clen, 0, err) == 0 && system(cmd) == 0 &&
	    sr_read_file(out, n + 1, &got, &len, err) == 0 && len == n &&
	    memcmp(got, want, n) == 0)
		r = 0;
	free(got);
	free(in);
	free(out);
	free(cmd);
	return r;
}

static void
test_zstd_cli(struct sr_codec *c)
{
	static const struct {
		enum kind k;
		size_t n;
		int force;
		const char *what;
	} cases[] = {
		{ K_BF16, (2 << 20) + 1, -1, "a bf16 chunk with a 1-byte tail (plane2)" },
		{ K_FP32, (1 << 20) + 3, -1, "an fp32 chunk with a 3-byte tail (plane4)" },
		{ K_RANDOM, (1 << 20) + 5, SR_XF_PLANE4, "a random chunk, raw planes" },
		{ K_RANDOM, 1000, SR_XF_NONE, "a small random chunk, one raw frame" },
		{ K_TEXT, 300000, -1, "a text chunk (none)" },
		{ K_ZERO, 0, -1, "a zero-length chunk" },
	};
	char dir[] = "/tmp/t-codec.XXXXXX", err[SR_ERRMAX];
	size_t i, clen;
	enum sr_transform xf;

	if (system("zstd --version > /dev/null 2>&1") != 0) {
		for (i = 0; i < SR_ARRAY_LEN(cases); i++)
			ok(1, "# SKIP no zstd command");
		return;
	}
	if (mkdtemp(dir) == NULL)
		sr_fatal("mkdtemp failed");
	for (i = 0; i < SR_ARRAY_LEN(cases); i++) {
		size_t n = cases[i].n;
		uint8_t *src = make(cases[i].k, n, 99 + i), *planes = sr_malloc(n);
		uint8_t *enc = encode(c, src, n, cases[i].force, &clen, &xf, err);

		sr_byteplane_split(src, n, xf == SR_XF_NONE ? 1 : (unsigned)xf, planes);
		ok(enc != NULL && zstd_cli_gives(enc, clen, planes, n, dir) == 0,
		    "zstd -d of %s gives sr_byteplane_split's planes", cases[i].what);
		free(src);
		free(planes);
		free(enc);
	}
	sr_rmtree(dir, err);
}

/* A chunk of frames made by zstd itself. */
static uint8_t *
zstd_frame(const void *src, size_t n, int pledge, size_t *len)
{
	size_t cap = ZSTD_compressBound(n), r;
	uint8_t *out = sr_malloc(cap);
	ZSTD_CCtx *cc = ZSTD_createCCtx();

	if (pledge)
		r = ZSTD_compressCCtx(cc, out, cap, src, n, 1);
	else {
		/* no content size in the header, as a streaming writer makes */
		ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
		r = ZSTD_compress2(cc, out, cap, src, n);
	}
	ZSTD_freeCCtx(cc);
	if (ZSTD_isError(r))
		sr_fatal("zstd: %s", ZSTD_getErrorName(r));
	*len = r;
	return out;
}

static void
test_errors(struct sr_codec *c)
{
	char err[SR_ERRMAX];
	size_t n = 100000, clen, zlen, i, bad;
	enum sr_transform xf;
	uint8_t *src = make(K_BF16, n, 5), *enc, *dec, *z, big[64], frame[32];
	uint8_t *zeros = sr_calloc(1, 1 << 20);

	enc = encode(c, src, n, SR_XF_PLANE2, &clen, &xf, err);

	dec = decode(c, enc, clen, xf, n - 1, err);
	is_str(dec == NULL ? err : "decoded", "decode chunk: frame at byte 50010 holds 50000 "
	    "bytes, more than the 49999 left of the chunk's 99999",
	    "rlen one short: the second plane is refused from its header");
	dec = decode(c, enc, clen, xf, n + 1, err);
	is_str(dec == NULL ? err : "decoded", "decode chunk: frames hold 100000 bytes, "
	    "expected 100001", "rlen one long: refused");
	dec = decode(c, enc, clen, 3, n, err);
	is_str(dec == NULL ? err : "decoded", "decode chunk: unknown transform 3",
	    "unknown transform refused");
	ok(sr_codec_decode(c, enc, clen, xf, big, SR_CODEC_MAX_CHUNK + 1, err) == -1 &&
	    strcmp(err, "decode chunk: 268435457 bytes, more than the 268435456 a chunk may "
	    "hold") == 0, "rlen over SR_CODEC_MAX_CHUNK refused: %s", err);
	dec = decode(c, enc, 0, xf, 0, err);
	is_str(dec == NULL ? err : "decoded", "decode chunk: no zstd frame", "empty input refused");
	free(dec);

	/* every truncation fails, none crashes */
	bad = 0;
	for (i = 0; i < clen; i += (i < 64 || clen - i < 64) ? 1 : 997) {
		dec = decode(c, enc, i, xf, n, err);
		if (dec != NULL) {
			tap_diag("truncated to %zu bytes: decoded", i);
			bad++;
			free(dec);
		}
	}
	ok(bad == 0, "every truncation of a chunk is refused");
	dec = decode(c, enc, 5, xf, n, err);
	ok(dec == NULL && strncmp(err, "decode chunk: frame at byte 0: ", 31) == 0,
	    "5-byte chunk: %s", err);

	/* trailing garbage after the frames */
	{
		uint8_t *more = sr_malloc(clen + 4);

		memcpy(more, enc, clen);
		memcpy(more + clen, "junk", 4);
		dec = decode(c, more, clen + 4, xf, n, err);
		ok(dec == NULL && strstr(err, "decode chunk: frame at byte") == err,
		    "trailing bytes refused: %s", err);
		free(more);
	}

	/* bombs: a frame that holds (or claims) more than rlen */
	z = zstd_frame(zeros, 1 << 20, 1, &zlen);
	dec = decode(c, z, zlen, SR_XF_NONE, 1000, err);
	is_str(dec == NULL ? err : "decoded", "decode chunk: frame at byte 0 holds 1048576 "
	    "bytes, more than the 1000 left of the chunk's 1000",
	    "bomb with a content size: refused from the header");
	free(z);
	z = zstd_frame(zeros, 1 << 20, 0, &zlen);
	ok(ZSTD_getFrameContentSize(z, zlen) == ZSTD_CONTENTSIZE_UNKNOWN,
	    "streamed frame has no content size");
	dec = decode(c, z, zlen, SR_XF_NONE, 1000, err);
	is_str(dec == NULL ? err : "decoded", "decode chunk: frame at byte 0 holds more than "
	    "the 1000 bytes left of the chunk's 1000",
	    "bomb without a content size: stopped at rlen");
	dec = decode(c, z, zlen, SR_XF_PLANE2, 1 << 20, err);
	ok(dec != NULL && memcmp(dec, zeros, 1 << 20) == 0,
	    "a frame without content size that fits is fine");
	free(dec);
	free(z);
	/* a raw frame whose header claims 2^40 bytes */
	memcpy(frame, "\x28\xb5\x2f\xfd\xc0\x38\x00\x00\x00\x00\x00\x01\x00\x00\x01\x00\x00",
	    17);
	dec = decode(c, frame, 17, SR_XF_NONE, 16, err);
	is_str(dec == NULL ? err : "decoded", "decode chunk: frame at byte 0 holds "
	    "1099511627776 bytes, more than the 16 left of the chunk's 16",
	    "frame claiming 1 TiB refused");
	/* a raw frame whose blocks hold more than its header says */
	i = sr_zframe_write_raw(frame, sizeof frame, "abcdefgh", 8);
	frame[5] = 4;	/* FCS 4, block of 8 */
	dec = decode(c, frame, i, SR_XF_NONE, 8, err);
	is_str(dec == NULL ? err : "decoded", "decode chunk: frame at byte 0: more content than "
	    "the 4 bytes its header says", "raw frame with blocks beyond its content size refused");

	/* encoder's own checks */
	ok(sr_codec_encode(c, src, n, -1, big, sizeof big, &clen, &xf, err) == -1 &&
	    strcmp(err, "encode chunk: output buffer of 64 bytes, 100068 needed") == 0,
	    "encode into a short buffer refused: %s", err);
	ok(sr_codec_encode(c, src, n, 3, big, sizeof big, &clen, &xf, err) == -1 &&
	    strcmp(err, "encode chunk: unknown transform 3") == 0, "encode with transform 3 refused");
	ok(sr_codec_encode(c, src, SR_CODEC_MAX_CHUNK + 1, -1, big, sizeof big, &clen, &xf,
	    err) == -1 && strcmp(err, "encode chunk: 268435457 bytes, more than the 268435456 a "
	    "chunk may hold") == 0, "encode of more than SR_CODEC_MAX_CHUNK refused");
	free(enc);
	free(src);
	free(zeros);
}

/* Mutated encodings never crash or overrun; a success is exactly rlen. */
static void
test_fuzz(struct sr_codec *c)
{
	static const enum kind kinds[] = { K_BF16, K_FP32, K_TEXT, K_RANDOM, K_ZERO };
	uint64_t seed = 20240601;
	uint8_t *enc[5], *src, *m, *dec;
	size_t clen[5], n = 70001, i, it, decoded = 0;
	enum sr_transform xf[5];
	char err[SR_ERRMAX];

	for (i = 0; i < 5; i++) {
		src = make(kinds[i], n, 300 + i);
		enc[i] = encode(c, src, n, -1, &clen[i], &xf[i], err);
		if (enc[i] == NULL)
			sr_fatal("%s", err);
		free(src);
	}
	for (it = 0; it < 3000; it++) {
		size_t e = rnd(&seed) % 5, len = clen[e], flips, rlen = n, j;

		m = sr_malloc(len + 16);
		memcpy(m, enc[e], len);
		switch (rnd(&seed) % 5) {
		case 0:	/* flip bits anywhere */
			for (flips = 1 + rnd(&seed) % 4; flips > 0; flips--)
				m[rnd(&seed) % len] ^= (uint8_t)(1u << (rnd(&seed) % 8));
			break;
		case 1:	/* smash a header byte of the first frame */
			m[4 + rnd(&seed) % 12] = (uint8_t)rnd(&seed);
			break;
		case 2:	/* truncate */
			len = rnd(&seed) % len;
			break;
		case 3:	/* append random bytes */
			for (j = 0; j < 16; j++)
				m[len + j] = (uint8_t)rnd(&seed);
			len += 1 + rnd(&seed) % 16;
			break;
		default:	/* lie about rlen */
			rlen = n + (rnd(&seed) % 2 ? 1 : -1) * (1 + rnd(&seed) % 100);
			break;
		}
		dec = decode(c, m, len, rnd(&seed) % 8 == 0 ? (int)(rnd(&seed) % 6) : (int)xf[e],
		    rlen, err);
		if (dec != NULL)
			decoded++;
		free(dec);
		free(m);
	}
	ok(1, "3000 mutated chunks decoded without a crash (%zu accepted: flips in raw "
	    "bytes are the chunk checksum's to catch)", decoded);
	for (i = 0; i < 5; i++)
		free(enc[i]);
}

int
main(void)
{
	struct sr_codec *c = sr_codec_new(1, NULL), *neg = sr_codec_new(-5, NULL);
	char why[SR_ERRMAX];
	uint8_t *src;

	test_names();
	test_raw_frames();
	test_roundtrips(c);
	test_presplit(c);
	test_choice(c);
	test_zstd_cli(c);
	test_errors(c);
	test_fuzz(c);
	src = make(K_TEXT, 500000, 1);
	ok(roundtrip(neg, src, 500000, -1, why) == 0 && roundtrip(neg, src, 77, SR_XF_PLANE2,
	    why) == 0, "a codec at level -5 round-trips too");
	free(src);
	sr_codec_free(neg);
	sr_codec_free(c);
	sr_codec_free(NULL);
	return tap_done();
}
