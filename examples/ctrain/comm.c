/*
 * comm.c: NCCL by dlopen (comm.h): its functions by name, the unique id
 * over ctrain's TCP group, the communicator's life, and the two
 * collectives ctrain needs.
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "ncclapi.h"

#ifdef CT_NCCL_H
/* ncclapi.h's fallback agrees with nccl.h. */
#define CT_NCCL_SAME(name, value) _Static_assert(name == value, #name " is not " #value);
CT_NCCL_CONSTS(CT_NCCL_SAME)
#undef CT_NCCL_SAME
_Static_assert(sizeof(ncclUniqueId) == 128 && sizeof(ncclResult_t) == sizeof(int) &&
    sizeof(ncclDataType_t) == sizeof(int) && sizeof(ncclRedOp_t) == sizeof(int),
    "ncclapi.h's fallback types are nccl.h's sizes");
_Static_assert(__builtin_types_compatible_p(cudaStream_t, struct CUstream_st *),
    "cudaStream_t is the driver's CUstream");
#endif

#define CT_NCCL_FIELD(name, params) __typeof__(name) *name;
struct ct_nccl {
	CT_NCCL_FNS(CT_NCCL_FIELD)
	__typeof__(ncclGetErrorString) *ncclGetErrorString;
};
#undef CT_NCCL_FIELD

struct ct_comm {
	void *lib;
	struct ct_nccl api;
	ncclComm_t comm;
	int rank, world;
};

/* "CALL (WHAT): text (number)" for a failed NCCL call. */
static int
nccl_check(const struct ct_comm *c, ncclResult_t r, const char *call, const char *what,
    char *err)
{
	if (r == ncclSuccess)
		return 0;
	snprintf(err, CT_ERRMAX, "%s (%s): %s (%d)", call, what, c->api.ncclGetErrorString(r),
	    (int)r);
	return -1;
}

struct ct_comm *
ct_comm_open(const char *lib, char *err)
{
	struct ct_comm *c = calloc(1, sizeof *c);

	if (c == NULL) {
		snprintf(err, CT_ERRMAX, "load NCCL: out of memory");
		return NULL;
	}
	if (lib == NULL)
		lib = "libnccl.so.2";
	if ((c->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(err, CT_ERRMAX, "no NCCL (%s): --nccl-library or SPOTRUN_NCCL_LIBRARY names "
		    "it", dlerror());
		free(c);
		return NULL;
	}
#define CT_NCCL_TAKE(name, params) \
	if ((*(void **)&c->api.name = dlsym(c->lib, #name)) == NULL) { \
		snprintf(err, CT_ERRMAX, "load NCCL %s: no %s (NCCL 2.4 or later is needed)", lib, \
		    #name); \
		ct_comm_close(c); \
		return NULL; \
	}
	CT_NCCL_FNS(CT_NCCL_TAKE)
	CT_NCCL_TAKE(ncclGetErrorString, ())
#undef CT_NCCL_TAKE
	return c;
}

void
ct_comm_close(struct ct_comm *c)
{
	if (c == NULL)
		return;
	if (c->comm != NULL && c->api.ncclCommDestroy != NULL)
		c->api.ncclCommDestroy(c->comm);
	if (c->lib != NULL)
		dlclose(c->lib);
	free(c);
}

int
ct_comm_init(struct ct_comm *c, struct ct_group *g, char *err)
{
	ncclUniqueId id;

	memset(&id, 0, sizeof id);
	if (g->rank == 0 && nccl_check(c, c->api.ncclGetUniqueId(&id), "ncclGetUniqueId",
	    "a new communicator", err) == -1)
		return -1;
	if (ct_group_bcast(g, &id, sizeof id, err) == -1)
		return -1;
	c->rank = g->rank;
	c->world = g->world;
	if (nccl_check(c, c->api.ncclCommInitRank(&c->comm, g->world, id, g->rank),
	    "ncclCommInitRank", "a new communicator", err) == -1) {
		c->comm = NULL;
		return -1;
	}
	return 0;
}

int
ct_comm_abort(struct ct_comm *c, char *err)
{
	ncclComm_t comm = c->comm;

	if (comm == NULL)
		return 0;
	c->comm = NULL;
	return nccl_check(c, c->api.ncclCommAbort(comm), "ncclCommAbort", "before a checkpoint", err);
}

int
ct_comm_live(const struct ct_comm *c)
{
	return c->comm != NULL;
}

int
ct_comm_allgatherv(struct ct_comm *c, uint64_t buf, size_t n, size_t unit, void *stream,
    const char *what, char *err)
{
	size_t lo, hi;
	int r;

	if (nccl_check(c, c->api.ncclGroupStart(), "ncclGroupStart", what, err) == -1)
		return -1;
	for (r = 0; r < c->world; r++) {
		void *p;
		ct_group_slice(n, c->world, r, &lo, &hi);
		p = (void *)(uintptr_t)(buf + lo * unit * sizeof(float));
		if (nccl_check(c, c->api.ncclBroadcast(p, p, (hi - lo) * unit, ncclFloat32, r, c->comm,
		    stream), "ncclBroadcast", what, err) == -1) {
			c->api.ncclGroupEnd();
			return -1;
		}
	}
	return nccl_check(c, c->api.ncclGroupEnd(), "ncclGroupEnd", what, err);
}

int
ct_comm_max(struct ct_comm *c, uint64_t dptr, void *stream, const char *what, char *err)
{
	void *p = (void *)(uintptr_t)dptr;

	return nccl_check(c, c->api.ncclAllReduce(p, p, 1, ncclInt32, ncclMax, c->comm, stream),
	    "ncclAllReduce", what, err);
}
