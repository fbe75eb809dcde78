/*
 * fake-nccl.c: a stand-in for NCCL (libnccl.so.2) that examples/ctrain's
 * device path loads through --nccl-library (SPOTRUN_NCCL_LIBRARY) on
 * machines without GPUs, next to tests/fake-cuda.c as the CUDA driver.
 * Not a mock of what runs here: there is no NCCL to run without GPUs. A
 * small collective library of its own, across the rank processes:
 *
 * - ncclGetUniqueId names an abstract Unix socket ("fake-nccl-PID-N-R");
 *   ncclCommInitRank has rank 0 listen on it and the others connect, a
 *   star; each rank says its rank and the world. A rank that does not
 *   join within FAKE_NCCL_JOIN_S seconds (default 60) fails the others'
 *   init with ncclSystemError.
 * - The buffers are fake-cuda's device memory: the bytes are reached
 *   through its fake_cuda_host (found among the libraries the process has
 *   loaded), and a host pointer is ncclInvalidArgument, as on a
 *   GPU. A collective first waits for its stream (cuStreamSynchronize of
 *   the same library), then moves the bytes through rank 0 before it
 *   returns: the work queued after it sees them.
 * - ncclBroadcast and ncclAllReduce (int32 and float32; sum, max; rank 0
 *   combines in rank order). ncclGroupStart/End only count: the calls of
 *   a group run in the order given, the same on every rank. Each message
 *   says its call, size and root: ranks that disagree get
 *   ncclInvalidUsage, not a wrong result.
 * - A peer that dies is an end of file: ncclRemoteError, never a hang.
 *   ncclCommAbort shuts the communicator's sockets (a collective blocked
 *   in it on another thread returns ncclInvalidUsage), waits for such
 *   calls to leave, and frees it.
 * - FAKE_NCCL_FAIL="NAME:N[:CODE][@RANK],...": the N-th call of NAME in
 *   the process (with @RANK: rank RANK's N-th, for ranks that are threads
 *   of one process) returns CODE (default 2, ncclSystemError) without
 *   doing anything.
 * - FAKE_NCCL_TRACE=1: a line on stderr for each ncclCommInitRank (the
 *   rank, the world, the unique id), ncclCommAbort and ncclCommDestroy,
 *   for the tests to count.
 *
 * fake_nccl_count(name) (dlsym): calls of a function in this process.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fake-fail.h"
#include "ncclapi.h"

#define FAKE_MAX_FAILS 16
#define FAKE_MAX_RANKS 64	/* counted apart for FAKE_NCCL_FAIL's @RANK */

struct ncclComm {
	int rank, world;
	int *fd;		/* rank 0: fd[r] for r >= 1; others: fd[0] */
	int aborted;
	int busy;		/* calls inside, for ncclCommAbort to wait on */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char id[NCCL_UNIQUE_ID_BYTES];
};

/* What a message says before its bytes. */
struct hdr {
	uint32_t call;		/* 1 broadcast, 2 all-reduce */
	int32_t root;		/* broadcast: its root; all-reduce: type * 16 + op */
	uint64_t bytes;
};

#define FAKE_FNS(X) X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclCommAbort) \
	X(ncclCommDestroy) X(ncclGroupStart) X(ncclGroupEnd) X(ncclBroadcast) X(ncclAllReduce)
#define FAKE_ID(name) FN_##name,
enum { FAKE_FNS(FAKE_ID) FN_COUNT };
#undef FAKE_ID
#define FAKE_ID(name) #name,
static const char *const fn_names[FN_COUNT] = { FAKE_FNS(FAKE_ID) };
#undef FAKE_ID

static struct {
	pthread_mutex_t mu;
	uint64_t calls[FN_COUNT];
	uint64_t rank_calls[FN_COUNT][FAKE_MAX_RANKS];
	unsigned ids;
	int parsed, nfails;
	struct fake_fail fails[FAKE_MAX_FAILS];
} F = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* Count a call of fn on `rank` (-1: none yet), and fail it when
 * FAKE_NCCL_FAIL says so. */
static ncclResult_t
enter(int fn, int rank)
{
	ncclResult_t r = ncclSuccess;
	int i;

	pthread_mutex_lock(&F.mu);
	if (!F.parsed) {
		F.nfails = fake_fail_parse(getenv("FAKE_NCCL_FAIL"), fn_names, FN_COUNT,
		    ncclSystemError, F.fails, FAKE_MAX_FAILS, "fake-nccl: FAKE_NCCL_FAIL");
		F.parsed = 1;
	}
	F.calls[fn]++;
	if (rank >= 0 && rank < FAKE_MAX_RANKS)
		F.rank_calls[fn][rank]++;
	for (i = 0; i < F.nfails; i++)
		if (F.fails[i].fn == fn && (F.fails[i].rank < 0 ? F.fails[i].nth == F.calls[fn] :
		    F.fails[i].rank == rank && F.fails[i].nth == F.rank_calls[fn][rank]))
			r = (ncclResult_t)F.fails[i].code;
	pthread_mutex_unlock(&F.mu);
	return r;
}

static void
trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
trace(const char *fmt, ...)
{
	const char *t = getenv("FAKE_NCCL_TRACE");
	char line[512];
	va_list ap;
	int n;

	if (t == NULL || strcmp(t, "1") != 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof line) {
		/* one write: the ranks' lines do not interleave */
		ssize_t w = write(2, line, (size_t)n);
		(void)w;
	}
}

/* ---- fake-cuda's memory and streams ---- */

/* dl_iterate_phdr's visit: the first loaded library that exports
 * fake_cuda_host. */
static int
find_fake_cuda(struct dl_phdr_info *info, size_t size, void *data)
{
	void *h;

	(void)size;
	if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0' ||
	    (h = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD)) == NULL)
		return 0;
	if (dlsym(h, "fake_cuda_host") == NULL) {
		dlclose(h);
		return 0;
	}
	*(void **)data = h;	/* kept: the library is loaded anyway */
	return 1;
}

/* A function of fake-cuda, wherever the program loaded it from (its
 * --cuda-library, SPOTRUN_CUDA_LIBRARY, libspotrun's params), or NULL. */
static void *
cuda_sym(const char *name)
{
	void *h = NULL;

	dl_iterate_phdr(find_fake_cuda, &h);
	return h != NULL ? dlsym(h, name) : NULL;
}

/* The host bytes of device range [p, p + n) after its stream's work, or
 * NULL: not fake-cuda's device memory. */
static uint8_t *
device_bytes(const void *p, size_t n, cudaStream_t stream)
{
	void *(*host)(unsigned long long, size_t);
	int (*sync)(cudaStream_t);

	*(void **)&host = cuda_sym("fake_cuda_host");
	*(void **)&sync = cuda_sym("cuStreamSynchronize");
	if (host == NULL || sync == NULL || sync(stream) != 0)
		return NULL;
	return host((unsigned long long)(uintptr_t)p, n);
}

/* ---- sockets ---- */

static int
send_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
recv_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n > 0) {
		ssize_t r = recv(fd, p, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static socklen_t
address(const char *id, struct sockaddr_un *sa)
{
	size_t n = strnlen(id, sizeof sa->sun_path - 2);

	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path + 1, id, n);	/* abstract: sun_path[0] is 0 */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* ---- the API ---- */

ncclResult_t
ncclGetUniqueId(ncclUniqueId *id)
{
	ncclResult_t r = enter(FN_ncclGetUniqueId, -1);
	struct timespec ts;
	unsigned n;

	if (r != ncclSuccess)
		return r;
	if (id == NULL)
		return ncclInvalidArgument;
	clock_gettime(CLOCK_REALTIME, &ts);
	pthread_mutex_lock(&F.mu);
	n = ++F.ids;
	pthread_mutex_unlock(&F.mu);
	memset(id, 0, sizeof *id);
	snprintf(id->internal, sizeof id->internal, "fake-nccl-%ld-%u-%lx", (long)getpid(), n,
	    (unsigned long)ts.tv_nsec);
	return ncclSuccess;
}

static void
comm_free(ncclComm_t c)
{
	int i;

	for (i = 0; i < c->world; i++)
		if (c->fd[i] != -1)
			close(c->fd[i]);
	free(c->fd);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c);
}

/* FAKE_NCCL_JOIN_S, in milliseconds. */
static int
join_ms(void)
{
	const char *s = getenv("FAKE_NCCL_JOIN_S");
	int v = s != NULL ? atoi(s) : 60;

	return (v > 0 ? v : 60) * 1000;
}

/* Rank 0: the others, each in its slot. */
static ncclResult_t
accept_ranks(ncclComm_t c, int lfd)
{
	int joined = 0, fd;
	int32_t who[2];

	while (joined < c->world - 1) {
		struct pollfd pfd = { lfd, POLLIN, 0 };
		if (poll(&pfd, 1, join_ms()) <= 0)
			return ncclSystemError;
		if ((fd = accept(lfd, NULL, NULL)) == -1)
			continue;
		if (recv_all(fd, who, sizeof who) == -1 || who[1] != c->world || who[0] < 1 ||
		    who[0] >= c->world || c->fd[who[0]] != -1) {
			close(fd);
			return ncclInvalidUsage;
		}
		c->fd[who[0]] = fd;
		joined++;
	}
	return ncclSuccess;
}

static ncclResult_t
connect_rank0(ncclComm_t c, const struct sockaddr_un *sa, socklen_t len)
{
	int32_t who[2] = { c->rank, c->world };
	int i, fd;

	for (i = 0; i < join_ms() / 20; i++) {
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
			return ncclSystemError;
		if (connect(fd, (const struct sockaddr *)sa, len) == 0) {
			c->fd[0] = fd;
			return send_all(fd, who, sizeof who) == 0 ? ncclSuccess : ncclRemoteError;
		}
		close(fd);
		nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
	}
	return ncclSystemError;
}

ncclResult_t
ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
	ncclResult_t r = enter(FN_ncclCommInitRank, rank);
	struct sockaddr_un sa;
	socklen_t len;
	ncclComm_t c;
	int i, lfd;

	if (r != ncclSuccess)
		return r;
	if (comm == NULL || nranks < 1 || rank < 0 || rank >= nranks || id.internal[0] == '\0')
		return ncclInvalidArgument;
	if ((c = calloc(1, sizeof *c)) == NULL || (c->fd = malloc((size_t)nranks * sizeof *c->fd)) ==
	    NULL) {
		free(c);
		return ncclSystemError;
	}
	c->rank = rank;
	c->world = nranks;
	memcpy(c->id, id.internal, sizeof c->id);
	c->id[sizeof c->id - 1] = '\0';
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	for (i = 0; i < nranks; i++)
		c->fd[i] = -1;
	len = address(c->id, &sa);
	if (nranks > 1 && rank == 0) {
		if ((lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
		    bind(lfd, (struct sockaddr *)&sa, len) == -1 || listen(lfd, 64) == -1) {
			r = ncclSystemError;
		} else {
			r = accept_ranks(c, lfd);
		}
		if (lfd != -1)
			close(lfd);
	} else if (nranks > 1) {
		r = connect_rank0(c, &sa, len);
	}
	if (r != ncclSuccess) {
		comm_free(c);
		return r;
	}
	trace("fake-nccl: rank %d: ncclCommInitRank of %d ranks, id %s\n", rank, nranks, c->id);
	*comm = c;
	return ncclSuccess;
}

/* A call on c: counted in, or ncclInvalidUsage when c is aborted. */
static ncclResult_t
comm_enter(ncclComm_t c)
{
	ncclResult_t r = ncclSuccess;

	pthread_mutex_lock(&c->mu);
	if (c->aborted)
		r = ncclInvalidUsage;
	else
		c->busy++;
	pthread_mutex_unlock(&c->mu);
	return r;
}

/* Leave: r, or ncclInvalidUsage for a failure that the abort caused. */
static ncclResult_t
comm_leave(ncclComm_t c, ncclResult_t r)
{
	pthread_mutex_lock(&c->mu);
	if (r != ncclSuccess && c->aborted)
		r = ncclInvalidUsage;
	c->busy--;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return r;
}

ncclResult_t
ncclCommAbort(ncclComm_t comm)
{
	ncclResult_t r = enter(FN_ncclCommAbort, comm != NULL ? comm->rank : -1);
	int i;

	if (r != ncclSuccess)
		return r;
	if (comm == NULL)
		return ncclSuccess;
	trace("fake-nccl: rank %d: ncclCommAbort, id %s\n", comm->rank, comm->id);
	pthread_mutex_lock(&comm->mu);
	comm->aborted = 1;
	/* unblock a collective in flight on another thread */
	for (i = 0; i < comm->world; i++)
		if (comm->fd[i] != -1)
			shutdown(comm->fd[i], SHUT_RDWR);
	while (comm->busy > 0)
		pthread_cond_wait(&comm->cv, &comm->mu);
	pthread_mutex_unlock(&comm->mu);
	comm_free(comm);
	return ncclSuccess;
}

ncclResult_t
ncclCommDestroy(ncclComm_t comm)
{
	ncclResult_t r = enter(FN_ncclCommDestroy, comm != NULL ? comm->rank : -1);

	if (r != ncclSuccess)
		return r;
	if (comm == NULL)
		return ncclSuccess;
	trace("fake-nccl: rank %d: ncclCommDestroy, id %s\n", comm->rank, comm->id);
	comm_free(comm);
	return ncclSuccess;
}

ncclResult_t
ncclGroupStart(void)
{
	return enter(FN_ncclGroupStart, -1);
}

ncclResult_t
ncclGroupEnd(void)
{
	return enter(FN_ncclGroupEnd, -1);
}

static size_t
type_size(ncclDataType_t t)
{
	return t == ncclInt32 || t == ncclFloat32 ? 4 : 0;
}

/* Send a message (its header, then its bytes) to fd, or receive one into
 * buf after checking that its header is `want`. */
static ncclResult_t
send_msg(int fd, const struct hdr *h, const void *buf)
{
	return send_all(fd, h, sizeof *h) == 0 && send_all(fd, buf, h->bytes) == 0 ? ncclSuccess :
	    ncclRemoteError;
}

static ncclResult_t
recv_msg(int fd, const struct hdr *want, void *buf)
{
	struct hdr h;

	if (recv_all(fd, &h, sizeof h) == -1)
		return ncclRemoteError;
	if (h.call != want->call || h.root != want->root || h.bytes != want->bytes) {
		fprintf(stderr, "fake-nccl: a peer called another collective (call %u root %d, %llu "
		    "bytes) than this rank (call %u root %d, %llu bytes)\n", h.call, (int)h.root,
		    (unsigned long long)h.bytes, want->call, (int)want->root,
		    (unsigned long long)want->bytes);
		return ncclInvalidUsage;
	}
	return recv_all(fd, buf, h.bytes) == 0 ? ncclSuccess : ncclRemoteError;
}

static ncclResult_t
broadcast(const uint8_t *src, uint8_t *dst, size_t bytes, int root, ncclComm_t c)
{
	struct hdr h = { 1, root, bytes };
	ncclResult_t r = ncclSuccess;
	int i;

	if (c->rank == root && src != dst)
		memmove(dst, src, bytes);
	if (c->world == 1)
		return ncclSuccess;
	if (c->rank != 0)
		return c->rank == root ? send_msg(c->fd[0], &h, dst) : recv_msg(c->fd[0], &h, dst);
	if (root != 0 && (r = recv_msg(c->fd[root], &h, dst)) != ncclSuccess)
		return r;
	for (i = 1; i < c->world && r == ncclSuccess; i++)
		if (i != root)
			r = send_msg(c->fd[i], &h, dst);
	return r;
}

ncclResult_t
ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
    int root, ncclComm_t comm, cudaStream_t stream)
{
	ncclResult_t r = enter(FN_ncclBroadcast, comm != NULL ? comm->rank : -1);
	size_t bytes = count * type_size(datatype);
	uint8_t *src = NULL, *dst;

	if (r != ncclSuccess)
		return r;
	if (comm == NULL || type_size(datatype) == 0 || root < 0 || root >= comm->world)
		return ncclInvalidArgument;
	if ((dst = device_bytes(recvbuff, bytes, stream)) == NULL ||
	    (comm->rank == root && (src = device_bytes(sendbuff, bytes, stream)) == NULL))
		return ncclInvalidArgument;
	if ((r = comm_enter(comm)) != ncclSuccess)
		return r;
	return comm_leave(comm, broadcast(src, dst, bytes, root, comm));
}

/* acc op= x, count elements of type t. */
static void
combine(uint8_t *acc, const uint8_t *x, size_t count, ncclDataType_t t, ncclRedOp_t op)
{
	size_t i;

	for (i = 0; i < count; i++) {
		if (t == ncclInt32) {
			int32_t a, b;
			memcpy(&a, acc + 4 * i, 4);
			memcpy(&b, x + 4 * i, 4);
			a = op == ncclMax ? (b > a ? b : a) : (int32_t)((uint32_t)a + (uint32_t)b);
			memcpy(acc + 4 * i, &a, 4);
		} else {
			float a, b;
			memcpy(&a, acc + 4 * i, 4);
			memcpy(&b, x + 4 * i, 4);
			a = op == ncclMax ? (b > a ? b : a) : a + b;
			memcpy(acc + 4 * i, &a, 4);
		}
	}
}

static ncclResult_t
allreduce(const uint8_t *src, uint8_t *dst, size_t count, ncclDataType_t t, ncclRedOp_t op,
    ncclComm_t c)
{
	struct hdr h = { 2, (int32_t)(t * 16 + op), count * 4 };
	ncclResult_t r = ncclSuccess;
	uint8_t *x;
	int i;

	if (src != dst)
		memmove(dst, src, h.bytes);
	if (c->world == 1)
		return ncclSuccess;
	if (c->rank != 0) {
		if ((r = send_msg(c->fd[0], &h, dst)) != ncclSuccess)
			return r;
		return recv_msg(c->fd[0], &h, dst);
	}
	if ((x = malloc(h.bytes + 1)) == NULL)
		return ncclSystemError;
	for (i = 1; i < c->world && r == ncclSuccess; i++)	/* in rank order */
		if ((r = recv_msg(c->fd[i], &h, x)) == ncclSuccess)
			combine(dst, x, count, t, op);
	free(x);
	for (i = 1; i < c->world && r == ncclSuccess; i++)
		r = send_msg(c->fd[i], &h, dst);
	return r;
}

ncclResult_t
ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
    ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	ncclResult_t r = enter(FN_ncclAllReduce, comm != NULL ? comm->rank : -1);
	size_t bytes = count * type_size(datatype);
	uint8_t *src, *dst;

	if (r != ncclSuccess)
		return r;
	if (comm == NULL || type_size(datatype) == 0 || (op != ncclSum && op != ncclMax))
		return ncclInvalidArgument;
	if ((dst = device_bytes(recvbuff, bytes, stream)) == NULL ||
	    (src = device_bytes(sendbuff, bytes, stream)) == NULL)
		return ncclInvalidArgument;
	if ((r = comm_enter(comm)) != ncclSuccess)
		return r;
	return comm_leave(comm, allreduce(src, dst, count, datatype, op, comm));
}

const char *
ncclGetErrorString(ncclResult_t result)
{
	switch ((int)result) {
	case ncclSuccess: return "no error";
	case ncclUnhandledCudaError: return "unhandled cuda error";
	case ncclSystemError: return "unhandled system error";
	case ncclInternalError: return "internal error";
	case ncclInvalidArgument: return "invalid argument";
	case ncclInvalidUsage: return "invalid usage";
	case ncclRemoteError: return "remote process exited or there was a network error";
	case ncclInProgress: return "NCCL operation in progress";
	}
	return "unknown result code";
}

/* ---- for the tests ---- */

uint64_t fake_nccl_count(const char *name);

/* Calls of `name` in this process; UINT64_MAX for another name. */
uint64_t
fake_nccl_count(const char *name)
{
	uint64_t v = UINT64_MAX;
	int fn;

	pthread_mutex_lock(&F.mu);
	for (fn = 0; fn < FN_COUNT; fn++)
		if (strcmp(fn_names[fn], name) == 0)
			v = F.calls[fn];
	pthread_mutex_unlock(&F.mu);
	return v;
}
