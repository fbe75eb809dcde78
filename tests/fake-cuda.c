/*
 * fake-cuda.c: a stand-in for the CUDA driver (libcuda.so.1) that the tests
 * load through SPOTRUN_CUDA_LIBRARY (or params.cuda_library), so that the
 * library's device path (lib/device.c, through kernels/cudadrv.c) runs on
 * machines without a GPU. It is not a mock of what runs here: no GPU runs
 * here. It is a small driver of its own whose "device" is host memory,
 * behaving as the CUDA Driver API reference says where the device path
 * relies on it, and strict where a mistake would go unseen on a real GPU
 * until it corrupted a checkpoint:
 *
 * - Device memory is host memory handed out at addresses a host
 *   dereference cannot reach: the allocation's address plus FAKE_BIAS, a
 *   non-canonical x86-64 address (a host read of it faults). Every copy and
 *   kernel translates and bounds-checks its device ranges.
 * - Each stream runs its work in order on a thread of its own, after a
 *   delay (FAKE_CUDA_DELAY_US, default 2000 per operation), so that a
 *   result read before cuStreamSynchronize or cuEventSynchronize is stale.
 *   The NULL stream runs its work in the caller, after every stream's
 *   (the legacy default stream's order).
 * - cuModuleLoadData takes nvcc's fat binaries (their header: magic,
 *   header size, size) and finds the kernels it knows by name in them;
 *   cuLaunchKernel runs their CPU twins (kernels/byteplane.c, and the chunk
 *   sum's two stages with kernels/chunksum.c's leaf digest). A program's
 *   own kernel NAME (examples/ctrain's), in the image by name, runs as the
 *   program's exported NAME_twin (found with dlsym in the process): int
 *   NAME_twin(const void *args, size_t size, unsigned long long threads,
 *   void *(*dev)(unsigned long long addr, size_t bytes)), given the
 *   launch's argument buffer (cuLaunchKernel's `extra`, which such a
 *   kernel must use), its threads, and the translation of device ranges
 *   (NULL outside device memory); -1 from it is an illegal address, which
 *   the next synchronisation returns.
 * - Calls need a current context where the real driver does (memory,
 *   streams, modules: CUDA_ERROR_INVALID_CONTEXT without one).
 * - The environment, read at cuInit: FAKE_CUDA_DEVICES=N devices (default
 *   1; 0: cuInit says CUDA_ERROR_NO_DEVICE), and FAKE_CUDA_FAIL=
 *   "NAME:N[:CODE],..." fails the N-th call of NAME (an API name such as
 *   cuMemcpyDtoHAsync) after that cuInit with CUresult CODE (default 999,
 *   CUDA_ERROR_UNKNOWN).
 *
 * For another fake that moves device memory (tests/fake-nccl.c):
 * fake_cuda_host(addr, bytes), the host bytes behind a device range.
 *
 * What the tests read (dlsym on the same library): fake_cuda_count(name)
 * gives the calls of an API function since the last fake_cuda_reset, or a
 * counter: "dtoh_bytes" (bytes copied off the device to the host),
 * "htod_bytes", "live" (device allocations, pinned buffers, streams,
 * events, modules and context references not given back), "pageable_async"
 * (async copies to or from memory that is not pinned), "pinned_bytes"
 * (pinned host memory held now) and "pinned_peak" (the most held at once
 * since the reset).
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "byteplane.h"
#include "chunksum.h"
#include "cs-lanes.h"
#include "cudaapi.h"
#include "fake-fail.h"

#define FAKE_BIAS ((uint64_t)1 << 62)
#define FAKE_MAX_DEVICES 8
#define FAKE_MAX_ALLOCS 4096
#define FAKE_MAX_FAILS 16

/* The entry points, for counting and failing. */
#define FAKE_NAME(name, sym, params) FN_##name,
enum { SR_CUDA_FNS(FAKE_NAME) FN_COUNT };
#undef FAKE_NAME
#define FAKE_NAME(name, sym, params) #name,
static const char *const fn_names[FN_COUNT] = { SR_CUDA_FNS(FAKE_NAME) };
#undef FAKE_NAME

/* Kernels the fake knows: byteplane.cu's and chunksum.cu's. */
enum kernel { K_BP_SPLIT, K_BP_JOIN, K_BP_GENERIC, K_CS_LEAVES, K_CS_ROOTS, K_COUNT,
	K_PROGRAM	/* a program's kernel, run as its twin */ };

/* A program kernel's CPU twin (the module comment). */
typedef int (*program_twin)(const void *args, size_t size, unsigned long long threads,
    void *(*dev)(unsigned long long addr, size_t bytes));
static const char *const kernel_names[K_COUNT] = {
	"sr_bp_split", "sr_bp_join", "sr_bp_generic", "sr_cs_leaves", "sr_cs_roots"
};

struct CUctx_st {
	int dev;
	int refs;
};

struct CUmod_st {
	int has[K_COUNT];
	const uint8_t *image;
	size_t size;
	struct CUfunc_st *programs;	/* its program kernels looked up */
};

struct CUfunc_st {
	enum kernel k;
	program_twin twin;		/* K_PROGRAM */
	struct CUfunc_st *next;
};

enum op_kind { OP_COPY, OP_SET, OP_KERNEL, OP_EVENT };

struct op {
	enum op_kind kind;
	uint8_t *dst;
	const uint8_t *src;
	size_t n;
	int value;
	/* kernels: their arguments, translated */
	enum kernel k;
	uint8_t *a, *b;
	size_t n2, n3;
	unsigned w;
	int join;
	struct CUevent_st *ev;
	uint64_t ev_seq;
	/* program kernels: the twin, a copy of the argument buffer, threads */
	program_twin twin;
	void *args;
	unsigned long long threads;
	struct op *next;
};

struct CUstream_st {
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct op *head, *tail;
	int busy, stop;
	struct CUstream_st *next_stream;
};

struct CUevent_st {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t recorded, done;	/* records queued, and run */
};

struct alloc {
	uint8_t *host;
	size_t size;
	int dev;		/* -1: pinned host memory */
};

static struct {
	pthread_mutex_t mu;
	int inited, ndev;
	struct CUctx_st ctx[FAKE_MAX_DEVICES];
	struct alloc allocs[FAKE_MAX_ALLOCS];
	size_t nallocs;
	struct CUstream_st *streams;
	uint64_t calls[FN_COUNT];
	uint64_t since_init[FN_COUNT];
	uint64_t dtoh, htod, live, pageable_async;
	uint64_t pinned, pinned_peak;	/* pinned host bytes now, and at most */
	struct fake_fail fails[FAKE_MAX_FAILS];
	int nfails;
	long delay_us;
	CUresult sticky;	/* a program kernel's illegal address, for the next sync */
} F = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* The current context, per thread as the driver's. Initial-exec: this
 * library is dlopen'ed, and a general-dynamic __thread block would be
 * malloc'ed by __tls_get_addr on a thread's first call and freed only
 * when glibc reuses that thread's cached stack, a trial or more later:
 * 88 bytes that came and went with the scheduling in the OOM tests' leak
 * checks (t-lib-oom). Static TLS is part of the thread's stack. */
#define FAKE_TLS __thread __attribute__((tls_model("initial-exec")))
static FAKE_TLS struct CUctx_st *cur;
static FAKE_TLS struct CUctx_st *stack[8];
static FAKE_TLS int depth;

/* Count a call of fn, and fail it when FAKE_CUDA_FAIL says so. */
static CUresult
enter(int fn)
{
	CUresult r = CUDA_SUCCESS;
	int i;

	pthread_mutex_lock(&F.mu);
	F.calls[fn]++;
	F.since_init[fn]++;
	for (i = 0; i < F.nfails; i++)
		if (F.fails[i].fn == fn && F.fails[i].nth == F.since_init[fn])
			r = (CUresult)F.fails[i].code;
	pthread_mutex_unlock(&F.mu);
	return r;
}

#define ENTER(name) do { \
	CUresult r_ = enter(FN_##name); \
	if (r_ != CUDA_SUCCESS) \
		return r_; \
} while (0)

#define NEED_CTX() do { \
	if (cur == NULL) \
		return CUDA_ERROR_INVALID_CONTEXT; \
} while (0)

/* ---- memory ---- */

/* The host bytes behind device range [d, d + n), or NULL (not allocated on
 * a device, or past the allocation's end). */
static uint8_t *
dev_bytes(CUdeviceptr d, size_t n)
{
	uint8_t *p = NULL;
	uint64_t h;
	size_t i;

	if (d < FAKE_BIAS)
		return NULL;
	h = d - FAKE_BIAS;
	pthread_mutex_lock(&F.mu);
	for (i = 0; i < F.nallocs; i++) {
		struct alloc *a = &F.allocs[i];

		if (a->dev >= 0 && h >= (uintptr_t)a->host && h - (uintptr_t)a->host <= a->size &&
		    n <= a->size - (h - (uintptr_t)a->host)) {
			p = (uint8_t *)(uintptr_t)h;
			break;
		}
	}
	pthread_mutex_unlock(&F.mu);
	return p;
}

/* The allocation holding d (device or pinned), or -1. */
static long
find_alloc(uint64_t d, int device)
{
	uint64_t h = device ? d - FAKE_BIAS : d;
	size_t i;

	if (device && d < FAKE_BIAS)
		return -1;
	for (i = 0; i < F.nallocs; i++) {
		struct alloc *a = &F.allocs[i];

		if ((a->dev >= 0) == device && h >= (uintptr_t)a->host &&
		    h - (uintptr_t)a->host < a->size)
			return (long)i;
	}
	return -1;
}

static int
is_pinned(const void *p, size_t n)
{
	long i;
	int r;

	pthread_mutex_lock(&F.mu);
	i = find_alloc((uintptr_t)p, 0);
	r = i >= 0 && n <= F.allocs[i].size - ((uintptr_t)p - (uintptr_t)F.allocs[i].host);
	pthread_mutex_unlock(&F.mu);
	return r;
}

static CUresult
add_alloc(uint8_t *host, size_t size, int dev)
{
	CUresult r = CUDA_SUCCESS;

	pthread_mutex_lock(&F.mu);
	if (F.nallocs == FAKE_MAX_ALLOCS) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		F.allocs[F.nallocs].host = host;
		F.allocs[F.nallocs].size = size;
		F.allocs[F.nallocs++].dev = dev;
		F.live++;
		if (dev < 0 && (F.pinned += size) > F.pinned_peak)
			F.pinned_peak = F.pinned;
	}
	pthread_mutex_unlock(&F.mu);
	return r;
}

static CUresult
drop_alloc(uint64_t addr, int device)
{
	long i;
	uint8_t *host;

	pthread_mutex_lock(&F.mu);
	i = find_alloc(addr, device);
	if (i < 0 || (uintptr_t)F.allocs[i].host != (device ? addr - FAKE_BIAS : addr)) {
		pthread_mutex_unlock(&F.mu);
		return CUDA_ERROR_INVALID_VALUE;
	}
	host = F.allocs[i].host;
	if (F.allocs[i].dev < 0)
		F.pinned -= F.allocs[i].size;
	F.allocs[i] = F.allocs[--F.nallocs];
	F.live--;
	pthread_mutex_unlock(&F.mu);
	free(host);
	return CUDA_SUCCESS;
}

void *fake_cuda_host(unsigned long long addr, size_t bytes);

/* For fake-nccl: the host bytes behind device range [addr, addr + bytes),
 * or NULL. */
void *
fake_cuda_host(unsigned long long addr, size_t bytes)
{
	return dev_bytes(addr, bytes);
}

/* ---- work: run now (NULL stream) or on a stream's thread ---- */

/* The kernels' CPU twins. */
static void
run_kernel(const struct op *o)
{
	size_t nc, c, i, clen;

	switch (o->k) {
	case K_BP_SPLIT:
		sr_byteplane_split(o->a, o->n, o->w, o->b);
		break;
	case K_BP_JOIN:
		sr_byteplane_join(o->a, o->n, o->w, o->b);
		break;
	case K_BP_GENERIC:
		(o->join ? sr_byteplane_join : sr_byteplane_split)(o->a, o->n, o->w, o->b);
		break;
	case K_CS_LEAVES:	/* a = buf, n, n2 = chunk, n3 = slot, b = scratch */
		nc = cs_chunks(o->n, o->n2);
		for (c = 0; c < nc; c++) {
			clen = o->n - c * o->n2 < o->n2 ? o->n - c * o->n2 : o->n2;
			for (i = 0; i * SR_CS_LEAF < clen; i++)
				sr_chunksum_leaf(o->a + c * o->n2 + i * SR_CS_LEAF, clen - i * SR_CS_LEAF <
				    SR_CS_LEAF ? clen - i * SR_CS_LEAF : SR_CS_LEAF,
				    o->b + c * o->n3 + 16 * i);
			cs_trailer(o->b + c * o->n3, clen);
		}
		break;
	case K_CS_ROOTS:	/* a = scratch, n, n2 = chunk, n3 = slot, b = out */
		nc = cs_chunks(o->n, o->n2);
		for (c = 0; c < nc; c++) {
			clen = o->n - c * o->n2 < o->n2 ? o->n - c * o->n2 : o->n2;
			sr_chunksum_leaf(o->a + c * o->n3, cs_rootlen(clen), o->b + 16 * c);
		}
		break;
	case K_PROGRAM:
		if (o->twin(o->args, o->n, o->threads, fake_cuda_host) == -1) {
			pthread_mutex_lock(&F.mu);
			F.sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
			pthread_mutex_unlock(&F.mu);
		}
		free(o->args);
		break;
	default:
		break;
	}
}

/* The sticky error of a program kernel, returned by a synchronisation
 * (and kept: the context is lost, as the driver's is). */
static CUresult
sticky(void)
{
	CUresult r;

	pthread_mutex_lock(&F.mu);
	r = F.sticky;
	pthread_mutex_unlock(&F.mu);
	return r;
}

static void
run_op(struct op *o)
{
	switch (o->kind) {
	case OP_COPY:
		memmove(o->dst, o->src, o->n);
		break;
	case OP_SET:
		memset(o->dst, o->value, o->n);
		break;
	case OP_KERNEL:
		run_kernel(o);
		break;
	case OP_EVENT:
		pthread_mutex_lock(&o->ev->mu);
		if (o->ev_seq > o->ev->done)
			o->ev->done = o->ev_seq;
		pthread_cond_broadcast(&o->ev->cv);
		pthread_mutex_unlock(&o->ev->mu);
		break;
	}
}

static void
delay(void)
{
	struct timespec ts = { F.delay_us / 1000000, F.delay_us % 1000000 * 1000 };

	if (F.delay_us > 0)
		nanosleep(&ts, NULL);
}

static void *
stream_main(void *arg)
{
	struct CUstream_st *s = arg;
	struct op *o;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (s->head == NULL && !s->stop)
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->head == NULL)
			break;
		o = s->head;
		s->busy = 1;
		pthread_mutex_unlock(&s->mu);
		if (o->kind != OP_EVENT)
			delay();
		run_op(o);
		pthread_mutex_lock(&s->mu);
		s->head = o->next;
		if (s->head == NULL)
			s->tail = NULL;
		s->busy = 0;
		free(o);
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static void
stream_wait(struct CUstream_st *s)
{
	pthread_mutex_lock(&s->mu);
	while (s->head != NULL)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
}

static void
all_streams_wait(void)
{
	struct CUstream_st *s;

	pthread_mutex_lock(&F.mu);
	s = F.streams;
	pthread_mutex_unlock(&F.mu);
	/* streams are only ever added at the head, and destroyed by their
	 * owner, which does not do so while it waits */
	for (; s != NULL; s = s->next_stream)
		stream_wait(s);
}

/* Queue o on stream s, or run it now for the NULL stream. */
static void
submit(CUstream s, struct op *o)
{
	if (s == NULL) {
		all_streams_wait();
		run_op(o);
		free(o);
		return;
	}
	o->next = NULL;
	pthread_mutex_lock(&s->mu);
	if (s->tail != NULL)
		s->tail->next = o;
	else
		s->head = o;
	s->tail = o;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static struct op *
new_op(enum op_kind kind)
{
	struct op *o = calloc(1, sizeof *o);

	if (o == NULL)
		abort();
	o->kind = kind;
	return o;
}

static void
count_bytes(uint64_t *counter, size_t n)
{
	pthread_mutex_lock(&F.mu);
	*counter += n;
	pthread_mutex_unlock(&F.mu);
}

/* ---- the driver API ---- */

CUresult
cuInit(unsigned int flags)
{
	const char *n = getenv("FAKE_CUDA_DEVICES"), *d = getenv("FAKE_CUDA_DELAY_US");

	pthread_mutex_lock(&F.mu);
	memset(F.since_init, 0, sizeof F.since_init);
	F.nfails = fake_fail_parse(getenv("FAKE_CUDA_FAIL"), fn_names, FN_COUNT,
	    CUDA_ERROR_UNKNOWN, F.fails, FAKE_MAX_FAILS, "fake-cuda: FAKE_CUDA_FAIL");
	F.ndev = n != NULL ? atoi(n) : 1;
	if (F.ndev > FAKE_MAX_DEVICES)
		F.ndev = FAKE_MAX_DEVICES;
	F.delay_us = d != NULL ? atol(d) : 2000;
	F.inited = 1;
	pthread_mutex_unlock(&F.mu);
	ENTER(cuInit);
	return F.ndev > 0 ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

CUresult
cuDriverGetVersion(int *version)
{
	ENTER(cuDriverGetVersion);
	*version = 13000;
	return CUDA_SUCCESS;
}

CUresult
cuDeviceGetCount(int *count)
{
	ENTER(cuDeviceGetCount);
	if (!F.inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	*count = F.ndev;
	return CUDA_SUCCESS;
}

CUresult
cuDeviceGet(CUdevice *device, int ordinal)
{
	ENTER(cuDeviceGet);
	if (ordinal < 0 || ordinal >= F.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

CUresult
cuDeviceGetName(char *name, int len, CUdevice dev)
{
	ENTER(cuDeviceGetName);
	snprintf(name, (size_t)len, "fake CUDA device %d", (int)dev);
	return CUDA_SUCCESS;
}

CUresult
cuDeviceGetAttribute(int *value, CUdevice_attribute attrib, CUdevice dev)
{
	ENTER(cuDeviceGetAttribute);
	switch ((int)attrib) {
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 4; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

CUresult
cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
	ENTER(cuDevicePrimaryCtxRetain);
	if (dev < 0 || dev >= F.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&F.mu);
	F.ctx[dev].dev = dev;
	F.ctx[dev].refs++;
	F.live++;
	pthread_mutex_unlock(&F.mu);
	*ctx = &F.ctx[dev];
	return CUDA_SUCCESS;
}

CUresult
cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	ENTER(cuDevicePrimaryCtxRelease);
	if (dev < 0 || dev >= F.ndev || F.ctx[dev].refs == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&F.mu);
	F.ctx[dev].refs--;
	F.live--;
	pthread_mutex_unlock(&F.mu);
	return CUDA_SUCCESS;
}

CUresult
cuCtxSetCurrent(CUcontext ctx)
{
	ENTER(cuCtxSetCurrent);
	cur = ctx;
	return CUDA_SUCCESS;
}

CUresult
cuCtxPushCurrent_v2(CUcontext ctx)
{
	ENTER(cuCtxPushCurrent);
	if (ctx == NULL || depth == (int)(sizeof stack / sizeof stack[0]))
		return CUDA_ERROR_INVALID_VALUE;
	stack[depth++] = cur;
	cur = ctx;
	return CUDA_SUCCESS;
}

CUresult
cuCtxPopCurrent_v2(CUcontext *ctx)
{
	ENTER(cuCtxPopCurrent);
	if (depth == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx != NULL)
		*ctx = cur;
	cur = stack[--depth];
	return CUDA_SUCCESS;
}

CUresult
cuCtxSynchronize(void)
{
	ENTER(cuCtxSynchronize);
	NEED_CTX();
	all_streams_wait();
	return sticky();
}

CUresult
cuModuleLoadData(CUmodule *module, const void *image)
{
	const uint8_t *p = image;
	uint32_t magic;
	uint16_t hsize;
	uint64_t size;
	struct CUmod_st *m;
	int k;

	ENTER(cuModuleLoadData);
	NEED_CTX();
	/* nvcc's fat binary: magic 0xba55ed50, version, header size, then the
	 * size of what follows the header */
	memcpy(&magic, p, 4);
	memcpy(&hsize, p + 6, 2);
	memcpy(&size, p + 8, 8);
	if (magic != 0xba55ed50u || hsize < 16 || size > ((uint64_t)1 << 30))
		return CUDA_ERROR_INVALID_IMAGE;
	if ((m = calloc(1, sizeof *m)) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (k = 0; k < K_COUNT; k++)
		m->has[k] = memmem(p, hsize + size, kernel_names[k], strlen(kernel_names[k]) + 1) !=
		    NULL;
	m->image = p;
	m->size = hsize + size;
	count_bytes(&F.live, 1);
	*module = m;
	return CUDA_SUCCESS;
}

CUresult
cuModuleUnload(CUmodule module)
{
	ENTER(cuModuleUnload);
	while (module->programs != NULL) {
		struct CUfunc_st *f = module->programs;
		module->programs = f->next;
		free(f);
	}
	free(module);
	pthread_mutex_lock(&F.mu);
	F.live--;
	pthread_mutex_unlock(&F.mu);
	return CUDA_SUCCESS;
}

/* A program's kernel `name`: in the image, and its twin in the process. */
static CUresult
program_kernel(CUfunction *fn, CUmodule module, const char *name)
{
	char twin[256];
	struct CUfunc_st *f;
	void *sym;

	if (memmem(module->image, module->size, name, strlen(name) + 1) == NULL ||
	    snprintf(twin, sizeof twin, "%s_twin", name) >= (int)sizeof twin ||
	    (sym = dlsym(RTLD_DEFAULT, twin)) == NULL)
		return CUDA_ERROR_NOT_FOUND;
	if ((f = calloc(1, sizeof *f)) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	f->k = K_PROGRAM;
	*(void **)&f->twin = sym;
	f->next = module->programs;
	module->programs = f;
	*fn = f;
	return CUDA_SUCCESS;
}

/* A program kernel's launch: its argument buffer from `extra` (copied: the
 * caller's may go once the call returns), queued as its twin. */
static CUresult
launch_program(CUfunction fn, unsigned long long threads, CUstream stream, void **params,
    void **extra)
{
	const void *buf = NULL;
	size_t size = 0, i;
	struct op *o;

	if (params != NULL || extra == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; extra[i] != (void *)(uintptr_t)CU_LAUNCH_PARAM_END_AS_INT; i += 2) {
		if (extra[i] == (void *)(uintptr_t)CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT)
			buf = extra[i + 1];
		else if (extra[i] == (void *)(uintptr_t)CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT)
			memcpy(&size, extra[i + 1], sizeof size);
		else
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (buf == NULL || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	o = new_op(OP_KERNEL);
	o->k = K_PROGRAM;
	o->twin = fn->twin;
	o->n = size;
	o->threads = threads;
	if ((o->args = malloc(size)) == NULL) {
		free(o);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	memcpy(o->args, buf, size);
	submit(stream, o);
	return CUDA_SUCCESS;
}

static struct CUfunc_st kernel_fns[K_COUNT] = {
	{ .k = K_BP_SPLIT }, { .k = K_BP_JOIN }, { .k = K_BP_GENERIC }, { .k = K_CS_LEAVES },
	{ .k = K_CS_ROOTS }
};

CUresult
cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name)
{
	int k;

	ENTER(cuModuleGetFunction);
	for (k = 0; k < K_COUNT; k++)
		if (module->has[k] && strcmp(name, kernel_names[k]) == 0) {
			*fn = &kernel_fns[k];
			return CUDA_SUCCESS;
		}
	return program_kernel(fn, module, name);
}

CUresult
cuLaunchKernel(CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz,
    unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared_bytes,
    CUstream stream, void **params, void **extra)
{
	struct op *o;
	CUdeviceptr a, b;
	size_t nc;

	ENTER(cuLaunchKernel);
	NEED_CTX();
	if (fn == NULL || gx == 0 || bx == 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (fn->k == K_PROGRAM)
		return launch_program(fn, (unsigned long long)gx * gy * gz * bx * by * bz, stream,
		    params, extra);
	if (params == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	o = new_op(OP_KERNEL);
	o->k = fn->k;
	memcpy(&a, params[0], sizeof a);
	memcpy(&o->n, params[1], sizeof o->n);
	if (fn->k <= K_BP_GENERIC) {	/* (src, n, w, dst[, join]) */
		memcpy(&o->w, params[2], sizeof o->w);
		memcpy(&b, params[3], sizeof b);
		if (fn->k == K_BP_GENERIC)
			memcpy(&o->join, params[4], sizeof o->join);
		o->a = dev_bytes(a, o->n);
		o->b = dev_bytes(b, o->n);
	} else {			/* (in, n, chunk, slot, out) */
		memcpy(&o->n2, params[2], sizeof o->n2);
		memcpy(&o->n3, params[3], sizeof o->n3);
		memcpy(&b, params[4], sizeof b);
		nc = o->n2 == 0 ? 0 : cs_chunks(o->n, o->n2);
		o->a = dev_bytes(a, fn->k == K_CS_LEAVES ? o->n : nc * o->n3);
		o->b = dev_bytes(b, fn->k == K_CS_LEAVES ? nc * o->n3 : 16 * nc);
		if (o->n2 == 0 || o->n3 < cs_rootlen(o->n2 < o->n ? o->n2 : o->n))
			o->a = NULL;
	}
	if (o->a == NULL || o->b == NULL) {
		free(o);
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	}
	submit(stream, o);
	return CUDA_SUCCESS;
}

CUresult
cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
	uint8_t *p;
	CUresult r;

	ENTER(cuMemAlloc);
	NEED_CTX();
	if (bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	if ((p = aligned_alloc(256, (bytes + 255) & ~(size_t)255)) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(p, 0xcd, bytes);		/* device memory starts as garbage */
	if ((r = add_alloc(p, bytes, cur->dev)) != CUDA_SUCCESS) {
		free(p);
		return r;
	}
	*dptr = (uintptr_t)p + FAKE_BIAS;
	return CUDA_SUCCESS;
}

CUresult
cuMemFree_v2(CUdeviceptr dptr)
{
	ENTER(cuMemFree);
	NEED_CTX();
	all_streams_wait();
	return drop_alloc(dptr, 1);
}

CUresult
cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr dptr)
{
	long i;

	ENTER(cuMemGetAddressRange);
	NEED_CTX();
	pthread_mutex_lock(&F.mu);
	i = find_alloc(dptr, 1);
	if (i >= 0) {
		if (base != NULL)
			*base = (uintptr_t)F.allocs[i].host + FAKE_BIAS;
		if (size != NULL)
			*size = F.allocs[i].size;
	}
	pthread_mutex_unlock(&F.mu);
	return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult
cuMemHostAlloc(void **p, size_t bytes, unsigned int flags)
{
	uint8_t *h;
	CUresult r;

	ENTER(cuMemHostAlloc);
	NEED_CTX();
	if (bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	if ((h = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095)) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if ((r = add_alloc(h, bytes, -1)) != CUDA_SUCCESS) {
		free(h);
		return r;
	}
	*p = h;
	return CUDA_SUCCESS;
}

CUresult
cuMemFreeHost(void *p)
{
	ENTER(cuMemFreeHost);
	all_streams_wait();
	return drop_alloc((uintptr_t)p, 0);
}

CUresult
cuPointerGetAttribute(void *data, CUpointer_attribute attrib, CUdeviceptr ptr)
{
	long i;
	int dev = 0, device = 1;

	ENTER(cuPointerGetAttribute);
	NEED_CTX();
	pthread_mutex_lock(&F.mu);
	if ((i = find_alloc(ptr, 1)) < 0) {
		device = 0;
		i = find_alloc(ptr, 0);
	}
	if (i >= 0)
		dev = device ? F.allocs[i].dev : cur->dev;
	pthread_mutex_unlock(&F.mu);
	if (i < 0)
		return CUDA_ERROR_INVALID_VALUE;	/* not CUDA's memory */
	switch ((int)attrib) {
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = dev;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

/* A copy between the host and device ranges given (either may be a
 * device address): queued on s, or run now. */
static CUresult
copy(uint8_t *dst, const uint8_t *src, size_t n, CUstream s)
{
	struct op *o;

	if (dst == NULL || src == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	o = new_op(OP_COPY);
	o->dst = dst;
	o->src = src;
	o->n = n;
	submit(s, o);
	return CUDA_SUCCESS;
}

CUresult
cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
{
	ENTER(cuMemcpyHtoD);
	NEED_CTX();
	count_bytes(&F.htod, bytes);
	return copy(dev_bytes(dst, bytes), src, bytes, NULL);
}

CUresult
cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
	ENTER(cuMemcpyDtoH);
	NEED_CTX();
	count_bytes(&F.dtoh, bytes);
	return copy(dst, dev_bytes(src, bytes), bytes, NULL);
}

CUresult
cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
	ENTER(cuMemcpyDtoD);
	NEED_CTX();
	return copy(dev_bytes(dst, bytes), dev_bytes(src, bytes), bytes, NULL);
}

CUresult
cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream)
{
	ENTER(cuMemcpyHtoDAsync);
	NEED_CTX();
	count_bytes(&F.htod, bytes);
	if (!is_pinned(src, bytes))
		count_bytes(&F.pageable_async, 1);
	return copy(dev_bytes(dst, bytes), src, bytes, stream);
}

CUresult
cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
	ENTER(cuMemcpyDtoHAsync);
	NEED_CTX();
	count_bytes(&F.dtoh, bytes);
	if (!is_pinned(dst, bytes))
		count_bytes(&F.pageable_async, 1);
	return copy(dst, dev_bytes(src, bytes), bytes, stream);
}

CUresult
cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
	ENTER(cuMemcpyDtoDAsync);
	NEED_CTX();
	return copy(dev_bytes(dst, bytes), dev_bytes(src, bytes), bytes, stream);
}

CUresult
cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n)
{
	struct op *o;
	uint8_t *p;

	ENTER(cuMemsetD8);
	NEED_CTX();
	if ((p = dev_bytes(dst, n)) == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	o = new_op(OP_SET);
	o->dst = p;
	o->n = n;
	o->value = value;
	submit(NULL, o);
	return CUDA_SUCCESS;
}

CUresult
cuStreamCreate(CUstream *stream, unsigned int flags)
{
	struct CUstream_st *s;

	ENTER(cuStreamCreate);
	NEED_CTX();
	if ((s = calloc(1, sizeof *s)) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	if (pthread_create(&s->tid, NULL, stream_main, s) != 0) {
		free(s);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_lock(&F.mu);
	s->next_stream = F.streams;
	F.streams = s;
	F.live++;
	pthread_mutex_unlock(&F.mu);
	*stream = s;
	return CUDA_SUCCESS;
}

CUresult
cuStreamDestroy_v2(CUstream stream)
{
	struct CUstream_st **pp;

	ENTER(cuStreamDestroy);
	if (stream == NULL)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&F.mu);
	for (pp = &F.streams; *pp != NULL && *pp != stream; pp = &(*pp)->next_stream)
		;
	if (*pp == NULL) {
		pthread_mutex_unlock(&F.mu);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	*pp = stream->next_stream;
	F.live--;
	pthread_mutex_unlock(&F.mu);
	/* the work queued runs to its end first, as the driver's does */
	pthread_mutex_lock(&stream->mu);
	stream->stop = 1;
	pthread_cond_broadcast(&stream->cv);
	pthread_mutex_unlock(&stream->mu);
	pthread_join(stream->tid, NULL);
	pthread_mutex_destroy(&stream->mu);
	pthread_cond_destroy(&stream->cv);
	free(stream);
	return CUDA_SUCCESS;
}

CUresult
cuStreamSynchronize(CUstream stream)
{
	ENTER(cuStreamSynchronize);
	NEED_CTX();
	if (stream == NULL)
		all_streams_wait();
	else
		stream_wait(stream);
	return sticky();
}

CUresult
cuEventCreate(CUevent *event, unsigned int flags)
{
	struct CUevent_st *e;

	ENTER(cuEventCreate);
	NEED_CTX();
	if ((e = calloc(1, sizeof *e)) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	count_bytes(&F.live, 1);
	*event = e;
	return CUDA_SUCCESS;
}

CUresult
cuEventRecord(CUevent event, CUstream stream)
{
	struct op *o;

	ENTER(cuEventRecord);
	NEED_CTX();
	o = new_op(OP_EVENT);
	o->ev = event;
	pthread_mutex_lock(&event->mu);
	o->ev_seq = ++event->recorded;
	pthread_mutex_unlock(&event->mu);
	submit(stream, o);
	return CUDA_SUCCESS;
}

CUresult
cuEventSynchronize(CUevent event)
{
	ENTER(cuEventSynchronize);
	pthread_mutex_lock(&event->mu);
	while (event->done < event->recorded)
		pthread_cond_wait(&event->cv, &event->mu);
	pthread_mutex_unlock(&event->mu);
	return CUDA_SUCCESS;
}

CUresult
cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
	ENTER(cuEventElapsedTime);
	*ms = 0;
	return CUDA_SUCCESS;
}

CUresult
cuEventDestroy_v2(CUevent event)
{
	ENTER(cuEventDestroy);
	cuEventSynchronize(event);
	pthread_mutex_destroy(&event->mu);
	pthread_cond_destroy(&event->cv);
	free(event);
	pthread_mutex_lock(&F.mu);
	F.live--;
	pthread_mutex_unlock(&F.mu);
	return CUDA_SUCCESS;
}

/* The names and texts of the codes the fake returns. */
static const struct { int code; const char *name, *text; } errors[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
	{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
	    "an illegal memory access was encountered" },
	{ CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure" },
	{ CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static int
error_index(CUresult error)
{
	size_t i;

	for (i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == (int)error)
			return (int)i;
	return -1;
}

CUresult
cuGetErrorName(CUresult error, const char **name)
{
	int i = error_index(error);

	enter(FN_cuGetErrorName);
	*name = i >= 0 ? errors[i].name : NULL;
	return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult
cuGetErrorString(CUresult error, const char **text)
{
	int i = error_index(error);

	enter(FN_cuGetErrorString);
	*text = i >= 0 ? errors[i].text : NULL;
	return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- for the tests ---- */

uint64_t fake_cuda_count(const char *what);
void fake_cuda_reset(void);

/* Calls of API function `what` since the last reset, or a counter
 * (dtoh_bytes, htod_bytes, live, pageable_async, pinned_bytes,
 * pinned_peak); UINT64_MAX for a name
 * that is neither. */
uint64_t
fake_cuda_count(const char *what)
{
	uint64_t v = UINT64_MAX;
	int fn;

	pthread_mutex_lock(&F.mu);
	if (strcmp(what, "dtoh_bytes") == 0)
		v = F.dtoh;
	else if (strcmp(what, "htod_bytes") == 0)
		v = F.htod;
	else if (strcmp(what, "live") == 0)
		v = F.live;
	else if (strcmp(what, "pageable_async") == 0)
		v = F.pageable_async;
	else if (strcmp(what, "pinned_bytes") == 0)
		v = F.pinned;
	else if (strcmp(what, "pinned_peak") == 0)
		v = F.pinned_peak;
	for (fn = 0; fn < FN_COUNT; fn++)
		if (strcmp(fn_names[fn], what) == 0)
			v = F.calls[fn];
	pthread_mutex_unlock(&F.mu);
	return v;
}

/* Zero the call and byte counters ("live" is a state, not a count). */
void
fake_cuda_reset(void)
{
	pthread_mutex_lock(&F.mu);
	memset(F.calls, 0, sizeof F.calls);
	F.dtoh = F.htod = F.pageable_async = 0;
	F.pinned_peak = F.pinned;
	pthread_mutex_unlock(&F.mu);
}
