/*
 * bench-codec.c: throughput and ratio of the chunk codec on synthetic
 * weights, against plain zstd on the same buffers. Not a test: bench/codec.sh
 * runs it and the figures go to doc/benchmarks.md.
 *
 * Data: N(0, 0.02) values (Box-Muller on a seeded xorshift generator), as
 * bf16 (rounded to nearest even) and as fp32; or the files named, real
 * training state (bench/compress.sh), each as NAME=FILE:WIDTH[,PREVIOUS...]:
 * the codec and zstd on it, the per-byte-plane entropy bound at WIDTH, and
 * with each PREVIOUS (the same state some steps earlier) the XOR delta
 * against it, chunk by chunk, with what restoring through it costs. One thread:
 * MB/s per core, from the CPU time of the thread (what the machine's other
 * work does not inflate), and from the wall clock at the end of each line. Every round trip is checked as it runs (the
 * decode of each encode, and the state rebuilt from the decoded delta and
 * the decoded previous state) and a difference ends the run with an error.
 *
 *   bench-codec [-s MiB] [-c chunk-MiB] [-l level] [-r reps] [-z zstd-level]
 *               [NAME=FILE:WIDTH[,PREVIOUS...] ...]
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "byteplane.h"
#include "codec.h"
#include "util.h"

static uint64_t
xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static double
uniform(uint64_t *s)
{
	return ((xorshift(s) >> 11) + 0.5) / 9007199254740992.0;
}

static float
normal(uint64_t *s, double sigma)
{
	double u1 = uniform(s), u2 = uniform(s);

	return (float)(sigma * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2));
}

static void
gen(uint8_t *buf, size_t n, int bf16, uint64_t seed)
{
	size_t i;

	if (bf16) {
		for (i = 0; i + 2 <= n; i += 2) {
			float f = normal(&seed, 0.02);
			uint32_t u;

			memcpy(&u, &f, 4);
			u += 0x7fff + ((u >> 16) & 1);	/* round to nearest even */
			buf[i] = (uint8_t)(u >> 16);
			buf[i + 1] = (uint8_t)(u >> 24);
		}
	} else {
		for (i = 0; i + 4 <= n; i += 4) {
			float f = normal(&seed, 0.02);
			memcpy(buf + i, &f, 4);
		}
	}
}

/* CPU seconds of the calling thread. */
static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A pass timed on both clocks: the best of the reps is kept of each. */
struct lap {
	double cpu, wall;
};

static void
lap_start(struct lap *l)
{
	l->cpu = cpu_now();
	l->wall = sr_mono();
}

static void
lap_end(const struct lap *l, struct lap *best)
{
	double c = cpu_now() - l->cpu, w = sr_mono() - l->wall;

	if (c < best->cpu)
		best->cpu = c;
	if (w < best->wall)
		best->wall = w;
}

struct result {
	double ratio;
	double enc_mbs, dec_mbs;	/* from the thread's CPU time */
	double enc_wall, dec_wall;	/* from the wall clock */
	int xf[5];		/* chunks per transform */
};

/* One line of figures; chunks: say how many chunks took each transform. */
static void
print_result(const char *what, const struct result *r, int chunks)
{
	printf("  %-15s ratio %.4f  encode %5.0f MB/s  decode %5.0f MB/s", what, r->ratio,
	    r->enc_mbs, r->dec_mbs);
	if (chunks)
		printf("  (chunks: %d none, %d plane2, %d plane4)", r->xf[SR_XF_NONE],
		    r->xf[SR_XF_PLANE2], r->xf[SR_XF_PLANE4]);
	printf("  wall: %.0f / %.0f MB/s\n", r->enc_wall, r->dec_wall);
}

/* The codec on n bytes of data in chunks, as the save path calls it; the
 * decoded bytes are left in out (n bytes) when it is not NULL. */
static void
bench_codec(const uint8_t *data, size_t n, size_t chunk, int level, int reps,
    struct result *res, uint8_t *out)
{
	struct sr_codec *c = sr_codec_new(level, NULL);
	size_t nchunks = (n + chunk - 1) / chunk, i, total = 0;
	size_t cap = sr_codec_bound(chunk);
	uint8_t *enc = sr_malloc(nchunks * cap), *dec = sr_malloc(n);
	size_t *clen = sr_calloc(nchunks, sizeof *clen);
	enum sr_transform *xf = sr_calloc(nchunks, sizeof *xf);
	struct lap be = { 1e9, 1e9 }, bd = { 1e9, 1e9 }, l;
	char err[SR_ERRMAX];
	int r;

	memset(res, 0, sizeof *res);
	for (r = 0; r < reps; r++) {
		lap_start(&l);
		for (i = 0; i < nchunks; i++) {
			size_t len = i + 1 < nchunks ? chunk : n - i * chunk;
			if (sr_codec_encode(c, data + i * chunk, len, -1, enc + i * cap, cap,
			    &clen[i], &xf[i], err) == -1)
				sr_fatal("%s", err);
		}
		lap_end(&l, &be);
		lap_start(&l);
		for (i = 0; i < nchunks; i++) {
			size_t len = i + 1 < nchunks ? chunk : n - i * chunk;
			if (sr_codec_decode(c, enc + i * cap, clen[i], xf[i], dec + i * chunk,
			    len, err) == -1)
				sr_fatal("%s", err);
		}
		lap_end(&l, &bd);
	}
	if (memcmp(dec, data, n) != 0)
		sr_fatal("round trip mismatch");
	if (out != NULL)
		memcpy(out, dec, n);
	for (i = 0; i < nchunks; i++) {
		total += clen[i];
		res->xf[xf[i]]++;
	}
	res->ratio = (double)total / n;
	res->enc_mbs = n / be.cpu / 1e6;
	res->dec_mbs = n / bd.cpu / 1e6;
	res->enc_wall = n / be.wall / 1e6;
	res->dec_wall = n / bd.wall / 1e6;
	free(enc);
	free(dec);
	free(clen);
	free(xf);
	sr_codec_free(c);
}

static void
bench_zstd(const uint8_t *data, size_t n, size_t chunk, int level, int reps,
    struct result *res)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	size_t nchunks = (n + chunk - 1) / chunk, i, total = 0;
	size_t cap = ZSTD_compressBound(chunk);
	uint8_t *enc = sr_malloc(nchunks * cap), *dec = sr_malloc(n);
	size_t *clen = sr_calloc(nchunks, sizeof *clen);
	struct lap be = { 1e9, 1e9 }, bd = { 1e9, 1e9 }, l;
	int r;

	memset(res, 0, sizeof *res);
	for (r = 0; r < reps; r++) {
		lap_start(&l);
		for (i = 0; i < nchunks; i++) {
			size_t len = i + 1 < nchunks ? chunk : n - i * chunk;
			clen[i] = ZSTD_compressCCtx(cc, enc + i * cap, cap, data + i * chunk, len,
			    level);
			if (ZSTD_isError(clen[i]))
				sr_fatal("zstd: %s", ZSTD_getErrorName(clen[i]));
		}
		lap_end(&l, &be);
		lap_start(&l);
		for (i = 0; i < nchunks; i++) {
			size_t len = i + 1 < nchunks ? chunk : n - i * chunk;
			size_t d = ZSTD_decompressDCtx(dc, dec + i * chunk, len, enc + i * cap,
			    clen[i]);
			if (ZSTD_isError(d) || d != len)
				sr_fatal("zstd decode failed");
		}
		lap_end(&l, &bd);
	}
	for (i = 0; i < nchunks; i++)
		total += clen[i];
	res->ratio = (double)total / n;
	res->enc_mbs = n / be.cpu / 1e6;
	res->dec_mbs = n / bd.cpu / 1e6;
	res->enc_wall = n / be.wall / 1e6;
	res->dec_wall = n / bd.wall / 1e6;
	free(enc);
	free(dec);
	free(clen);
	ZSTD_freeCCtx(cc);
	ZSTD_freeDCtx(dc);
}

static void
bench_planes(const uint8_t *data, size_t n, unsigned w, int reps)
{
	uint8_t *tmp = sr_malloc(n), *back = sr_malloc(n);
	double bs = 1e9, bj = 1e9, t;
	int r;

	for (r = 0; r < reps; r++) {
		t = cpu_now();
		sr_byteplane_split(data, n, w, tmp);
		t = cpu_now() - t;
		if (t < bs)
			bs = t;
		t = cpu_now();
		sr_byteplane_join(tmp, n, w, back);
		t = cpu_now() - t;
		if (t < bj)
			bj = t;
	}
	if (memcmp(back, data, n) != 0)
		sr_fatal("byteplane round trip mismatch");
	printf("  byteplane width %u: split %.0f MB/s, join %.0f MB/s\n", w, n / bs / 1e6,
	    n / bj / 1e6);
	free(tmp);
	free(back);
}

static SR_NORETURN void
usage(void)
{
	fprintf(stderr, "usage: bench-codec [-s MiB] [-c chunk-MiB] [-l level] [-r reps] "
	    "[-z zstd-level] [NAME=FILE:WIDTH[,PREVIOUS...] ...]\n");
	exit(2);
}

/* The order-0 entropy of each byte plane at width w, chunk by chunk as the
 * codec sees them, as a ratio of the raw size: what entropy coding each
 * chunk's planes one byte at a time can reach. */
static double
plane_bound(const uint8_t *data, size_t n, size_t chunk, unsigned w)
{
	size_t (*count)[256] = sr_malloc(w * sizeof *count), off, m, i;
	double bits = 0;
	unsigned k, v;

	for (off = 0; off < n; off += chunk) {
		const uint8_t *p = data + off;
		size_t len = n - off < chunk ? n - off : chunk;

		m = len / w;
		memset(count, 0, w * sizeof *count);
		for (i = 0; i < m * w; i++)
			count[i % w][p[i]]++;
		for (k = 0; k < w; k++)
			for (v = 0; v < 256; v++)
				if (count[k][v] != 0)
					bits -= count[k][v] * log2((double)count[k][v] / m);
		bits += 8.0 * (len - m * w);	/* the tail, raw */
	}
	free(count);
	return n == 0 ? 1 : bits / 8 / (double)n;
}

static uint8_t *
load(const char *path, size_t *n)
{
	char err[SR_ERRMAX], *buf;

	if (sr_read_file(path, (size_t)4 << 30, &buf, n, err) == -1)
		sr_fatal("%s", err);
	return (uint8_t *)buf;
}

/*
 * The XOR delta of data against the same state some steps earlier (the
 * file prevpath), chunk by chunk, against plain's ratio rc. A delta chunk
 * restores by decoding it, decoding the earlier checkpoint's chunk (or
 * having it) and XORing the two: the cost is timed as the XOR pass plus
 * both decodes, and the state rebuilt that way must be data.
 */
static void
bench_delta(const char *path, const uint8_t *data, size_t n, const char *prevpath,
    const struct result *rc, size_t chunk, int level, int reps)
{
	struct result rx, rp;
	uint8_t *prev, *x, *dx, *dp;
	size_t pn, i;
	double t, best = 1e9;
	int r;

	prev = load(prevpath, &pn);
	if (pn != n)
		sr_fatal("%s: %zu bytes, %s has %zu", path, n, prevpath, pn);
	x = sr_malloc(n);
	for (r = 0; r < reps; r++) {
		t = cpu_now();
		for (i = 0; i < n; i++)
			x[i] = data[i] ^ prev[i];
		t = cpu_now() - t;
		if (t < best)
			best = t;
	}
	dx = sr_malloc(n);
	dp = sr_malloc(n);
	bench_codec(x, n, chunk, level, reps, &rx, dx);
	bench_codec(prev, n, chunk, level, reps, &rp, dp);
	for (i = 0; i < n; i++)
		dx[i] ^= dp[i];
	if (memcmp(dx, data, n) != 0)
		sr_fatal("%s: the state rebuilt from the XOR delta against %s differs", path,
		    prevpath);
	printf("  XOR delta against %s: ratio %.4f (%.1f%% %s than the plain %.4f); "
	    "restore through it %4.0f MB/s (decode the delta %.0f, the previous %.0f, "
	    "XOR %.0f MB/s) against %4.0f MB/s plain\n", prevpath, rx.ratio,
	    100 * fabs(1 - rx.ratio / rc->ratio), rx.ratio < rc->ratio ? "smaller" : "larger",
	    rc->ratio, n / 1e6 / (n / 1e6 / rx.dec_mbs + n / 1e6 / rp.dec_mbs + best),
	    rx.dec_mbs, rp.dec_mbs, n / best / 1e6, rc->dec_mbs);
	free(dx);
	free(dp);
	free(x);
	free(prev);
}

/* One file of real state, NAME=FILE:WIDTH[,PREVIOUS...]: the codec and
 * zstd, the entropy bound and the XOR delta against each earlier state. */
static void
bench_file(const char *arg, size_t chunk, int level, int zlevel, int reps)
{
	char *spec = sr_strdup(arg), *eq = strchr(spec, '='), *colon, *comma, *p, *save = NULL;
	struct result rc, rz;
	uint8_t *data;
	size_t n;
	unsigned w;
	double bound;
	char zname[32];

	if (eq == NULL || (colon = strrchr(eq, ':')) == NULL)
		usage();
	*eq = *colon = '\0';
	if ((comma = strchr(colon + 1, ',')) != NULL)
		*comma = '\0';
	w = (unsigned)atoi(colon + 1);
	if (w < 1 || w > 16)
		usage();
	data = load(eq + 1, &n);
	bound = plane_bound(data, n, chunk, w);
	bench_codec(data, n, chunk, level, reps, &rc, NULL);
	bench_zstd(data, n, chunk, zlevel, reps, &rz);
	printf("%s (%s, %.1f MiB, width %u):\n", spec, eq + 1, n / 1048576.0, w);
	print_result("spotrun codec:", &rc, 1);
	snprintf(zname, sizeof zname, "zstd -%d:", zlevel);
	print_result(zname, &rz, 0);
	printf("  byte-plane entropy bound (order 0 per chunk, width %u): %.4f\n", w, bound);
	if (comma != NULL)
		for (p = strtok_r(comma + 1, ",", &save); p != NULL; p = strtok_r(NULL, ",", &save))
			bench_delta(eq + 1, data, n, p, &rc, chunk, level, reps);
	free(data);
	free(spec);
}

int
main(int argc, char **argv)
{
	size_t size = 64, chunk = 16;
	int level = 1, zlevel = 1, reps = 3, ch, bf16;
	struct result rc, rz;
	char zname[32];
	uint8_t *data;

	while ((ch = getopt(argc, argv, "s:c:l:r:z:")) != -1) {
		switch (ch) {
		case 's':
			size = strtoul(optarg, NULL, 10);
			break;
		case 'c':
			chunk = strtoul(optarg, NULL, 10);
			break;
		case 'l':
			level = atoi(optarg);
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 'z':
			zlevel = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (size == 0 || chunk == 0 || reps < 1)
		usage();
	size <<= 20;
	chunk <<= 20;
	if (optind < argc) {
		printf("codec: real state, %zu MiB chunks, level %d, best of %d, one thread"
		    " (its CPU time)\n",
		    chunk >> 20, level, reps);
		for (; optind < argc; optind++)
			bench_file(argv[optind], chunk, level, zlevel, reps);
		return 0;
	}
	data = sr_malloc(size);
	printf("codec: %zu MiB, %zu MiB chunks, level %d, best of %d, one thread (its CPU time)\n",
	    size >> 20, chunk >> 20, level, reps);
	for (bf16 = 1; bf16 >= 0; bf16--) {
		const char *name = bf16 ? "bf16" : "fp32";

		gen(data, size, bf16, bf16 ? 42 : 43);
		bench_codec(data, size, chunk, level, reps, &rc, NULL);
		bench_zstd(data, size, chunk, zlevel, reps, &rz);
		printf("%s N(0,0.02):\n", name);
		print_result("spotrun codec:", &rc, 1);
		snprintf(zname, sizeof zname, "zstd -%d:", zlevel);
		print_result(zname, &rz, 0);
		printf("  target: ratio <= %.2f, encode >= 1000 MB/s: %s\n", bf16 ? 0.69 : 0.85,
		    rc.ratio <= (bf16 ? 0.69 : 0.85) && rc.enc_mbs >= 1000 ? "met" : "NOT MET");
		bench_planes(data, size, bf16 ? 2 : 4, reps);
	}
	free(data);
	return 0;
}
