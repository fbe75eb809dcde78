/*
 * bench-libsave.c: the library side of bench/libsave.sh. A stand-in for a
 * training program: it registers host buffers with libspotrun and saves
 * them as a run of checkpoints, each one after the buffers took their next
 * state (the "training step", not timed), and times what training waits
 * for: spotrun_save, which returns once the checkpoint is committed. The
 * same states are written as files for directory mode by `write`, which
 * times what a directory-mode job waits for (writing its files; spotrun
 * then saves them while the job trains on). Not a test: the figures go to
 * doc/benchmarks.md; a failed save or a restore that differs fails it.
 *
 *   bench-libsave save URL N SPEC...    N checkpoints to job "lib" at URL
 *                                       (steps 1..N, checkpoint K holding
 *                                       state K - 1)
 *   bench-libsave save-async URL N SPEC...   the same with
 *                                       spotrun_save_async, then
 *                                       spotrun_wait
 *   bench-libsave save-prepared URL N SPEC...   the same after
 *                                       spotrun_prepare_async (timed on
 *                                       a line of its own, "prepare")
 *   bench-libsave restore URL N SPEC... the newest checkpoint restored into
 *                                       fresh buffers: it must be step N
 *                                       and hold state N - 1
 *   bench-libsave write DIR I SPEC...   state I of each buffer as DIR/NAME
 *
 * SPEC is NAME=DTYPE:SOURCE, DTYPE bf16, f32 or bytes, and SOURCE one of
 *   FILE[,FILE...]   the buffer is a whole file; checkpoint I holds file I
 *                    modulo their count (all of one size): the states of
 *                    a real training run, or a frozen tensor (one file)
 *   FILE%BYTES       a buffer of BYTES taken from FILE at an offset that
 *                    moves by BYTES every checkpoint (wrapping): a small
 *                    tensor that changes at every step, as a LoRA adapter
 *                    and its optimizer state do
 *
 * save prints one line per checkpoint: the seconds training was blocked,
 * the seconds until the checkpoint was durable (the same for spotrun_save),
 * the CPU seconds (the whole process: the library's threads included), the
 * CPU seconds and the page faults of the calling thread while it was
 * blocked, raw
 * bytes, stored and new (uploaded) bytes as the library's commit message
 * gives them; write one
 * line with its seconds and bytes. BENCH_THREADS: the library's threads
 * (default all CPUs); the chunk size is the library's default.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define SPOTRUN_EXPERIMENTAL	/* spotrun_save_async, spotrun_wait, spotrun_prepare_async */
#include "libspotrun.h"
#include "util.h"

#define MAX_STATES 16

struct buf {
	char *name;
	spotrun_dtype dtype;
	size_t elem;
	uint8_t *states[MAX_STATES];	/* whole files */
	size_t nstates, fsize;
	size_t window;			/* FILE%BYTES: the buffer's size; 0: a whole file */
	uint8_t *host;			/* registered */
	uint8_t *back;			/* what the check's restore fills */
	size_t bytes;
};

/* What the last commit message said. */
struct commit {
	uint64_t raw, stored, new_bytes;
	int seen;
};

static SR_NORETURN void
usage(void)
{
	fprintf(stderr, "usage: bench-libsave save|save-async|save-prepared|restore URL N SPEC... | "
	    "write DIR I SPEC...\n"
	    "  SPEC: NAME=bf16|f32|bytes:FILE[,FILE...] or NAME=...:FILE%%BYTES\n");
	exit(2);
}

static void
parse(const char *arg, struct buf *b)
{
	char *spec = sr_strdup(arg), *eq = strchr(spec, '='), *colon, *pct, *f, *save = NULL;
	char err[SR_ERRMAX];
	size_t n;

	memset(b, 0, sizeof *b);
	if (eq == NULL || (colon = strchr(eq, ':')) == NULL)
		usage();
	*eq = *colon = '\0';
	b->name = sr_strdup(spec);
	if (strcmp(eq + 1, "bf16") == 0)
		b->dtype = SPOTRUN_BF16, b->elem = 2;
	else if (strcmp(eq + 1, "f32") == 0)
		b->dtype = SPOTRUN_F32, b->elem = 4;
	else if (strcmp(eq + 1, "bytes") == 0)
		b->dtype = SPOTRUN_BYTES, b->elem = 1;
	else
		sr_fatal("%s: dtype \"%s\": use bf16, f32 or bytes", arg, eq + 1);
	if ((pct = strchr(colon + 1, '%')) != NULL) {
		*pct = '\0';
		b->window = strtoull(pct + 1, NULL, 10) / b->elem * b->elem;
	}
	for (f = strtok_r(colon + 1, ",", &save); f != NULL; f = strtok_r(NULL, ",", &save)) {
		if (b->nstates == MAX_STATES)
			sr_fatal("%s: more than %d files", arg, MAX_STATES);
		if (sr_read_file(f, (size_t)4 << 30, (char **)&b->states[b->nstates], &n, err) == -1)
			sr_fatal("%s", err);
		if (b->nstates > 0 && n != b->fsize)
			sr_fatal("%s: %s has %zu bytes, the first file %zu", arg, f, n, b->fsize);
		b->fsize = n;
		b->nstates++;
	}
	if (b->nstates == 0 || b->fsize % b->elem != 0)
		sr_fatal("%s: no file, or a size that is not a whole number of elements", arg);
	if (pct != NULL && (b->nstates != 1 || b->window == 0 || b->window > b->fsize))
		sr_fatal("%s: FILE%%BYTES takes one file and 0 < BYTES <= its size", arg);
	b->bytes = b->window != 0 ? b->window : b->fsize;
	b->host = sr_malloc(b->bytes);
	free(spec);
}

/* Give the buffer its state at checkpoint i. */
static void
set_state(struct buf *b, size_t i)
{
	size_t off;

	if (b->window == 0) {
		memcpy(b->host, b->states[i % b->nstates], b->bytes);
		return;
	}
	off = b->fsize == b->window ? 0 : i * b->window % (b->fsize - b->window);
	off -= off % b->elem;
	memcpy(b->host, b->states[0] + off, b->bytes);
}

static void
on_message(void *opaque, spotrun_msg_level level, const char *text)
{
	struct commit *c = opaque;
	const char *p = strstr(text, " committed: ");
	unsigned long long raw, stored, nb;

	if (level == SPOTRUN_MSG_ERROR || level == SPOTRUN_MSG_WARNING)
		fprintf(stderr, "bench-libsave: %s\n", text);
	if (p == NULL || (p = strstr(p, "s, ")) == NULL)
		return;
	if (sscanf(p, "s, %llu bytes (%llu stored, %llu new)", &raw, &stored, &nb) == 3) {
		c->raw = raw;
		c->stored = stored;
		c->new_bytes = nb;
		c->seen = 1;
	}
}

/* CPU seconds of the process (RUSAGE_SELF) or of the calling thread
 * (RUSAGE_THREAD). */
static double
cpu_of(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static spotrun_ctx *
open_ctx(const char *url, struct commit *c)
{
	spotrun_params p;
	const char *threads = getenv("BENCH_THREADS");

	spotrun_params_init(&p);
	p.store = url;
	p.job = "lib";
	p.keep = 0;		/* every checkpoint stays: gc is not what is measured */
	p.threads = threads != NULL ? atoi(threads) : 0;
	p.message = on_message;
	p.message_opaque = c;
	return spotrun_create(&p);
}

static void
register_all(spotrun_ctx *ctx, struct buf *b, size_t n, int fresh)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t shape = b[i].bytes / b[i].elem;
		uint8_t *host = b[i].host;
		spotrun_error rc;

		if (fresh) {
			host = b[i].back = sr_malloc(b[i].bytes);
			memset(host, 0xa5, b[i].bytes);
		}
		rc = spotrun_register(ctx, b[i].name, b[i].dtype, 1, &shape, NULL, NULL, host);
		if (rc != SPOTRUN_OK)
			sr_fatal("register %s: %s", b[i].name, spotrun_getErrorString(ctx));
	}
}

/*
 * n checkpoints, each once the buffers hold their state. Blocking: the
 * time training waits is spotrun_save's. Async: it is spotrun_save_async's
 * (the copy into staging); "durable" adds spotrun_wait's, the time until
 * the checkpoint is committed, which training would spend on its next
 * steps. CPU is the process's over both.
 */
static double
cpu_seconds(void)
{
	return cpu_of(RUSAGE_SELF);
}

/* Page faults of the calling thread so far (minor: memory first touched). */
static long
thread_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

/* async: 0 spotrun_save, 1 spotrun_save_async, 2 the same after
 * spotrun_prepare_async. */
static int
cmd_save(const char *url, long n, struct buf *b, size_t nb, int async)
{
	struct commit c = { 0 };
	spotrun_ctx *ctx;
	long k;
	size_t i;

	if ((ctx = open_ctx(url, &c)) == NULL)
		sr_fatal("spotrun_create failed");
	register_all(ctx, b, nb, 0);
	if (async == 2) {
		double t = sr_mono(), tcpu = cpu_of(RUSAGE_THREAD);

		if (spotrun_prepare_async(ctx) != SPOTRUN_OK)
			sr_fatal("prepare: %s", spotrun_getErrorString(ctx));
		printf("prepare seconds=%.3f cpu=%.3f\n", sr_mono() - t, cpu_of(RUSAGE_THREAD) - tcpu);
	}
	for (k = 0; k < n; k++) {
		double t, blocked, cpu, tcpu;
		long faults;

		for (i = 0; i < nb; i++)
			set_state(&b[i], (size_t)k);
		c.seen = 0;
		cpu = cpu_seconds();
		tcpu = cpu_of(RUSAGE_THREAD);
		faults = thread_faults();
		t = sr_mono();
		if ((async ? spotrun_save_async(ctx, k + 1) : spotrun_save(ctx, k + 1)) != SPOTRUN_OK)
			sr_fatal("save %ld: %s", k + 1, spotrun_getErrorString(ctx));
		blocked = sr_mono() - t;
		tcpu = cpu_of(RUSAGE_THREAD) - tcpu;
		faults = thread_faults() - faults;
		if (async && spotrun_wait(ctx) != SPOTRUN_OK)
			sr_fatal("save %ld: %s", k + 1, spotrun_getErrorString(ctx));
		t = sr_mono() - t;
		cpu = cpu_seconds() - cpu;
		if (!c.seen)
			sr_fatal("save %ld: no commit message with its figures", k + 1);
		printf("save ckpt=%ld seconds=%.3f durable=%.3f cpu=%.3f blocked_cpu=%.3f "
		    "blocked_faults=%ld raw=%" PRIu64 " stored=%" PRIu64 " new=%" PRIu64 "\n", k + 1,
		    blocked, t, cpu, tcpu, faults, c.raw, c.stored, c.new_bytes);
		fflush(stdout);
	}
	spotrun_free(ctx);
	return 0;
}

/* The newest checkpoint, restored into fresh buffers by a new context as
 * the next run would, must be step n with the state of checkpoint n. */
static int
cmd_restore(const char *url, long n, struct buf *b, size_t nb)
{
	struct commit c = { 0 };
	spotrun_ctx *ctx = open_ctx(url, &c);
	long long step;
	size_t i;

	if (ctx == NULL)
		sr_fatal("spotrun_create failed");
	register_all(ctx, b, nb, 1);
	if (spotrun_restore(ctx, &step) != SPOTRUN_OK)
		sr_fatal("restore: %s", spotrun_getErrorString(ctx));
	if (step != n)
		sr_fatal("restore: step %lld, expected %ld", step, n);
	for (i = 0; i < nb; i++) {
		set_state(&b[i], (size_t)n - 1);
		if (memcmp(b[i].back, b[i].host, b[i].bytes) != 0)
			sr_fatal("restore: %s differs from what step %ld saved", b[i].name, n);
	}
	printf("restore step=%lld identical\n", step);
	spotrun_free(ctx);
	return 0;
}

static int
cmd_write(const char *dir, long k, struct buf *b, size_t nb)
{
	char path[4096];
	size_t i, total = 0;
	double t;
	FILE *f;

	for (i = 0; i < nb; i++)
		set_state(&b[i], (size_t)k);
	/* As torch.save writes a file: buffered, no fsync. */
	t = sr_mono();
	for (i = 0; i < nb; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, b[i].name);
		if ((f = fopen(path, "wb")) == NULL || fwrite(b[i].host, 1, b[i].bytes, f) !=
		    b[i].bytes || fclose(f) != 0)
			sr_fatal("write %s: %s", path, strerror(errno));
		total += b[i].bytes;
	}
	printf("write seconds=%.3f bytes=%zu\n", sr_mono() - t, total);
	return 0;
}

int
main(int argc, char **argv)
{
	struct buf *b;
	long k;
	int i;

	if (argc < 5)
		usage();
	k = strtol(argv[3], NULL, 10);
	b = sr_calloc((size_t)(argc - 4), sizeof *b);
	for (i = 4; i < argc; i++)
		parse(argv[i], &b[i - 4]);
	if (strcmp(argv[1], "save") == 0 && k >= 1)
		return cmd_save(argv[2], k, b, (size_t)(argc - 4), 0);
	if (strcmp(argv[1], "save-async") == 0 && k >= 1)
		return cmd_save(argv[2], k, b, (size_t)(argc - 4), 1);
	if (strcmp(argv[1], "save-prepared") == 0 && k >= 1)
		return cmd_save(argv[2], k, b, (size_t)(argc - 4), 2);
	if (strcmp(argv[1], "restore") == 0 && k >= 1)
		return cmd_restore(argv[2], k, b, (size_t)(argc - 4));
	if (strcmp(argv[1], "write") == 0 && k >= 0)
		return cmd_write(argv[2], k, b, (size_t)(argc - 4));
	usage();
	return 2;
}
