/*
 * gpu-lib.c: libspotrun's device buffers on a real GPU, for tests/gpu/run.sh
 * (the tests run them against tests/fake-cuda.c; this is the same path
 * through the real driver). Buffers of bf16 and f32 weights and a frozen
 * bf16 one in device memory are saved, saved again unchanged (only the
 * chunk sums may come off the GPU: nothing new uploaded), saved after one
 * chunk changed, then overwritten and restored, and compared with what
 * was written, bit for bit; then an async save's snapshot (the time
 * training is blocked) is timed against pinned copies measured in the same
 * run. Prints TAP lines and the times and rates, and exits 0 with a
 * "skipped" line where there is no GPU.
 *
 * usage: gpu-lib [-s MiB per buffer, default 256]. The driver: as the
 * library's, $SPOTRUN_CUDA_LIBRARY or libcuda.so.1.
 */
#include "config.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SPOTRUN_EXPERIMENTAL
#include "libspotrun.h"

#include "cudaapi.h"

#define NB 3

static struct {
	CUresult (*init)(unsigned);
	CUresult (*get)(CUdevice *, int);
	CUresult (*retain)(CUcontext *, CUdevice);
	CUresult (*set)(CUcontext);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*dfree)(CUdeviceptr);
	CUresult (*htod)(CUdeviceptr, const void *, size_t);
	CUresult (*dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*host_alloc)(void **, size_t, unsigned);
	CUresult (*host_free)(void *);
} D;

static int nok, nbad;
static char last_info[1024];

static void
check(int cond, const char *what)
{
	printf("%s %d - %s\n", cond ? "ok" : "not ok", ++nok, what);
	nbad += !cond;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
on_msg(void *opaque, spotrun_msg_level level, const char *text)
{
	if (level == SPOTRUN_MSG_INFO)
		snprintf(last_info, sizeof last_info, "%s", text);
	else
		printf("# %s\n", text);
}

/* "new" bytes of the last commit's message, or -1. */
static long long
new_bytes(void)
{
	const char *p = strstr(last_info, " stored, ");
	long long n;

	return p != NULL && sscanf(p, " stored, %lld new", &n) == 1 ? n : -1;
}

static int
take(void *dl)
{
#define T(f, s) (*(void **)&D.f = dlsym(dl, s)) != NULL
	return T(init, "cuInit") && T(get, "cuDeviceGet") &&
	    T(retain, "cuDevicePrimaryCtxRetain") && T(set, "cuCtxSetCurrent") &&
	    T(alloc, "cuMemAlloc_v2") && T(dfree, "cuMemFree_v2") &&
	    T(htod, "cuMemcpyHtoD_v2") && T(dtoh, "cuMemcpyDtoH_v2") &&
	    T(host_alloc, "cuMemHostAlloc") && T(host_free, "cuMemFreeHost");
#undef T
}

/* The snapshot of an async save (the time training is blocked: the copy
 * off the devices into staging) against pinned copies measured here. */
static void
async_snapshot(const char *url, const CUdeviceptr *d, const spotrun_dtype *types,
    const char *const *names, size_t bytes)
{
	double best = 0, t0, t;
	spotrun_params p;
	spotrun_ctx *ctx;
	void *pinned;
	size_t i;
	int r, rc = SPOTRUN_OK;

	if (D.host_alloc(&pinned, bytes, 0) != 0) {
		printf("# no pinned memory for the bandwidth measurement\n");
		return;
	}
	for (r = 0; r < 3; r++) {
		t0 = now();
		D.dtoh(pinned, d[0], bytes);
		t = now() - t0;
		best = best == 0 || t < best ? t : best;
	}
	D.host_free(pinned);
	spotrun_params_init(&p);
	p.store = url;
	p.job = "gpu-lib-async";
	p.keep = 0;
	p.message = on_msg;
	ctx = spotrun_create(&p);
	/* the whole snapshot at once */
	rc = spotrun_set_staging_bytes(ctx, NB * bytes + ((size_t)64 << 20));
	for (i = 0; i < NB && rc == SPOTRUN_OK; i++) {
		uint64_t shape[1] = { bytes / (types[i] == SPOTRUN_F32 ? 4 : 2) };

		rc = spotrun_register_device(ctx, names[i], types[i], 1, shape, NULL, NULL,
		    (void *)(uintptr_t)d[i], 0);
	}
	for (r = 0; r < 2 && rc == SPOTRUN_OK; r++) {
		t0 = now();
		rc = spotrun_save_async(ctx, 1 + r);
		t = now() - t0;
		check(rc == SPOTRUN_OK && spotrun_wait(ctx) == SPOTRUN_OK, "an async save of the "
		    "device buffers lands");
		printf("# async snapshot %s: %.3f s blocked for %zu MiB, %.0f MB/s; pinned "
		    "cuMemcpyDtoH here %.0f MB/s: %.0f%% of it (target 80%%)\n", r == 0 ?
		    "(staging allocated)" : "(staging kept)", t, NB * bytes >> 20,
		    NB * bytes / t / 1e6, bytes / best / 1e6, 100 * (NB * bytes / t) / (bytes / best));
	}
	if (rc != SPOTRUN_OK)
		printf("# %s\n", spotrun_getErrorString(ctx));
	spotrun_free(ctx);
}

int
main(int argc, char **argv)
{
	static const char *const names[NB] = { "w", "m", "frozen" };
	static const spotrun_dtype types[NB] = { SPOTRUN_BF16, SPOTRUN_F32, SPOTRUN_BF16 };
	const char *lib = getenv("SPOTRUN_CUDA_LIBRARY");
	size_t mib = 256, bytes, i, j;
	char dir[] = "/tmp/gpu-lib-XXXXXX", url[64], cmd[96];
	uint8_t *want[NB], *got;
	CUdeviceptr d[NB];
	spotrun_params p;
	spotrun_ctx *ctx;
	CUcontext cc;
	CUdevice dev;
	long long step = -1;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	double t0, t;
	void *dl;
	int c, rc;

	while ((c = getopt(argc, argv, "s:")) != -1)
		mib = c == 's' ? strtoul(optarg, NULL, 10) : mib;
	bytes = mib << 20;
	if (lib == NULL || *lib == '\0')
		lib = "libcuda.so.1";
	if ((dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) == NULL || !take(dl) || D.init(0) != 0 ||
	    D.get(&dev, 0) != 0 || D.retain(&cc, dev) != 0 || D.set(cc) != 0) {
		printf("gpu-lib: skipped: no GPU here (%s)\n", dl == NULL ? dlerror() : lib);
		return 0;
	}
	if (mkdtemp(dir) == NULL)
		return perror("mkdtemp"), 1;
	snprintf(url, sizeof url, "file://%s", dir);
	printf("# libspotrun device buffers: %d x %zu MiB (bf16, f32, frozen bf16) through %s\n",
	    NB, mib, lib);
	for (i = 0; i < NB; i++) {
		want[i] = malloc(bytes);
		if (want[i] == NULL || D.alloc(&d[i], bytes) != 0)
			return fprintf(stderr, "gpu-lib: out of memory\n"), 1;
		/* weights near 1: compressible exponents, noisy mantissas (no
		 * two chunks alike, so nothing dedupes within a save) */
		for (j = 0; j + 8 <= bytes; j += 8) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			memcpy(want[i] + j, &seed, 8);
		}
		for (j = (types[i] == SPOTRUN_F32 ? 3 : 1); j < bytes; j += types[i] ==
		    SPOTRUN_F32 ? 4 : 2)
			want[i][j] = 0x3f ^ (want[i][j] & 0x80);
		D.htod(d[i], want[i], bytes);
	}
	spotrun_params_init(&p);
	p.store = url;
	p.job = "gpu-lib";
	p.keep = 0;
	p.message = on_msg;
	ctx = spotrun_create(&p);
	for (i = 0; i < NB; i++) {
		uint64_t shape[1] = { bytes / (types[i] == SPOTRUN_F32 ? 4 : 2) };

		rc = spotrun_register_device(ctx, names[i], types[i], 1, shape, NULL, NULL,
		    (void *)(uintptr_t)d[i], 0);
		if (rc != SPOTRUN_OK)
			printf("# %s\n", spotrun_getErrorString(ctx));
		check(rc == SPOTRUN_OK, "register a device buffer");
	}
	t0 = now();
	rc = spotrun_save(ctx, 1);
	t = now() - t0;
	check(rc == SPOTRUN_OK, "first save");
	printf("# first save: %.3f s, %.0f MB/s of device state (%s)\n", t, NB * bytes / t / 1e6,
	    last_info);
	t0 = now();
	rc = spotrun_save(ctx, 2);
	t = now() - t0;
	check(rc == SPOTRUN_OK && new_bytes() == 0, "second save of unchanged state uploads "
	    "nothing");
	printf("# unchanged save: %.3f s (%s)\n", t, last_info);
	want[0][12345] ^= 1;
	D.htod(d[0], want[0], bytes);
	t0 = now();
	rc = spotrun_save(ctx, 3);
	t = now() - t0;
	check(rc == SPOTRUN_OK && new_bytes() > 0 && new_bytes() < (long long)(32 << 20),
	    "a save after one chunk changed uploads about one chunk");
	printf("# one chunk changed: %.3f s (%s)\n", t, last_info);
	got = calloc(1, bytes);
	for (i = 0; i < NB; i++)
		D.htod(d[i], got, bytes);
	t0 = now();
	rc = spotrun_restore(ctx, &step);
	t = now() - t0;
	if (rc != SPOTRUN_OK)
		printf("# %s\n", spotrun_getErrorString(ctx));
	check(rc == SPOTRUN_OK && step == 3, "restore of step 3");
	printf("# restore: %.3f s, %.0f MB/s of device state\n", t, NB * bytes / t / 1e6);
	for (i = 0, c = 1; i < NB; i++) {
		D.dtoh(got, d[i], bytes);
		c &= memcmp(got, want[i], bytes) == 0;
	}
	check(c, "every device buffer bit for bit as saved");
	spotrun_free(ctx);
	async_snapshot(url, d, types, names, bytes);
	for (i = 0; i < NB; i++) {
		D.dfree(d[i]);
		free(want[i]);
	}
	free(got);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	printf("1..%d\n", nok);
	return nbad > 0;
}
