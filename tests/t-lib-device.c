/*
 * t-lib-device.c: libspotrun's device buffers (lib/device.c) through the
 * API, against the fake CUDA driver (tests/fake-cuda.c, loaded by path
 * through spotrun_set_cuda_library and SPOTRUN_CUDA_LIBRARY): every float dtype
 * and others saved from "device memory" and restored bit for bit, into
 * device and into host registrations and back; chunk reuse (a second save
 * of unchanged state copies nothing but the sums off the device and
 * uploads nothing, with the kernels; without them every chunk is copied
 * and none uploaded); only changed chunks copied; an error injected at
 * each CUDA call of the path failing with the call's and the CUresult's
 * names, nothing committed, the previous checkpoint restoring, no leak of
 * memory (the allocator hooks) nor of CUDA resources (the fake's count);
 * no driver, no device, a host pointer, another device's memory refused at
 * registration; an async save copying and staging only the chunks that
 * changed (the fake's counters of bytes copied off the device, the new
 * bytes of the manifest), its records serving the next save; a restore
 * onto the devices (resharding too) holding two chunks of pinned memory
 * at most. The same test runs in builds with nvcc (the kernels' fat
 * binaries run as their CPU twins inside the fake) and without.
 */
#include "config.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPOTRUN_EXPERIMENTAL
#include "libspotrun.h"

#include "tap.h"
#include "ckpt-util.h"
#include "lib-util.h"
#include "mdemu-util.h"

#include "codec.h"
#include "cudaapi.h"
#include "fake-cuda-util.h"
#include "manifest.h"
#include "store.h"
#include "util.h"

#ifdef HAVE_CUDA
#define KERNELS 1	/* the library has the kernels: sums and planes on the device */
#else
#define KERNELS 0
#endif

#define CHUNK ((size_t)64 << 10)

/* The fake, as the test drives it (tests/fake-cuda-util.h), and device
 * 1's primary context (device 0's is F.ctx0). */
static struct fcu F;
static CUcontext ctx1;

static void
fake_open(void)
{
	fcu_open(&F, SR_FAKE_CUDA, 2);
	if (F.retain(&ctx1, 1) != CUDA_SUCCESS || F.set(F.ctx0) != CUDA_SUCCESS)
		sr_fatal("fake CUDA: no context on device 1");
}

/* The buffers: every float dtype, an integer one, a slice, an empty one,
 * of sizes that end inside a chunk. */
#define NBUF 9
static struct dbuf {
	const char *name;
	spotrun_dtype dtype;
	int ndim;
	uint64_t shape[2], off[2], size[2];
	int whole;
	size_t esize;
	size_t bytes;
	uint8_t *want;			/* what the device buffer holds */
	uint8_t *host;			/* a host registration of the same box */
	CUdeviceptr d;
} bufs[NBUF] = {
	{ "f32", SPOTRUN_F32, 1, { 70001 }, { 0 }, { 0 }, 1, 4, 0, NULL, NULL, 0 },
	{ "f64", SPOTRUN_F64, 2, { 100, 300 }, { 0 }, { 0 }, 1, 8, 0, NULL, NULL, 0 },
	{ "f16", SPOTRUN_F16, 1, { 50001 }, { 0 }, { 0 }, 1, 2, 0, NULL, NULL, 0 },
	{ "bf16", SPOTRUN_BF16, 2, { 64, 1000 }, { 16, 0 }, { 40, 1000 }, 0, 2, 0, NULL, NULL, 0 },
	{ "e4m3", SPOTRUN_F8_E4M3, 1, { 131075 }, { 0 }, { 0 }, 1, 1, 0, NULL, NULL, 0 },
	{ "e5m2", SPOTRUN_F8_E5M2, 1, { 999 }, { 0 }, { 0 }, 1, 1, 0, NULL, NULL, 0 },
	{ "i32", SPOTRUN_I32, 1, { 30000 }, { 0 }, { 0 }, 1, 4, 0, NULL, NULL, 0 },
	{ "raw", SPOTRUN_BYTES, 1, { CHUNK }, { 0 }, { 0 }, 1, 1, 0, NULL, NULL, 0 },
	{ "empty", SPOTRUN_F32, 1, { 0 }, { 0 }, { 0 }, 1, 4, 0, NULL, NULL, 0 },
};

static size_t
chunks_of(size_t bytes)
{
	return (bytes + CHUNK - 1) / CHUNK;
}

static size_t
all_chunks(void)
{
	size_t i, n = 0;

	for (i = 0; i < NBUF; i++)
		n += chunks_of(bufs[i].bytes);
	return n;
}

static uint64_t
all_bytes(void)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < NBUF; i++)
		n += bufs[i].bytes;
	return n;
}

/* Floats that look like weights: small values, so the exponent planes
 * compress (bytes of noise are kept for the rest). */
static void
fill(struct dbuf *b, uint64_t seed)
{
	size_t i;

	tu_fill(b->want, b->bytes, seed);
	if (b->dtype == SPOTRUN_F32)
		for (i = 3; i < b->bytes; i += 4)
			b->want[i] = 0x3c | (b->want[i] & 0x80);
	if (b->dtype == SPOTRUN_BF16 || b->dtype == SPOTRUN_F16)
		for (i = 1; i < b->bytes; i += 2)
			b->want[i] = 0x3c | (b->want[i] & 0x80);
}

static void
bufs_init(void)
{
	size_t i, n;
	int d;

	for (i = 0; i < NBUF; i++) {
		struct dbuf *b = &bufs[i];

		for (n = 1, d = 0; d < b->ndim; d++)
			n *= b->whole ? b->shape[d] : b->size[d];
		b->bytes = n * b->esize;
		b->want = sr_calloc(1, b->bytes + 1);
		b->host = sr_calloc(1, b->bytes + 1);
		if (b->bytes > 0 && F.alloc(&b->d, b->bytes) != CUDA_SUCCESS)
			sr_fatal("fake CUDA: cuMemAlloc");
		fill(b, 100 + i);
	}
}

/* Write what `want` holds to the devices (or a pattern over it). */
static void
upload(void)
{
	size_t i;

	for (i = 0; i < NBUF; i++)
		if (bufs[i].bytes > 0 && F.htod(bufs[i].d, bufs[i].want, bufs[i].bytes) != 0)
			sr_fatal("fake CUDA: cuMemcpyHtoD");
}

static void
scribble(void)
{
	size_t i;
	uint8_t *junk;

	for (i = 0; i < NBUF; i++) {
		if (bufs[i].bytes == 0)
			continue;
		junk = sr_malloc(bufs[i].bytes);
		memset(junk, 0x5a, bufs[i].bytes);
		F.htod(bufs[i].d, junk, bufs[i].bytes);
		memset(bufs[i].host, 0x5a, bufs[i].bytes);
		free(junk);
	}
}

/* Whether every device buffer (host: the host registrations) holds
 * `want`; names the first that does not. */
static int
holds_want(int host)
{
	uint8_t *got;
	size_t i;
	int same;

	for (i = 0; i < NBUF; i++) {
		got = sr_malloc(bufs[i].bytes + 1);
		if (host)
			memcpy(got, bufs[i].host, bufs[i].bytes);
		else if (bufs[i].bytes > 0)
			F.dtoh(got, bufs[i].d, bufs[i].bytes);
		same = memcmp(got, bufs[i].want, bufs[i].bytes) == 0;
		free(got);
		if (!same) {
			printf("# %s buffer %s differs\n", host ? "host" : "device", bufs[i].name);
			return 0;
		}
	}
	return 1;
}

static const char *g_url;
static struct sr_store *g_st;	/* the store, to read what the library wrote */

static spotrun_ctx *
new_ctx(const char *job, const char *lib, struct counts *c)
{
	spotrun_params p;
	spotrun_ctx *ctx;

	spotrun_params_init(&p);
	p.store = g_url;
	p.job = job;
	p.chunk_size = CHUNK;
	p.threads = 2;
	p.keep = 0;
	if (c != NULL) {
		p.alloc = count_alloc;
		p.free = count_free;
		p.alloc_opaque = c;
	}
	ctx = spotrun_create(&p);
	if (spotrun_set_cuda_library(ctx, lib) != SPOTRUN_OK)
		sr_fatal("spotrun_set_cuda_library: %s", spotrun_getErrorString(ctx));
	return ctx;
}

/* Register every buffer: on the device, or its host copy. */
static spotrun_error
register_all(spotrun_ctx *ctx, int host)
{
	spotrun_error rc;
	size_t i;

	for (i = 0; i < NBUF; i++) {
		struct dbuf *b = &bufs[i];
		const uint64_t *off = b->whole ? NULL : b->off, *size = b->whole ? NULL : b->size;

		rc = host ? spotrun_register(ctx, b->name, b->dtype, b->ndim, b->shape, off, size,
		    b->host) : spotrun_register_device(ctx, b->name, b->dtype, b->ndim, b->shape, off,
		    size, (void *)(uintptr_t)b->d, 0);
		if (rc != SPOTRUN_OK) {
			printf("# register %s: %s\n", b->name, spotrun_getErrorString(ctx));
			return rc;
		}
	}
	return SPOTRUN_OK;
}

/* A save through a fresh context of device (host: host) registrations. */
static spotrun_error
save_with(const char *job, int host, long long step)
{
	spotrun_ctx *ctx = new_ctx(job, SR_FAKE_CUDA, NULL);
	spotrun_error rc = register_all(ctx, host);

	if (rc == SPOTRUN_OK && (rc = spotrun_save(ctx, step)) != SPOTRUN_OK)
		printf("# save: %s\n", spotrun_getErrorString(ctx));
	spotrun_free(ctx);
	return rc;
}

static spotrun_error
restore_with(const char *job, int host, long long *step)
{
	spotrun_ctx *ctx = new_ctx(job, SR_FAKE_CUDA, NULL);
	spotrun_error rc = register_all(ctx, host);

	if (rc == SPOTRUN_OK && (rc = spotrun_restore(ctx, step)) != SPOTRUN_OK)
		printf("# restore: %s\n", spotrun_getErrorString(ctx));
	spotrun_free(ctx);
	return rc;
}

/* ---- the tests ---- */

static void
test_round_trip(void)
{
	struct sr_manifest m;
	uint64_t live = F.count("live");
	long long step = -1;
	size_t i, k, planes = 0, csums = 0, chunks = 0, launches = 0;
	int ok_xf = 1;

	upload();
	F.reset();
	is_int(save_with("dev/a", 0, 5), SPOTRUN_OK, "a save of %d device buffers (every float "
	    "dtype, i32, bytes, a slice, an empty one)", NBUF);
	is_int((int)F.count("pageable_async"), 0, "every async copy went to or from pinned memory");
	is_int((int)F.count("cuCtxPushCurrent"), (int)F.count("cuCtxPopCurrent"),
	    "every context pushed was popped (%d): the caller's current context is untouched",
	    (int)F.count("cuCtxPushCurrent"));
	is_int((int)F.count("live"), (int)live, "every CUDA resource of the context given back");
	for (i = 0; i < NBUF; i++)
		launches += (bufs[i].bytes > 0 ? 2 : 0) + (bufs[i].dtype == SPOTRUN_F32 ||
		    bufs[i].dtype == SPOTRUN_F16 || bufs[i].dtype == SPOTRUN_BF16 ?
		    chunks_of(bufs[i].bytes) : 0);
	if (KERNELS)
		is_int((int)F.count("cuLaunchKernel"), (int)launches, "the kernels ran: chunk sums "
		    "(2 launches a buffer), planes of each f32, f16 and bf16 chunk");
	else
		is_int((int)F.count("cuLaunchKernel"), 0, "no kernel in a build without nvcc");
	if (load_manifest(g_st, "dev/a", 0, &m) == 0) {
		for (i = 0; i < m.ntensors; i++)
			for (k = 0; k < m.tensors[i].pieces[0].data.nchunks; k++) {
				const struct sr_mchunk *c = &m.tensors[i].pieces[0].data.chunks[k];
				int f = m.tensors[i].dtype == SR_DT_F32 ? 4 : m.tensors[i].dtype ==
				    SR_DT_F16 || m.tensors[i].dtype == SR_DT_BF16 ? 2 : 0;

				chunks++;
				csums += c->has_csum;
				planes += c->xf != SR_XF_NONE;
				if (KERNELS && f != 0 && c->xf != f)
					ok_xf = 0;
			}
		is_int((int)chunks, (int)all_chunks(), "the manifest holds every chunk");
		is_int((int)csums, (int)chunks, "each with its chunk sum (csum)");
		if (KERNELS)
			ok(ok_xf, "the float chunks split on the device are recorded plane4 (f32) "
			    "and plane2 (f16, bf16): %zu chunks in planes", planes);
		else
			ok(ok_xf && planes > 0, "raw copies: the encoder chose the planes of %zu "
			    "chunks itself", planes);
		sr_manifest_free(&m);
	} else {
		ok(0, "the manifest parses");
		ok(0, "csum");
		ok(0, "planes");
	}
	scribble();
	is_int(restore_with("dev/a", 0, &step), SPOTRUN_OK, "restored into the device buffers");
	is_int((int)step, 5, "step 5");
	ok(holds_want(0), "every device buffer bit for bit as saved");
	is_int(restore_with("dev/a", 1, &step), SPOTRUN_OK, "and into host registrations of the "
	    "same boxes");
	ok(holds_want(1), "every host buffer bit for bit as the device saved it");

	/* the other way: saved from host buffers, restored onto the devices */
	for (i = 0; i < NBUF; i++) {
		fill(&bufs[i], 900 + i);
		memcpy(bufs[i].host, bufs[i].want, bufs[i].bytes);
	}
	is_int(save_with("dev/b", 1, 8), SPOTRUN_OK, "a save of the host registrations");
	scribble();
	is_int(restore_with("dev/b", 0, &step), SPOTRUN_OK, "restored onto the device buffers");
	ok(step == 8 && holds_want(0), "bit for bit, step 8");
	is_int((int)F.count("pageable_async"), 0, "through pinned memory");
	is_int((int)F.count("live"), (int)live, "nothing of CUDA left behind");
}

/* A manifest whose csum is not hex is refused, naming the key. */
static void
test_bad_csum(void)
{
	char key[] = "dev/a/manifests/0000000000.json", err[SR_ERRMAX], *at;
	struct sr_manifest m;
	void *buf;
	size_t len;

	if (sr_store_get(g_st, key, SR_MANIFEST_MAX, &buf, &len, NULL, err) != 0)
		sr_fatal("%s", err);
	buf = realloc(buf, len + 1);
	((char *)buf)[len] = '\0';
	if ((at = strstr(buf, "\"csum\": \"")) != NULL) {
		memcpy(at + 9, "xyz", 3);	/* 32 hex digits become xyz */
		memmove(at + 12, at + 41, strlen(at + 41) + 1);
	}
	ok(at != NULL && sr_manifest_parse(buf, strlen(buf), &m, err) == -1 &&
	    strcmp(err, "tensors[0].pieces[0].chunks[0].csum: \"xyz\" is not 32 lowercase hex "
	    "digits") == 0, "a csum that is not hex is refused: %s", err);
	sr_manifest_free(&m);
	free(buf);
}

static void
test_reuse(void)
{
	struct sr_manifest m;
	struct counts cnt = { 0, 0 };
	spotrun_ctx *ctx = new_ctx("dev/r", SR_FAKE_CUDA, &cnt);
	size_t nc = all_chunks();
	uint8_t one = 0x77;
	long long step;

	upload();
	is_int(register_all(ctx, 0), SPOTRUN_OK, "reuse: registered");
	F.reset();
	is_int(spotrun_save(ctx, 1), SPOTRUN_OK, "the first save");
	is_int((int)F.count("cuMemHostAlloc"), 2, "its staging: two pinned buffers (of a chunk "
	    "each), whatever the %" PRIu64 " bytes saved", all_bytes());
	F.reset();
	is_int(spotrun_save(ctx, 2), SPOTRUN_OK, "a second save of the same state");
	is_int((int)F.count("cuMemHostAlloc"), 0, "keeps them");
	if (KERNELS) {
		is_int((int)F.count("dtoh_bytes"), (int)(16 * nc), "copied off the device: the %zu "
		    "chunk sums only (16 bytes each)", nc);
		is_int((int)F.count("cuMemcpyDtoHAsync"), 0, "no chunk copied off the device");
	} else {
		is_int((int)F.count("dtoh_bytes"), (int)all_bytes(), "without the kernels: every "
		    "chunk copied, %" PRIu64 " bytes, and its sum computed on the host", all_bytes());
		is_int((int)F.count("cuMemcpyDtoHAsync"), (int)(nc), "one copy a chunk");
	}
	if (load_manifest(g_st, "dev/r", 1, &m) == 0) {
		is_int((int)m.stats.new_bytes, 0, "nothing uploaded (new_bytes 0)");
		is_int((int)m.stats.reused_chunks, (int)nc, "all %zu chunks referenced", nc);
		sr_manifest_free(&m);
	} else {
		ok(0, "manifest 1");
		ok(0, "manifest 1");
	}

	/* one byte of one chunk changes: that chunk only comes off the GPU */
	bufs[0].want[CHUNK + 5] ^= one;
	F.htod(bufs[0].d, bufs[0].want, bufs[0].bytes);
	F.reset();
	is_int(spotrun_save(ctx, 3), SPOTRUN_OK, "a save after one byte of f32 changed");
	if (KERNELS) {
		is_int((int)F.count("cuMemcpyDtoHAsync"), 1, "one chunk copied off the device");
		is_int((int)F.count("dtoh_bytes"), (int)(16 * nc + CHUNK), "its %zu bytes and the "
		    "sums", CHUNK);
	} else {
		is_int((int)F.count("cuMemcpyDtoHAsync"), (int)nc, "without the kernels every chunk "
		    "is copied");
		is_int((int)F.count("dtoh_bytes"), (int)all_bytes(), "all of them");
	}
	if (load_manifest(g_st, "dev/r", 2, &m) == 0) {
		ok(m.stats.new_bytes > 0 && m.stats.reused_chunks == nc - 1, "one chunk uploaded, "
		    "%" PRIu64 " referenced", m.stats.reused_chunks);
		ok(m.tensors[1].pieces[0].data.chunks[1].has_csum &&
		    memcmp(m.tensors[1].pieces[0].data.chunks[0].id,
		    m.tensors[1].pieces[0].data.chunks[1].id, 16) != 0, "the changed chunk has its "
		    "new id and sum");
		sr_manifest_free(&m);
	} else {
		ok(0, "manifest 2");
		ok(0, "manifest 2");
	}
	spotrun_free(ctx);
	ok(cnt.allocs > 0 && cnt.allocs == cnt.frees, "the hooks made %d allocations and as many "
	    "frees (%d)", cnt.allocs, cnt.frees);
	scribble();
	ok(restore_with("dev/r", 0, &step) == SPOTRUN_OK && step == 3 && holds_want(0),
	    "the third checkpoint restores bit for bit");

	/* a restarted job: the context that restored compares with what it
	 * restored, so its first save copies nothing unchanged off the GPU */
	memset(&cnt, 0, sizeof cnt);
	ctx = new_ctx("dev/r", SR_FAKE_CUDA, &cnt);
	ok(register_all(ctx, 0) == SPOTRUN_OK && spotrun_restore(ctx, &step) == SPOTRUN_OK &&
	    step == 3, "a new context restores step 3");
	F.reset();
	is_int(spotrun_save(ctx, 4), SPOTRUN_OK, "and saves step 4 unchanged");
	is_int((int)F.count("cuMemcpyDtoHAsync"), KERNELS ? 0 : (int)nc, KERNELS ? "no chunk "
	    "copied off the device: the sums of the checkpoint restored are its reference" :
	    "without the kernels every chunk is copied");
	if (load_manifest(g_st, "dev/r", 3, &m) == 0) {
		ok(m.stats.new_bytes == 0 && m.stats.reused_chunks == nc, "nothing uploaded, all "
		    "%zu chunks referenced", nc);
		sr_manifest_free(&m);
	} else {
		ok(0, "manifest 3");
	}
	spotrun_free(ctx);
	ok(cnt.allocs > 0 && cnt.allocs == cnt.frees, "the hooks balanced (%d allocations)",
	    cnt.allocs);
}

/* Warnings the library said, for test_pack_gone. */
static void
on_warning(void *opaque, spotrun_msg_level level, const char *text)
{
	if (level == SPOTRUN_MSG_WARNING && strstr(text, "saving again, every chunk") != NULL)
		snprintf(opaque, SR_ERRMAX, "%s", text);
}

/* The packs of the checkpoint a save would reference are deleted behind
 * its back: the save finds the chunks gone, says so, and saves again
 * copying and storing every chunk, so nothing it commits names what is
 * gone. */
static void
test_pack_gone(void)
{
	char cmd[512], warned[SR_ERRMAX] = "";
	struct sr_manifest m;
	spotrun_params p;
	spotrun_ctx *ctx;
	long long step;

	spotrun_params_init(&p);
	p.store = g_url;
	p.job = "dev/p";
	p.chunk_size = CHUNK;
	p.keep = 0;
	p.message = on_warning;
	p.message_opaque = warned;
	ctx = spotrun_create(&p);
	spotrun_set_cuda_library(ctx, SR_FAKE_CUDA);
	upload();
	ok(register_all(ctx, 0) == SPOTRUN_OK && spotrun_save(ctx, 1) == SPOTRUN_OK,
	    "packs gone: a first save");
	snprintf(cmd, sizeof cmd, "rm -f %s/dev/p/packs/*", g_url + strlen("file://"));
	if (system(cmd) != 0)
		sr_fatal("%s failed", cmd);
	F.reset();
	is_int(spotrun_save(ctx, 2), SPOTRUN_OK, "the next save, whose unchanged chunks were in "
	    "the packs deleted, commits");
	ok(strstr(warned, "is not in the checkpoint this one is based on, or its pack is gone; "
	    "saving again, every chunk") != NULL, "saying why it saved again: %s", warned);
	ok(F.count("cuMemcpyDtoHAsync") >= all_chunks() - 1, "copying the chunks off the device "
	    "(%d copies)", (int)F.count("cuMemcpyDtoHAsync"));
	if (load_manifest(g_st, "dev/p", 1, &m) == 0) {
		ok(m.stats.reused_chunks == 0, "referencing nothing of the checkpoint before");
		sr_manifest_free(&m);
	} else {
		ok(0, "manifest 1");
	}
	spotrun_free(ctx);
	scribble();
	ok(restore_with("dev/p", 0, &step) == SPOTRUN_OK && step == 2 && holds_want(0),
	    "and restores bit for bit");
}

/* The encoded bytes of chunk k of tensor i (by name) of checkpoint seq. */
static uint64_t
clen_at(const char *job, uint64_t seq, const char *name, size_t k)
{
	struct sr_manifest m;
	uint64_t n = 0;
	size_t i;

	if (load_manifest(g_st, job, seq, &m) == 0) {
		for (i = 0; i < m.ntensors; i++)
			if (strcmp(m.tensors[i].name, name) == 0 &&
			    k < m.tensors[i].pieces[0].data.nchunks)
				n = m.tensors[i].pieces[0].data.chunks[k].clen;
		sr_manifest_free(&m);
	}
	return n;
}

/* Checkpoint seq of job uploaded new bytes and referenced reused chunks. */
static void
uploaded(const char *job, uint64_t seq, uint64_t new_bytes, size_t reused, const char *what)
{
	struct sr_manifest m;

	if (load_manifest(g_st, job, seq, &m) == 0) {
		ok(m.stats.new_bytes == new_bytes && m.stats.reused_chunks == reused, "%s: %" PRIu64
		    " new bytes uploaded (want %" PRIu64 "), %" PRIu64 " chunks referenced (want %zu)",
		    what, m.stats.new_bytes, new_bytes, m.stats.reused_chunks, reused);
		sr_manifest_free(&m);
	} else {
		ok(0, "%s: manifest %" PRIu64 " loads", what, seq);
	}
}

/* The packs an async save's references point into are deleted behind its
 * back: the save cannot copy those chunks again (the buffers may have
 * changed since the snapshot), so it fails, naming the chunk, commits
 * nothing, and the next save copies and stores every chunk. */
static void
test_pack_gone_async(void)
{
	char cmd[512];
	struct sr_manifest m;
	spotrun_ctx *ctx = new_ctx("dev/pa", SR_FAKE_CUDA, NULL);
	const char *msg;
	long long step;

	upload();
	ok(register_all(ctx, 0) == SPOTRUN_OK && spotrun_save_async(ctx, 1) == SPOTRUN_OK &&
	    spotrun_wait(ctx) == SPOTRUN_OK, "async, packs gone: a first save");
	snprintf(cmd, sizeof cmd, "rm -f %s/dev/pa/packs/*", g_url + strlen("file://"));
	if (system(cmd) != 0)
		sr_fatal("%s failed", cmd);
	is_int(spotrun_save_async(ctx, 2), SPOTRUN_OK, "the next async save takes its snapshot");
	is_int(spotrun_wait(ctx), SPOTRUN_ERROR_STORE, "and fails: the chunks it references are "
	    "gone");
	msg = spotrun_getErrorString(ctx);
	ok(strstr(msg, "is not in the checkpoint this one is based on, or its pack is gone") !=
	    NULL, "naming the chunk: %s", msg);
	ok(load_manifest(g_st, "dev/pa", 1, &m) == -1, "nothing committed (no checkpoint 1)");
	sr_manifest_free(&m);
	F.reset();
	ok(spotrun_save_async(ctx, 3) == SPOTRUN_OK && spotrun_wait(ctx) == SPOTRUN_OK,
	    "the save after it commits");
	is_int((int)F.count("cuMemcpyDtoHAsync"), (int)all_chunks(), "copying every chunk off "
	    "the device: no record is trusted after a failure");
	if (load_manifest(g_st, "dev/pa", 1, &m) == 0) {
		ok(m.stats.reused_chunks == 0 && m.stats.new_bytes == m.stats.stored_bytes &&
		    m.stats.new_bytes > 0, "storing every chunk again (%" PRIu64 " new bytes), "
		    "referencing none", m.stats.new_bytes);
		sr_manifest_free(&m);
	} else {
		ok(0, "checkpoint 1 loads");
	}
	spotrun_free(ctx);
	scribble();
	ok(restore_with("dev/pa", 0, &step) == SPOTRUN_OK && step == 3 && holds_want(0),
	    "and restores bit for bit");
}

/* An async save of device buffers: the snapshot copied off the devices
 * into pinned staging (lib/staging.c through lib/device.c) before
 * spotrun_save_async returns, so the buffers may change at once; with
 * the kernels, only the chunks whose sums differ from the last commit's
 * are copied and staged, the others referenced, and the async commit's
 * records serve the next save of either kind. */
static void
test_async(void)
{
	struct counts cnt = { 0, 0 };
	uint64_t live = F.count("live"), sums, pinned;
	spotrun_ctx *ctx = new_ctx("dev/s", SR_FAKE_CUDA, &cnt);
	size_t nc = all_chunks();
	long long step = -1;

	sums = KERNELS ? 16 * nc : 0;
	upload();
	is_int(register_all(ctx, 0), SPOTRUN_OK, "async: registered");
	F.reset();
	is_int(spotrun_save_async(ctx, 6), SPOTRUN_OK, "an async save of the device buffers");
	is_int((int)F.count("dtoh_bytes"), (int)(all_bytes() + sums), KERNELS ? "every byte "
	    "copied off the devices before it returned (nothing to reference yet), and the sums" :
	    "every byte copied off the devices before it returned");
	scribble();
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "it lands while the buffers have changed");
	is_int((int)F.count("pageable_async"), 0, "its staging was pinned");
	upload();
	F.reset();
	is_int(spotrun_save_async(ctx, 7), SPOTRUN_OK, "a second async save, of the same state");
	is_int((int)F.count("cuMemcpyDtoHAsync"), KERNELS ? 0 : (int)nc, KERNELS ? "no chunk "
	    "copied off the device: every sum matched the async commit's records" : "without the "
	    "kernels every chunk is copied, its sum computed from staging");
	is_int((int)F.count("dtoh_bytes"), (int)(KERNELS ? sums : all_bytes()), KERNELS ?
	    "only the sums came off the devices" : "all of them");
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "it commits");
	uploaded("dev/s", 1, 0, nc, "the second async save");
	spotrun_free(ctx);
	ok(cnt.allocs == cnt.frees && F.count("live") == live, "nothing left behind (%d "
	    "allocations, %d frees)", cnt.allocs, cnt.frees);
	ok(restore_with("dev/s", 0, &step) == SPOTRUN_OK && step == 7 && holds_want(0),
	    "the snapshot restores bit for bit");

	/* a context that restored: its first async save stages nothing
	 * unchanged (no staging at all with the kernels) */
	memset(&cnt, 0, sizeof cnt);
	ctx = new_ctx("dev/s", SR_FAKE_CUDA, &cnt);
	ok(register_all(ctx, 0) == SPOTRUN_OK && spotrun_restore(ctx, &step) == SPOTRUN_OK &&
	    step == 7, "a new context restores step 7");
	pinned = F.count("pinned_bytes");
	F.reset();
	is_int(spotrun_save_async(ctx, 8), SPOTRUN_OK, "and saves step 8 unchanged, in the "
	    "background");
	is_int((int)F.count("cuMemcpyDtoHAsync"), KERNELS ? 0 : (int)nc, KERNELS ? "no chunk "
	    "copied: the checkpoint restored is the reference" : "every chunk copied");
	is_int((int)(F.count("pinned_peak") - pinned), KERNELS ? 0 : (int)all_bytes(), KERNELS ?
	    "no staging pinned for it: nothing to stage" : "staging of the whole state pinned");
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "it commits");
	uploaded("dev/s", 2, 0, nc, "the async save after the restore");

	/* one byte of chunk 1 of f32: that chunk alone comes off the GPU */
	bufs[0].want[CHUNK + 9] ^= 0x44;
	upload();
	pinned = F.count("pinned_bytes");
	F.reset();
	is_int(spotrun_save_async(ctx, 9), SPOTRUN_OK, "an async save after one byte changed");
	is_int((int)F.count("cuMemcpyDtoHAsync"), KERNELS ? 1 : (int)nc, KERNELS ? "one chunk "
	    "copied off the device" : "every chunk copied");
	is_int((int)F.count("dtoh_bytes"), (int)(KERNELS ? sums + CHUNK : all_bytes()), KERNELS ?
	    "its bytes and the sums" : "all of them");
	is_int((int)(F.count("pinned_bytes") - pinned), KERNELS ? (int)CHUNK : 0, KERNELS ?
	    "its staging: the one chunk staged, pinned" : "its staging kept from the save "
	    "before, of the whole state");
	is_int(spotrun_wait(ctx), SPOTRUN_OK, "it commits");
	uploaded("dev/s", 3, clen_at("dev/s", 3, "f32", 1), nc - 1, "the changed chunk alone "
	    "uploaded");

	/* the async commit's records serve a blocking save */
	F.reset();
	is_int(spotrun_save(ctx, 10), SPOTRUN_OK, "a blocking save after the async one");
	is_int((int)F.count("cuMemcpyDtoHAsync"), KERNELS ? 0 : (int)nc, KERNELS ? "copies no "
	    "chunk off the device: the async commit kept its records" : "copies every chunk "
	    "(no kernels)");
	is_int((int)F.count("dtoh_bytes"), (int)(KERNELS ? sums : all_bytes()), KERNELS ?
	    "only the sums" : "all of them");
	uploaded("dev/s", 4, 0, nc, "the blocking save after the async one");
	spotrun_free(ctx);
	ok(cnt.allocs == cnt.frees && F.count("live") == live, "nothing left behind (%d "
	    "allocations, %d frees)", cnt.allocs, cnt.frees);
	scribble();
	ok(restore_with("dev/s", 0, &step) == SPOTRUN_OK && step == 10 && holds_want(0),
	    "it restores bit for bit");

	/* a budget of two chunks: the device chunks staged half by half */
	{
		spotrun_params p;
		uint64_t base = F.count("pinned_bytes");

		spotrun_params_init(&p);
		p.store = g_url;
		p.job = "dev/halves";
		p.chunk_size = CHUNK;
		p.keep = 0;
		ctx = spotrun_create(&p);
		spotrun_set_staging_bytes(ctx, 2 * CHUNK);
		spotrun_set_cuda_library(ctx, SR_FAKE_CUDA);
		upload();
		F.reset();
		ok(register_all(ctx, 0) == SPOTRUN_OK && spotrun_save_async(ctx, 11) == SPOTRUN_OK,
		    "an async save of %" PRIu64 " bytes of device buffers with a budget of two "
		    "chunks", all_bytes());
		scribble();
		is_int(spotrun_wait(ctx), SPOTRUN_OK, "it commits, staged a chunk at a time");
		is_int((int)(F.count("pinned_peak") - base), (int)(2 * CHUNK), "its staging: the "
		    "budget, pinned");
		spotrun_free(ctx);
		ok(restore_with("dev/halves", 0, &step) == SPOTRUN_OK && step == 11 && holds_want(0),
		    "and restores bit for bit");
	}
}

/* A restore onto the devices holds two chunks of pinned memory at most,
 * whatever the state's size: each chunk's bytes go from the reader
 * through one of two pinned buffers onto the device. Also when it
 * reshards: a device buffer of rows 33-72 of "f64" (saved whole, 40 of
 * its 100 rows) and one of columns 100-399 of rows 0-19 of "bf16"'s
 * saved slice, read out of the chunks that hold them. */
static void
test_restore_bound(void)
{
	uint64_t base = F.count("pinned_bytes"), live = F.count("live");
	uint64_t off64[2] = { 33, 0 }, size64[2] = { 40, 300 };
	uint64_t offbf[2] = { 16, 100 }, sizebf[2] = { 20, 300 };
	size_t n64 = 40 * 300 * 8, nbf = 20 * 300 * 2, r;
	uint8_t *got = sr_malloc(n64 + 1);
	CUdeviceptr d64 = 0, dbf = 0;
	struct counts cnt = { 0, 0 };
	spotrun_params p;
	spotrun_ctx *ctx;
	long long step = -1;
	int same = 1;

	upload();
	is_int(save_with("dev/bound", 0, 12), SPOTRUN_OK, "bound: a checkpoint of the %" PRIu64
	    " bytes of device buffers", all_bytes());
	scribble();
	F.reset();
	is_int(restore_with("dev/bound", 0, &step), SPOTRUN_OK, "restored onto the devices");
	ok(step == 12 && holds_want(0), "bit for bit");
	is_int((int)(F.count("pinned_peak") - base), (int)(2 * CHUNK), "holding two chunks of "
	    "pinned memory at most (%d bytes), not the state's %d", (int)(2 * CHUNK),
	    (int)all_bytes());
	is_int((int)F.count("pageable_async"), 0, "every copy onto the devices from pinned memory");

	if (F.alloc(&d64, n64) != CUDA_SUCCESS || F.alloc(&dbf, nbf) != CUDA_SUCCESS)
		sr_fatal("fake CUDA: cuMemAlloc");
	ctx = new_ctx("dev/bound", SR_FAKE_CUDA, &cnt);
	ok(spotrun_register_device(ctx, "f64", SPOTRUN_F64, 2, bufs[1].shape, off64, size64,
	    (void *)(uintptr_t)d64, 0) == SPOTRUN_OK && spotrun_register_device(ctx, "bf16",
	    SPOTRUN_BF16, 2, bufs[3].shape, offbf, sizebf, (void *)(uintptr_t)dbf, 0) == SPOTRUN_OK,
	    "boxes other than those saved, on the device");
	F.reset();
	is_int(spotrun_restore(ctx, &step), SPOTRUN_OK, "a restore that reshards onto them");
	is_int((int)(F.count("pinned_peak") - base), (int)(2 * CHUNK), "two chunks of pinned "
	    "memory at most there too");
	F.dtoh(got, d64, n64);
	same = memcmp(got, bufs[1].want + 33 * 300 * 8, n64) == 0;
	F.dtoh(got, dbf, nbf);
	/* bf16 was saved as rows 16-55 of its shape: rows 16-35, columns 100-399 */
	for (r = 0; r < 20; r++)
		same &= memcmp(got + r * 600, bufs[3].want + r * 2000 + 200, 600) == 0;
	ok(same && step == 12, "each box bit for bit");
	spotrun_free(ctx);
	F.dfree(d64);
	F.dfree(dbf);
	free(got);
	ok(cnt.allocs == cnt.frees && F.count("live") == live && F.count("pinned_bytes") == base,
	    "nothing left behind, no pinned memory held");

	/* a context of smaller chunks than the checkpoint's: its staging
	 * grows to two of the checkpoint's chunks, the smaller ones freed
	 * first */
	spotrun_params_init(&p);
	p.store = g_url;
	p.job = "dev/bound";
	p.chunk_size = CHUNK / 4;
	p.keep = 0;
	ctx = spotrun_create(&p);
	spotrun_set_cuda_library(ctx, SR_FAKE_CUDA);
	scribble();
	F.reset();
	ok(register_all(ctx, 0) == SPOTRUN_OK && spotrun_restore(ctx, &step) == SPOTRUN_OK &&
	    step == 12 && holds_want(0), "a context of %zu-byte chunks restores the checkpoint of "
	    "%zu-byte ones bit for bit", CHUNK / 4, CHUNK);
	is_int((int)(F.count("pinned_peak") - base), (int)(2 * CHUNK), "holding two of the "
	    "checkpoint's chunks of pinned memory at most");
	spotrun_free(ctx);
	is_int((int)F.count("pinned_bytes"), (int)base, "and none after spotrun_free");
}

/* A save (mode 0), restore (1) or async save (2) with FAKE_CUDA_FAIL=spec:
 * its code, its message
 * (the call and the CUresult named), nothing committed, and nothing left
 * behind. */
static void
fault(const char *job, int mode, const char *spec, const char *call)
{
	struct counts cnt = { 0, 0 };
	uint64_t live = F.count("live");
	spotrun_ctx *ctx;
	spotrun_error rc;
	const char *msg;
	long long step = -1;
	char want[128];
	int saw, restore = mode == 1;

	setenv("FAKE_CUDA_FAIL", spec, 1);
	ctx = new_ctx(job, SR_FAKE_CUDA, &cnt);
	rc = register_all(ctx, 0);
	if (rc == SPOTRUN_OK && !restore) {
		bufs[2].want[0] ^= 1;	/* so that there is something new to save */
		upload();
		if (mode == 0)
			rc = spotrun_save(ctx, 99);
		else if ((rc = spotrun_save_async(ctx, 99)) == SPOTRUN_OK)
			rc = spotrun_wait(ctx);
	} else if (rc == SPOTRUN_OK) {
		rc = spotrun_restore(ctx, &step);
	}
	msg = spotrun_getErrorString(ctx);
	snprintf(want, sizeof want, "%s: CUDA_ERROR_LAUNCH_FAILED (719): unspecified launch "
	    "failure", call);
	saw = strstr(msg, want) != NULL;
	ok(rc == SPOTRUN_ERROR_NO_DEVICE && saw, "%s %s: SPOTRUN_ERROR_NO_DEVICE, naming %s and "
	    "the CUresult: %s", restore ? "restore" : mode == 2 ? "save_async" : "save", spec, call,
	    msg);
	if (!restore)
		ok(strlen(msg) > 19 && strcmp(msg + strlen(msg) - 19, "; nothing committed") == 0,
		    "and nothing committed");
	spotrun_free(ctx);
	unsetenv("FAKE_CUDA_FAIL");
	ok(cnt.allocs == cnt.frees && F.count("live") == live, "no memory (%d allocations, %d "
	    "frees) nor CUDA resource left behind", cnt.allocs, cnt.frees);
	if (!restore) {
		bufs[2].want[0] ^= 1;
		scribble();
		ok(restore_with(job, 0, &step) == SPOTRUN_OK && step == 10 && holds_want(0),
		    "the checkpoint before still restores, bit for bit");
	}
}

/* A build without the kernels makes no call of theirs: a fault injected
 * there does not fire (as many checks as fault's). */
static void
unused_call(const char *spec, const char *call)
{
	uint64_t live = F.count("live");
	long long step = -1;
	spotrun_error rc;

	setenv("FAKE_CUDA_FAIL", spec, 1);
	F.reset();
	rc = save_with("dev/g", 0, 20);
	unsetenv("FAKE_CUDA_FAIL");
	is_int(rc, SPOTRUN_OK, "save %s, a build without nvcc: committed", spec);
	is_int((int)F.count(call), 0, "no %s call: there are no kernels to need one", call);
	is_int((int)F.count("live"), (int)live, "nothing left behind");
	scribble();
	ok(restore_with("dev/g", 0, &step) == SPOTRUN_OK && step == 20 && holds_want(0),
	    "it restores bit for bit");
}

static void
test_faults(void)
{
	static const struct { const char *spec, *call; int kernels; } saves[] = {
		{ "cuMemHostAlloc:1:719", "cuMemHostAlloc", 0 },
		{ "cuMemAlloc:1:719", "cuMemAlloc", 1 },
		{ "cuLaunchKernel:1:719", "cuLaunchKernel", 1 },
		{ "cuLaunchKernel:19:719", "cuLaunchKernel", 1 },
		{ "cuMemcpyDtoH:3:719", "cuMemcpyDtoH", 1 },
		{ "cuStreamSynchronize:1:719", "cuStreamSynchronize", 0 },
		{ "cuMemcpyDtoHAsync:1:719", "cuMemcpyDtoHAsync", 0 },
		{ "cuMemcpyDtoHAsync:3:719", "cuMemcpyDtoHAsync", 0 },
		{ "cuCtxPushCurrent:12:719", "cuCtxPushCurrent", 0 },
	};
	static const struct { const char *spec, *call; } restores[] = {
		{ "cuMemHostAlloc:2:719", "cuMemHostAlloc" },
		{ "cuMemcpyHtoDAsync:2:719", "cuMemcpyHtoDAsync" },
		{ "cuStreamSynchronize:1:719", "cuStreamSynchronize" },
		{ "cuEventSynchronize:2:719", "cuEventSynchronize" },
		{ "cuEventRecord:3:719", "cuEventRecord" },
	};
	size_t i;

	upload();
	is_int(save_with("dev/f", 0, 10), SPOTRUN_OK, "faults: a good checkpoint first");
	for (i = 0; i < SR_ARRAY_LEN(saves); i++) {
		if (saves[i].kernels && !KERNELS) {
			unused_call(saves[i].spec, saves[i].call);
			continue;
		}
		fault("dev/f", 0, saves[i].spec, saves[i].call);
	}
	for (i = 0; i < SR_ARRAY_LEN(restores); i++)
		fault("dev/f", 1, restores[i].spec, restores[i].call);
	/* the async save: the sums on the device, the copies into staging */
	if (KERNELS)
		fault("dev/f", 2, "cuLaunchKernel:1:719", "cuLaunchKernel");
	else
		unused_call("cuLaunchKernel:1:719", "cuLaunchKernel");
	fault("dev/f", 2, "cuMemcpyDtoHAsync:2:719", "cuMemcpyDtoHAsync");
}

/* A registration of "w" (4 f32 at ptr of device dev) with lib: its code,
 * and the message wanted. */
static void
refused(const char *lib, void *ptr, int dev, spotrun_error code, const char *want,
    const char *what)
{
	struct counts cnt = { 0, 0 };
	uint64_t live = F.count("live");
	spotrun_ctx *ctx = new_ctx("dev/x", lib, &cnt);
	uint64_t shape[1] = { 4 };
	spotrun_error rc;

	rc = spotrun_register_device(ctx, "w", SPOTRUN_F32, 1, shape, NULL, NULL, ptr, dev);
	ok(rc == code && strcmp(spotrun_getErrorString(ctx), want) == 0, "%s: %s", what,
	    spotrun_getErrorString(ctx));
	if (strcmp(spotrun_getErrorString(ctx), want) != 0)
		printf("# want: %s\n", want);
	is_int(spotrun_save(ctx, 1), SPOTRUN_ERROR_PARAMETER, "and nothing was registered");
	spotrun_free(ctx);
	ok(cnt.allocs == cnt.frees && F.count("live") == live, "nothing left (%d allocations, "
	    "%d frees; no CUDA resource)", cnt.allocs, cnt.frees);
}

static void
test_refused(void)
{
	const char *hint = "; nothing registered: name the CUDA driver with "
	    "spotrun_set_cuda_library or SPOTRUN_CUDA_LIBRARY, or register host buffers";
	char want[1024], host[16];
	CUdeviceptr small = 0, other = 0;
	void *pinned = NULL, *h;

	snprintf(want, sizeof want, "register \"w\": no CUDA driver (/nonexistent/libcuda.so.1: "
	    "cannot open shared object file: No such file or directory)%s", hint);
	refused("/nonexistent/libcuda.so.1", host, 0, SPOTRUN_ERROR_NO_DEVICE, want,
	    "no driver: SPOTRUN_ERROR_NO_DEVICE, naming the library and dlerror");
	setenv("SPOTRUN_CUDA_LIBRARY", "/nonexistent/env/libcuda.so", 1);
	snprintf(want, sizeof want, "register \"w\": no CUDA driver (/nonexistent/env/libcuda.so: "
	    "cannot open shared object file: No such file or directory)%s", hint);
	refused(NULL, host, 0, SPOTRUN_ERROR_NO_DEVICE, want, "no library set: "
	    "$SPOTRUN_CUDA_LIBRARY");
	unsetenv("SPOTRUN_CUDA_LIBRARY");
	if ((h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(want, sizeof want, "register \"w\": no CUDA driver (libcuda.so.1: cannot "
		    "open shared object file: No such file or directory)%s", hint);
		refused(NULL, host, 0, SPOTRUN_ERROR_NO_DEVICE, want, "neither: libcuda.so.1");
	} else {
		dlclose(h);
		ok(1, "neither: libcuda.so.1 # SKIP this machine has a CUDA driver");
		ok(1, "# SKIP");
		ok(1, "# SKIP");
	}
	{
		/* the first spotrun_register_device chose the library, loaded
		 * or not: the setter comes before it */
		spotrun_ctx *ctx = new_ctx("dev/x", "/nonexistent/libcuda.so.1", NULL);
		uint64_t shape[1] = { 4 };

		spotrun_register_device(ctx, "w", SPOTRUN_F32, 1, shape, NULL, NULL, host, 0);
		is_int(spotrun_set_cuda_library(ctx, SR_FAKE_CUDA), SPOTRUN_ERROR_PARAMETER,
		    "spotrun_set_cuda_library after a spotrun_register_device: refused");
		is_str(spotrun_getErrorString(ctx), "set_cuda_library: spotrun_register_device has "
		    "opened the CUDA driver /nonexistent/libcuda.so.1 already (or tried to): set the "
		    "library before the first device buffer", "saying when to call it");
		spotrun_free(ctx);
	}

	snprintf(want, sizeof want, "register \"w\": %p is not CUDA memory (cuPointerGetAttribute: "
	    "CUDA_ERROR_INVALID_VALUE): a host buffer is registered with spotrun_register",
	    (void *)host);
	refused(SR_FAKE_CUDA, host, 0, SPOTRUN_ERROR_PARAMETER, want, "a host pointer as a device "
	    "pointer: refused, before anything reads it");
	F.host_alloc(&pinned, 64, 0);
	snprintf(want, sizeof want, "register \"w\": %p is CUDA host memory, not device memory: a "
	    "host buffer is registered with spotrun_register", pinned);
	refused(SR_FAKE_CUDA, pinned, 0, SPOTRUN_ERROR_PARAMETER, want, "pinned host memory");
	F.host_free(pinned);
	F.set(ctx1);
	F.alloc(&other, 64);
	F.set(F.ctx0);
	snprintf(want, sizeof want, "register \"w\": %p is memory of CUDA device 1, not of device 0",
	    (void *)(uintptr_t)other);
	refused(SR_FAKE_CUDA, (void *)(uintptr_t)other, 0, SPOTRUN_ERROR_PARAMETER, want,
	    "another device's memory");
	F.set(ctx1);
	F.dfree(other);
	F.set(F.ctx0);
	F.alloc(&small, 12);
	snprintf(want, sizeof want, "register \"w\": the allocation at %p holds 4 bytes from "
	    "there, the slice needs 16", (void *)(uintptr_t)(small + 8));
	refused(SR_FAKE_CUDA, (void *)(uintptr_t)(small + 8), 0, SPOTRUN_ERROR_PARAMETER, want,
	    "an allocation too small for the slice");
	F.dfree(small);
	snprintf(want, sizeof want, "register \"w\": open CUDA device 2: the driver %s sees 2%s",
	    SR_FAKE_CUDA, hint);
	refused(SR_FAKE_CUDA, host, 2, SPOTRUN_ERROR_NO_DEVICE, want, "a device the driver "
	    "does not have");
	{
		static const struct { const char *spec, *what; int kernels; } opens[] = {
			{ "cuInit:1:719", "start the CUDA driver (cuInit)", 0 },
			{ "cuDevicePrimaryCtxRetain:1:719", "cuDevicePrimaryCtxRetain", 0 },
			{ "cuModuleLoadData:2:719", "load the CUDA kernels (cuModuleLoadData)", 1 },
			{ "cuStreamCreate:1:719", "create a CUDA stream: cuStreamCreate", 0 },
		};
		char what[96];
		size_t i;

		for (i = 0; i < SR_ARRAY_LEN(opens); i++) {
			setenv("FAKE_CUDA_FAIL", opens[i].spec, 1);
			snprintf(want, sizeof want, "register \"w\": %s: CUDA_ERROR_LAUNCH_FAILED "
			    "(719): unspecified launch failure%s", opens[i].what, hint);
			snprintf(what, sizeof what, "%s: the driver does not open", opens[i].spec);
			if (opens[i].kernels && !KERNELS) {
				/* no fat binary to load: no such call, and it registers */
				struct counts cnt = { 0, 0 };
				spotrun_ctx *ctx = new_ctx("dev/x", SR_FAKE_CUDA, &cnt);
				uint64_t shape[1] = { 0 };

				F.reset();
				ok(spotrun_register_device(ctx, "w", SPOTRUN_F32, 1, shape, NULL, NULL,
				    NULL, 0) == SPOTRUN_OK && F.count("cuModuleLoadData") == 0,
				    "%s: a build without nvcc loads no module", opens[i].spec);
				is_int(spotrun_save(ctx, 1), SPOTRUN_OK, "and saves its empty buffer");
				spotrun_free(ctx);
				ok(cnt.allocs == cnt.frees, "nothing left");
			} else {
				refused(SR_FAKE_CUDA, host, 0, SPOTRUN_ERROR_NO_DEVICE, want, what);
			}
		}
		unsetenv("FAKE_CUDA_FAIL");
		F.alloc(&small, 64);
		for (i = 0; i < 2; i++) {
			const char *call = i == 0 ? "cuPointerGetAttribute" : "cuMemGetAddressRange";

			snprintf(what, sizeof what, "%s:1:719", call);
			setenv("FAKE_CUDA_FAIL", what, 1);
			snprintf(want, sizeof want, "register \"w\": check device pointer %p: %s: "
			    "CUDA_ERROR_LAUNCH_FAILED (719): unspecified launch failure",
			    (void *)(uintptr_t)small, call);
			snprintf(what, sizeof what, "%s failing: SPOTRUN_ERROR_NO_DEVICE", call);
			refused(SR_FAKE_CUDA, (void *)(uintptr_t)small, 0, SPOTRUN_ERROR_NO_DEVICE,
			    want, what);
		}
		unsetenv("FAKE_CUDA_FAIL");
		F.dfree(small);
	}
	setenv("FAKE_CUDA_DEVICES", "0", 1);
	snprintf(want, sizeof want, "register \"w\": no CUDA device (the driver %s sees none)%s",
	    SR_FAKE_CUDA, hint);
	refused(SR_FAKE_CUDA, host, 0, SPOTRUN_ERROR_NO_DEVICE, want, "no device: "
	    "SPOTRUN_ERROR_NO_DEVICE");
	setenv("FAKE_CUDA_DEVICES", "2", 1);
	is_str(spotrun_getErrorName(SPOTRUN_ERROR_NO_DEVICE), "no usable CUDA device",
	    "SPOTRUN_ERROR_NO_DEVICE's name");
}

int
main(void)
{
	char *dir, *store, *url, err[SR_ERRMAX];
	size_t i;

	no_cloud();
	setvbuf(stdout, NULL, _IOLBF, 0);
	unsetenv("SPOTRUN_CUDA_LIBRARY");
	unsetenv("FAKE_CUDA_FAIL");
	dir = tu_tmpdir("t-lib-device");
	store = tu_path(dir, "store");
	url = sr_asprintf("file://%s", store);
	g_url = url;
	if (sr_store_open(url, &g_st, err) != 0)
		sr_fatal("%s", err);
	fake_open();
	bufs_init();
	tap_diag("%s build: %s", KERNELS ? "an nvcc" : "a no-nvcc", KERNELS ? "chunk sums and "
	    "byte planes on the (fake) device" : "raw copies, sums on the host");
	test_refused();
	test_round_trip();
	test_bad_csum();
	test_reuse();
	test_pack_gone();
	test_async();
	test_pack_gone_async();
	test_restore_bound();
	test_faults();
	for (i = 0; i < NBUF; i++) {
		if (bufs[i].bytes > 0)
			F.dfree(bufs[i].d);
		free(bufs[i].want);
		free(bufs[i].host);
	}
	sr_store_close(g_st);
	tu_rmtree(dir);
	free(url);
	free(store);
	free(dir);
	return tap_done();
}
