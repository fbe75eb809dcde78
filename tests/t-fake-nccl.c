/*
 * t-fake-nccl.c: tests/fake-nccl.c, the NCCL that examples/ctrain's device
 * path runs against here, with fake-cuda's device memory: two ranks as two
 * threads of this process (each with the fake device's context current).
 * A broadcast and an all-reduce move the device bytes; ranks that call
 * different collectives get ncclInvalidUsage, a host pointer
 * ncclInvalidArgument; FAKE_NCCL_FAIL fails the call it names on the rank
 * it names; ncclCommAbort on one thread unblocks that rank's collective in
 * flight on another (it returns ncclInvalidUsage), and the peer's next
 * collective ends with ncclRemoteError, not a hang.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cudaapi.h"
#include "ncclapi.h"
#include "tap.h"

/* The two libraries' functions, by dlsym. */
static struct {
	CUresult (*cuInit)(unsigned);
	CUresult (*retain)(CUcontext *, CUdevice);
	CUresult (*set)(CUcontext);
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*htod)(CUdeviceptr, const void *, size_t);
	CUresult (*dtoh)(void *, CUdeviceptr, size_t);
	CUcontext ctx;
#define T_NCCL_FIELD(name, params) __typeof__(name) *name;
	CT_NCCL_FNS(T_NCCL_FIELD)
#undef T_NCCL_FIELD
	uint64_t (*count)(const char *);
} L;

/* One rank's thread: what it does, and what came back. */
struct rank {
	int rank;
	ncclUniqueId id;
	ncclComm_t comm;
	CUdeviceptr buf;
	int what;		/* 0 init, 1 broadcast root 0 of n floats, 2 all-reduce max,
				 * 3 broadcast root 1 (rank 1 never sends) */
	size_t n;
	ncclResult_t r;
	double seconds;
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *
rank_main(void *arg)
{
	struct rank *k = arg;
	double t0 = now();

	L.set(L.ctx);
	switch (k->what) {
	case 0:
		k->r = L.ncclCommInitRank(&k->comm, 2, k->id, k->rank);
		break;
	case 1:
		k->r = L.ncclBroadcast((void *)(uintptr_t)k->buf, (void *)(uintptr_t)k->buf, k->n,
		    ncclFloat32, 0, k->comm, NULL);
		break;
	case 2:
		k->r = L.ncclAllReduce((void *)(uintptr_t)k->buf, (void *)(uintptr_t)k->buf, 1,
		    ncclInt32, ncclMax, k->comm, NULL);
		break;
	case 3:
		k->r = L.ncclBroadcast((void *)(uintptr_t)k->buf, (void *)(uintptr_t)k->buf, k->n,
		    ncclFloat32, 1, k->comm, NULL);
		break;
	}
	k->seconds = now() - t0;
	return NULL;
}

/* Both ranks do `what` (rank 1 with n1 floats), each on its thread. */
static void
both(struct rank *k, int what, size_t n0, size_t n1)
{
	pthread_t t[2];
	int i;

	k[0].what = k[1].what = what;
	k[0].n = n0;
	k[1].n = n1;
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, rank_main, &k[i]);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

static int
load(void)
{
	void *cu = dlopen(SR_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL), *nc;

	if (cu == NULL || (nc = dlopen(SR_FAKE_NCCL, RTLD_NOW | RTLD_LOCAL)) == NULL)
		return -1;
	*(void **)&L.cuInit = dlsym(cu, "cuInit");
	*(void **)&L.retain = dlsym(cu, "cuDevicePrimaryCtxRetain");
	*(void **)&L.set = dlsym(cu, "cuCtxSetCurrent");
	*(void **)&L.alloc = dlsym(cu, "cuMemAlloc_v2");
	*(void **)&L.htod = dlsym(cu, "cuMemcpyHtoD_v2");
	*(void **)&L.dtoh = dlsym(cu, "cuMemcpyDtoH_v2");
#define T_NCCL_TAKE(name, params) *(void **)&L.name = dlsym(nc, #name);
	CT_NCCL_FNS(T_NCCL_TAKE)
#undef T_NCCL_TAKE
	*(void **)&L.count = dlsym(nc, "fake_nccl_count");
	return L.cuInit == NULL || L.count == NULL || L.ncclAllReduce == NULL ? -1 : 0;
}

int
main(void)
{
	struct rank k[2];
	float x[64], y[64];
	int32_t v;
	ncclUniqueId id;
	int i, host = 0;
	double t0;

	setenv("FAKE_CUDA_DELAY_US", "0", 1);
	/* the second all-reduce of the process fails on rank 1 */
	setenv("FAKE_NCCL_FAIL", "ncclAllReduce:2@1", 1);
	unsetenv("FAKE_NCCL_TRACE");
	if (load() == -1)
		tap_skip_all("fake-cuda or fake-nccl did not load");
	tap_plan(12);
	L.cuInit(0);
	L.retain(&L.ctx, 0);
	L.set(L.ctx);
	memset(k, 0, sizeof k);
	ok(L.ncclGetUniqueId(&id) == ncclSuccess && strncmp(id.internal, "fake-nccl-", 10) == 0,
	    "ncclGetUniqueId names a socket (%.40s)", id.internal);
	for (i = 0; i < 2; i++) {
		k[i].rank = i;
		k[i].id = id;
		L.alloc(&k[i].buf, sizeof x);
	}
	both(k, 0, 0, 0);
	ok(k[0].r == ncclSuccess && k[1].r == ncclSuccess, "2 ranks init one communicator");

	for (i = 0; i < 64; i++)
		x[i] = (float)i * 0.25f;
	L.htod(k[0].buf, x, sizeof x);
	memset(y, 0, sizeof y);
	L.htod(k[1].buf, y, sizeof y);
	both(k, 1, 64, 64);
	L.dtoh(y, k[1].buf, sizeof y);
	ok(k[0].r == ncclSuccess && k[1].r == ncclSuccess && memcmp(x, y, sizeof x) == 0,
	    "ncclBroadcast from rank 0: rank 1's device memory holds its bytes");

	v = 3;
	L.htod(k[0].buf, &v, sizeof v);
	v = 7;
	L.htod(k[1].buf, &v, sizeof v);
	both(k, 2, 0, 0);
	L.dtoh(&v, k[0].buf, sizeof v);
	ok(k[0].r == ncclSuccess && k[1].r == ncclSuccess && v == 7,
	    "ncclAllReduce max of 3 and 7: 7 on rank 0 (%d)", (int)v);

	{
		/* rank 1's fails; it then goes as a failing process would (its
		 * sockets closed), which is rank 0's end of file */
		pthread_t t;
		k[0].what = k[1].what = 2;
		pthread_create(&t, NULL, rank_main, &k[0]);
		rank_main(&k[1]);
		if (k[1].r == ncclSystemError)
			L.ncclCommAbort(k[1].comm);
		pthread_join(t, NULL);
		ok(k[1].r == ncclSystemError && k[0].r == ncclRemoteError,
		    "FAKE_NCCL_FAIL=ncclAllReduce:2@1: rank 1's fails with ncclSystemError (%d); rank "
		    "0's, its peer gone, with ncclRemoteError (%d)", (int)k[1].r, (int)k[0].r);
		if (k[1].r != ncclSystemError)
			L.ncclCommAbort(k[1].comm);
	}
	/* that communicator is broken: a new one */
	L.ncclCommAbort(k[0].comm);
	L.ncclGetUniqueId(&id);
	k[0].id = k[1].id = id;
	both(k, 0, 0, 0);
	ok(k[0].r == ncclSuccess && k[1].r == ncclSuccess, "a new communicator of a fresh id");

	both(k, 1, 64, 32);
	ok(k[0].r == ncclSuccess && k[1].r == ncclInvalidUsage,
	    "ranks that broadcast different sizes: the receiver's ncclInvalidUsage (%d), not a wrong "
	    "result (the root only sends)", (int)k[1].r);
	L.ncclCommAbort(k[0].comm);
	L.ncclCommAbort(k[1].comm);
	L.ncclGetUniqueId(&id);
	k[0].id = k[1].id = id;
	both(k, 0, 0, 0);

	ok(L.ncclBroadcast(&host, &host, 1, ncclInt32, 0, k[0].comm, NULL) == ncclInvalidArgument,
	    "a host pointer: ncclInvalidArgument");

	/* rank 0 waits for rank 1's broadcast, which never comes */
	{
		pthread_t t;
		uint64_t aborts = L.count("ncclCommAbort");
		k[0].what = 3;
		k[0].n = 16;
		pthread_create(&t, NULL, rank_main, &k[0]);
		usleep(300 * 1000);
		t0 = now();
		ok(L.ncclCommAbort(k[0].comm) == ncclSuccess && L.count("ncclCommAbort") == aborts + 1,
		    "ncclCommAbort on another thread while the collective waits: ncclSuccess");
		pthread_join(t, NULL);
		ok(k[0].r == ncclInvalidUsage && now() - t0 < 2.0,
		    "the collective in flight returns ncclInvalidUsage (%d) at once (%.3f s after the "
		    "abort)", (int)k[0].r, now() - t0);
		ok(k[0].seconds >= 0.25, "it was in flight until then (%.3f s)", k[0].seconds);
	}
	k[1].what = 1;
	k[1].n = 16;
	t0 = now();
	rank_main(&k[1]);
	ok(k[1].r == ncclRemoteError && now() - t0 < 2.0,
	    "rank 1's next collective, its peer's communicator aborted: ncclRemoteError (%d), no "
	    "hang", (int)k[1].r);
	L.ncclCommDestroy(k[1].comm);
	return tap_done();
}
