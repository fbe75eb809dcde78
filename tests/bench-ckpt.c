/*
 * bench-ckpt.c: the checkpoint benchmark's C side. bench/ckpt.sh drives it
 * and runs the tar | zstd baseline next to it; the figures go to
 * doc/benchmarks.md. Not a test.
 *
 *   bench-ckpt gen DIR [MiB]         a synthetic training checkpoint of
 *                                    about MiB (default 1024) in DIR
 *   bench-ckpt mutate DIR PERCENT    rewrite the last PERCENT of every
 *                                    tensor file (a LoRA-like update)
 *   bench-ckpt save URL DIR          sr_ckpt_save of DIR to job "bench"
 *   bench-ckpt restore URL DIR       sr_ckpt_restore of job "bench" into DIR
 *   bench-ckpt warm MiB              touch MiB of memory and free it
 *   bench-ckpt evict PATH...         drop the files under PATH from the
 *                                    page cache (after a sync)
 *   bench-ckpt align DIR MiB ALIGN   write MiB with O_DIRECT into a file in
 *                                    DIR as a pack lays it out: a header,
 *                                    then a 13.4 MiB chunk, at offsets that
 *                                    are multiples of ALIGN (512: the
 *                                    kernel's minimum; 4096: a physical
 *                                    block), then fsync; written as
 *                                    the file store writes a pack (queued
 *                                    for store/bgwrite.c's thread, synced
 *                                    every 64 MiB beside the writes)
 *
 * save and restore print one line of key=value pairs (seconds, raw, stored,
 * new bytes, chunks, peak RSS in KiB), each in its own process so that the
 * peak RSS is that operation's alone. BENCH_THREADS sets the thread count
 * (default: all CPUs).
 *
 * warm is for virtual machines whose balloon driver reports free memory to
 * the host (virtio free page reporting): the host then drops those pages,
 * and the guest's next touch of each costs a host fault, which made writes
 * into the page cache 2 to 6 times slower from one run to the next. Pages
 * touched and freed just before a run are still backed when the run
 * allocates them.
 *
 * evict puts a store back in the state a restore on a new machine finds
 * it in: on disk, not in memory. The baseline's archive, written through
 * the page cache, would otherwise be read from memory while the packs,
 * written with O_DIRECT, come from the disk.
 *
 * The data, per 1024 MiB: model.bf16 (256 MiB of N(0, 0.02) weights, bf16
 * rounded to nearest even), master.fp32 (256 MiB of N(0, 0.02) fp32
 * weights), exp_avg.fp32 (256 MiB of N(0, 1e-3)), exp_avg_sq.fp32 (256 MiB
 * of squares of N(0, 1e-3)), plus a small JSON file, as a mixed-precision
 * trainer with Adam writes them. Normals come from Box-Muller on a seeded
 * xorshift generator: the same bytes on every run.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt.h"
#include "store.h"
#include "store-int.h"
#include "util.h"

#define MIB ((size_t)1 << 20)
#define GEN_BLOCK (4 * MIB)

enum dist { D_BF16, D_FP32, D_MOMENT, D_SQUARE };

struct tensor_file {
	const char *name;
	enum dist dist;
	double sigma;
	uint64_t seed;
};

/* Each a quarter of the total. */
static const struct tensor_file files[] = {
	{ "model.bf16", D_BF16, 0.02, 1 },
	{ "master.fp32", D_FP32, 0.02, 2 },
	{ "exp_avg.fp32", D_MOMENT, 1e-3, 3 },
	{ "exp_avg_sq.fp32", D_SQUARE, 1e-3, 4 },
};

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

/* n bytes of f's values into buf; the stream is a function of seed only. */
static void
fill(uint8_t *buf, size_t n, const struct tensor_file *f, uint64_t seed)
{
	uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 0x1234567;
	size_t i = 0;
	float v[2];
	int k;

	while (i < n) {
		/* Box-Muller: both outputs of each pair. */
		double u1 = ((xorshift(&s) >> 11) + 0.5) / 9007199254740992.0;
		double u2 = (double)(xorshift(&s) >> 11) / 9007199254740992.0;
		double r = f->sigma * sqrt(-2 * log(u1)), sn, cs;

		sincos(2 * M_PI * u2, &sn, &cs);
		v[0] = (float)(r * cs);
		v[1] = (float)(r * sn);
		for (k = 0; k < 2 && i < n; k++) {
			uint32_t u;

			if (f->dist == D_SQUARE)
				v[k] *= v[k];
			memcpy(&u, &v[k], 4);
			if (f->dist == D_BF16) {
				u += 0x7fff + ((u >> 16) & 1);	/* round to nearest even */
				buf[i] = (uint8_t)(u >> 16);
				buf[i + 1] = (uint8_t)(u >> 24);
				i += 2;
			} else {
				memcpy(buf + i, &u, 4);
				i += 4;
			}
		}
	}
}

struct gen_job {
	const char *dir;
	const struct tensor_file *f;
	uint64_t size, from;	/* write bytes [from, size) */
	uint64_t salt;		/* 0: the original data; else a new version */
	int failed;
};

/* Write one file's blocks from job->from on; blocks are independent
 * streams, so any range can be rewritten. */
static void *
gen_main(void *arg)
{
	struct gen_job *j = arg;
	char *path = sr_asprintf("%s/%s", j->dir, j->f->name);
	uint8_t *buf = sr_malloc(GEN_BLOCK);
	uint64_t off = j->from;
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	if (fd == -1) {
		fprintf(stderr, "bench-ckpt: open %s: %s\n", path, strerror(errno));
		j->failed = 1;
	}
	while (fd != -1 && off < j->size) {
		uint64_t blk = off / GEN_BLOCK, start = blk * GEN_BLOCK;
		size_t len = j->size - start < GEN_BLOCK ? (size_t)(j->size - start) : GEN_BLOCK;

		fill(buf, len, j->f, j->f->seed << 32 ^ blk ^ j->salt << 48);
		if (pwrite(fd, buf + (off - start), len - (off - start), (off_t)off) !=
		    (ssize_t)(len - (off - start))) {
			fprintf(stderr, "bench-ckpt: write %s: %s\n", path, strerror(errno));
			j->failed = 1;
			break;
		}
		off = start + len;
	}
	if (fd != -1 && close(fd) == -1)
		j->failed = 1;
	free(buf);
	free(path);
	return NULL;
}

/* Run one generator thread per tensor file. */
static int
gen_files(const char *dir, uint64_t each, double percent, uint64_t salt)
{
	struct gen_job jobs[SR_ARRAY_LEN(files)];
	pthread_t tids[SR_ARRAY_LEN(files)];
	size_t i;
	int rc = 0;

	for (i = 0; i < SR_ARRAY_LEN(files); i++) {
		jobs[i].dir = dir;
		jobs[i].f = &files[i];
		jobs[i].size = each;
		jobs[i].from = each - (uint64_t)((double)each * percent / 100);
		jobs[i].from &= ~(uint64_t)3;
		jobs[i].salt = salt;
		jobs[i].failed = 0;
		if (pthread_create(&tids[i], NULL, gen_main, &jobs[i]) != 0)
			sr_fatal("cannot start a thread");
	}
	for (i = 0; i < SR_ARRAY_LEN(files); i++) {
		pthread_join(tids[i], NULL);
		rc |= jobs[i].failed;
	}
	return rc ? -1 : 0;
}

static int
cmd_gen(const char *dir, uint64_t mib)
{
	static const char json[] = "{\"step\": 1000, \"epoch\": 0.42, \"lr\": 0.0003,"
	    " \"betas\": [0.9, 0.999], \"loss\": 2.7183, \"rng_seed\": 1234}\n";
	char err[SR_ERRMAX], *meta;
	uint64_t each = mib * MIB / SR_ARRAY_LEN(files);

	if (sr_mkdirs(dir, 0755, err) == -1) {
		fprintf(stderr, "bench-ckpt: %s\n", err);
		return 1;
	}
	if (gen_files(dir, each, 100, 0) == -1)
		return 1;
	meta = sr_asprintf("%s/trainer_state.json", dir);
	if (sr_write_file_atomic(meta, json, sizeof json - 1, 0, err) == -1) {
		fprintf(stderr, "bench-ckpt: %s\n", err);
		free(meta);
		return 1;
	}
	free(meta);
	return 0;
}

static int
cmd_mutate(const char *dir, double percent)
{
	struct stat sb;
	char *p = sr_asprintf("%s/%s", dir, files[0].name);
	int rc = stat(p, &sb);

	free(p);
	if (rc == -1) {
		fprintf(stderr, "bench-ckpt: %s/%s: %s\n", dir, files[0].name, strerror(errno));
		return 1;
	}
	return gen_files(dir, (uint64_t)sb.st_size, percent, 1) == -1 ? 1 : 0;
}

static int
cmd_warm(uint64_t mib)
{
	size_t len = (size_t)mib * MIB;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
	    MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "bench-ckpt: warm %llu MiB: %s\n", (unsigned long long)mib,
		    strerror(errno));
		return 1;
	}
	munmap(p, len);
	return 0;
}

static int
evict_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	int fd;

	if (type != FTW_F)
		return 0;
	if ((fd = open(path, O_RDONLY)) == -1 ||
	    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
		fprintf(stderr, "bench-ckpt: evict %s: %s\n", path, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int
cmd_evict(int n, char **paths)
{
	int i;

	sync();
	for (i = 0; i < n; i++) {
		if (nftw(paths[i], evict_one, 16, FTW_PHYS) != 0)
			return 1;
	}
	return 0;
}

static long
peak_rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void
print_stats(const char *op, const struct sr_ckpt_stats *st)
{
	printf("%s seconds=%.3f raw=%llu stored=%llu new=%llu files=%llu chunks=%llu reused=%llu"
	    " rss_kib=%ld\n", op, st->seconds, (unsigned long long)st->raw_bytes,
	    (unsigned long long)st->stored_bytes, (unsigned long long)st->new_bytes,
	    (unsigned long long)st->files, (unsigned long long)st->chunks,
	    (unsigned long long)st->reused_chunks, peak_rss_kib());
}

static void
say(void *arg, const char *msg)
{
	fprintf(stderr, "bench-ckpt: %s\n", msg);
}

static int
cmd_ckpt(int save, const char *url, const char *dir)
{
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats st;
	struct sr_store *store;
	char err[SR_ERRMAX];
	const char *threads = getenv("BENCH_THREADS");
	int rc;

	memset(&o, 0, sizeof o);
	o.job = "bench";
	o.threads = threads != NULL ? atoi(threads) : 0;
	/* each file its own chunks, as before small files shared them */
	o.no_bundles = getenv("BENCH_NO_BUNDLES") != NULL;
	o.log = say;
	if (sr_store_open(url, &store, err) != 0) {
		fprintf(stderr, "bench-ckpt: %s\n", err);
		return 1;
	}
	if (save)
		rc = sr_ckpt_save(store, &o, dir, 1000, &st, err);
	else
		rc = sr_ckpt_restore(store, &o, dir, &st, err);
	sr_store_close(store);
	if (rc != 0) {
		fprintf(stderr, "bench-ckpt: %s\n", err);
		return 1;
	}
	print_stats(save ? "save" : "restore", &st);
	return 0;
}

static double
cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/*
 * The disk's cost of direct writes at a granularity: what the file store
 * did before issue 22 (ALIGN 512: a tar header staged with the block
 * before it, 1 KiB, then the chunk at the next 512-byte offset) against
 * what it does now (4096). Same bytes, same disk, same O_DIRECT.
 */
/* Queue one write for b, reaping the oldest first where the queue is
 * full: 0, or -1 with errno. */
static int
align_put(struct sr_bgwrite *b, const uint8_t *buf, size_t len, uint64_t off)
{
	void *done;
	size_t dlen;
	uint64_t doff;

	if (sr_bgwrite_pending(b, 0) == SR_BGWRITE_DEPTH &&
	    sr_bgwrite_reap(b, &done, &dlen, &doff) == -1)
		return -1;
	return sr_bgwrite_put(b, buf, len, off);
}

static int
cmd_align(const char *dir, uint64_t mib, size_t align)
{
	const size_t piece = 13421772 / align * align;	/* ~12.8 MiB: a chunk's encoding */
	char path[4096];
	uint8_t *buf;
	uint64_t off = 0, total = mib * MIB;
	struct sr_bgwrite *b;
	double t0, c0;
	void *done;
	size_t dlen;
	uint64_t doff;
	int fd, rc = 0;

	if (align < 512 || (align & (align - 1)) != 0)
		return fprintf(stderr, "bench-ckpt: align %zu is not a power of two >= 512\n",
		    align), 1;
	snprintf(path, sizeof path, "%s/align-%zu", dir, align);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0644)) == -1)
		return fprintf(stderr, "bench-ckpt: open %s with O_DIRECT: %s\n", path,
		    strerror(errno)), 1;
	if (posix_memalign((void **)&buf, 4096, piece) != 0)
		return fprintf(stderr, "bench-ckpt: out of memory\n"), 1;
	memset(buf, 0x5a, piece);
	t0 = sr_mono();
	c0 = cpu_seconds();
	/* the store's way: queued for a thread of their own, synced every
	 * SR_DIRECT_SYNC_EVERY beside the writes (store/bgwrite.c) */
	if ((b = sr_bgwrite_start(fd, SR_DIRECT_SYNC_EVERY)) == NULL) {
		fprintf(stderr, "bench-ckpt: start the background writer of %s: out of memory or "
		    "threads\n", path);
		rc = 2;		/* said: not a write that failed */
	}
	while (rc == 0 && off < total) {
		/* the header and the block before it: 2 x 512, rounded up */
		size_t head = align > 1024 ? align : 1024;

		if (align_put(b, buf, head, off) == -1 || align_put(b, buf, piece, off + head) == -1)
			rc = 1;
		off += head + piece;
	}
	while (rc == 0 && sr_bgwrite_pending(b, 0) > 0)
		if (sr_bgwrite_reap(b, &done, &dlen, &doff) == -1)
			rc = 1;
	if (rc == 1)
		fprintf(stderr, "bench-ckpt: write %s: %s\n", path, strerror(errno));
	rc = rc != 0;
	if (b != NULL && (errno = sr_bgwrite_stop(b, NULL)) != 0 && rc == 0) {
		fprintf(stderr, "bench-ckpt: background sync of %s: %s\n", path, strerror(errno));
		rc = 1;
	}
	if (rc == 0 && fsync(fd) == -1) {
		fprintf(stderr, "bench-ckpt: fsync %s: %s\n", path, strerror(errno));
		rc = 1;
	}
	if (rc == 0)
		printf("align align=%zu seconds=%.3f cpu=%.3f bytes=%llu mb_s=%.0f\n", align,
		    sr_mono() - t0, cpu_seconds() - c0, (unsigned long long)off,
		    off / 1e6 / (sr_mono() - t0));
	close(fd);
	unlink(path);
	free(buf);
	return rc;
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench-ckpt gen DIR [MiB] | mutate DIR PERCENT |"
	    " save URL DIR | restore URL DIR | warm MiB | evict PATH... |"
	    " align DIR MiB ALIGN\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	if (argc < 3)
		usage();
	if (strcmp(argv[1], "gen") == 0 && argc <= 4)
		return cmd_gen(argv[2], argc == 4 ? strtoull(argv[3], NULL, 10) : 1024);
	if (strcmp(argv[1], "mutate") == 0 && argc == 4)
		return cmd_mutate(argv[2], atof(argv[3]));
	if (strcmp(argv[1], "evict") == 0)
		return cmd_evict(argc - 2, argv + 2);
	if (strcmp(argv[1], "warm") == 0 && argc == 3)
		return cmd_warm(strtoull(argv[2], NULL, 10));
	if (strcmp(argv[1], "save") == 0 && argc == 4)
		return cmd_ckpt(1, argv[2], argv[3]);
	if (strcmp(argv[1], "restore") == 0 && argc == 4)
		return cmd_ckpt(0, argv[2], argv[3]);
	if (strcmp(argv[1], "align") == 0 && argc == 5)
		return cmd_align(argv[2], strtoull(argv[3], NULL, 10),
		    (size_t)strtoull(argv[4], NULL, 10));
	usage();
}
