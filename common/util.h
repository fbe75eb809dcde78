/*
 * util.h: small helpers every module of spotrun uses: the error buffer
 * convention, allocation that dies only on out-of-memory, time, and paths.
 *
 * Error convention: a function that can fail returns 0 on success and -1 (or a
 * negative code of its module's enum) on failure, and writes a message of the
 * form "verb object: reason" into the caller's buffer `err`, which holds
 * SR_ERRMAX bytes. `err` may be NULL when the caller does not want the text.
 */
#ifndef SR_UTIL_H
#define SR_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "compat.h"

#define SR_ERRMAX 512

#define SR_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define SR_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define SR_NORETURN __attribute__((noreturn))
#else
#define SR_PRINTF(f, a)
#define SR_NORETURN
#endif

/* Write a formatted message into err (SR_ERRMAX bytes); always returns -1. */
int sr_err(char *err, const char *fmt, ...) SR_PRINTF(2, 3);
/* Like sr_err, with ": strerror(errno)" appended. */
int sr_errno(char *err, const char *fmt, ...) SR_PRINTF(2, 3);
/* Prefix the message already in err with "prefix: "; returns -1. */
int sr_err_prefix(char *err, const char *fmt, ...) SR_PRINTF(2, 3);

/* For bugs and out-of-memory only: print "spotrun: fatal: ..." and abort. */
void sr_fatal(const char *fmt, ...) SR_PRINTF(1, 2) SR_NORETURN;

/*
 * Allocation that may fail, for the code the job-side library runs (it must
 * never abort, not even on out-of-memory): NULL on failure, with err (when
 * not NULL) set to "allocate N bytes: out of memory". A zero size allocates
 * one byte, so that NULL always means failure. sr_try_reallocarray leaves p
 * as it was when it fails (still the caller's), and fails on n * size
 * overflowing. The string functions allocate through sr_try_malloc, so that
 * every allocation of spotrun's own code is made in spotrun's code.
 */
void *sr_try_malloc(size_t n, char *err);
void *sr_try_calloc(size_t n, size_t size, char *err);
void *sr_try_reallocarray(void *p, size_t n, size_t size, char *err);
char *sr_try_strdup(const char *s, char *err);
char *sr_try_strndup(const char *s, size_t n, char *err);
char *sr_try_asprintf(char *err, const char *fmt, ...) SR_PRINTF(2, 3);
/*
 * A large working buffer (a chunk in flight, a codec's planes): n bytes
 * aligned to 4096 (direct I/O writes from it), freed with free(). From
 * SR_BIG_MIN up it is aligned to and rounded up to 2 MiB and advised for
 * transparent huge pages: a first touch of such a buffer then costs one
 * fault per 2 MiB instead of one per 4 KiB page (16 MiB touched first: 52
 * ms of CPU in 4 KiB pages, 1.3 ms in huge ones on the VMs of
 * doc/benchmarks.md, where a save's buffers were a fifth of a small
 * save's CPU). Where the kernel has no huge page to give, or THP is
 * "never", the advice is ignored and the buffer is an ordinary one; its
 * contents are undefined either way, as malloc's. touch is the most of it
 * the caller expects to touch (n where it cannot tell): under SR_BIG_MIN
 * the buffer is in ordinary pages whatever n, as a huge page's first
 * touch zeroes 2 MiB and, where THP's defrag is "madvise", may compact
 * memory first (a 33-byte state's save took 2.6 ms longer with its
 * buffers in huge pages on those VMs). NULL with err as sr_try_malloc.
 */
#define SR_BIG_MIN ((size_t)1 << 20)
void *sr_try_bigbuf(size_t n, size_t touch, char *err);
/* Set err to "what: out of memory" (for a library that reported its own
 * out-of-memory: a NULL from jansson, CURLE_OUT_OF_MEMORY); returns -1. */
int sr_err_oom(char *err, const char *what);
/* Whether the message in err says out-of-memory (SR_OOM_TEXT, written by
 * the two above), whatever prefixes were added to it since: a caller that
 * would fall back or retry on other failures must not on this one. */
#define SR_OOM_TEXT "out of memory"
int sr_err_is_oom(const char *err);

/* The same, dying on out-of-memory: for the supervisor and the CLI only. */
void *sr_malloc(size_t n);
void *sr_calloc(size_t n, size_t size);
void *sr_realloc(void *p, size_t n);
void *sr_reallocarray(void *p, size_t n, size_t size);
/* Room for element n of array p (n in use, *cap allocated, of size bytes
 * each): p itself while n < *cap, else p grown to twice as many. Appending
 * one at a time by sr_reallocarray(p, n + 1, ...) copies the whole array
 * on an allocator that cannot grow in place (AddressSanitizer's): 100,000
 * queue markers took minutes. Dies on out-of-memory. */
void *sr_grow(void *p, size_t n, size_t *cap, size_t size);
/* qsort(3) of n elements at base, which may be NULL when n is 0: the C
 * standard wants a valid pointer even then, and an empty list is often a
 * NULL one (UBSan caught status on an empty queue). */
void sr_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
char *sr_strdup(const char *s);
char *sr_strndup(const char *s, size_t n);
/* Allocating sprintf; dies on OOM. */
char *sr_asprintf(const char *fmt, ...) SR_PRINTF(1, 2);

/* Wall-clock seconds since the epoch (CLOCK_REALTIME). */
double sr_now(void);
/* Monotonic seconds (CLOCK_MONOTONIC), for intervals. */
double sr_mono(void);
/* Sleep for s seconds, resuming after signals. */
void sr_sleep(double s);

/* Format seconds as "1h02m", "3m05s", "12.4s" or "350ms" into buf. */
const char *sr_fmt_duration(double s, char *buf, size_t len);
/* Format bytes as "48.0 MiB" into buf. */
const char *sr_fmt_bytes(uint64_t n, char *buf, size_t len);

/* mkdir -p with mode; 0 or -1 with err set. */
int sr_mkdirs(const char *path, mode_t mode, char *err);
/* rm -rf of path (does not follow symlinks; makes read-only directories
 * writable first); a missing path is success. 0 or -1 with err set. */
int sr_rmtree(const char *path, char *err);
/* Write all of buf to fd, resuming after EINTR and short writes. */
ssize_t sr_write_all(int fd, const void *buf, size_t len);
/* The same at file offset off (pwrite): 0, or -1 with errno. */
int sr_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);
/* Read a whole small file (at most max bytes) into a NUL-terminated buffer. */
int sr_read_file(const char *path, size_t max, char **out, size_t *len, char *err);
/* Write a file atomically: a temporary file in the same directory renamed
 * over path, so a reader sees the old or the new whole. durable: fsync it
 * before the rename, for what must outlive a crash of the machine (not the
 * control files between spotrun and its job, whose readers are alive: a
 * notice's request and the job's answer must not wait for the disk). */
int sr_write_file_atomic(const char *path, const void *buf, size_t len, int durable, char *err);
/* What a file of this st_mode is, for messages: "a FIFO", "a directory"... */
const char *sr_file_kind(mode_t mode);

/* Number of online CPUs (at least 1). */
int sr_ncpus(void);
/* The value of hex digit c (0-9, a-f, A-F), or -1. */
int sr_hexval(int c);
/* Lowercase hex of the n bytes at b into out (2n + 1 bytes, NUL-ended). */
void sr_hex_of(const uint8_t *b, size_t n, char *out);

/* Seconds t (of sr_mono(), for a condition variable on CLOCK_MONOTONIC,
 * or of any clock) as a timespec. */
static inline void
sr_timespec(double t, struct timespec *ts)
{
	ts->tv_sec = (time_t)t;
	ts->tv_nsec = (long)((t - (double)ts->tv_sec) * 1e9);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* A cancel flag that one thread (or a signal handler) sets and others
 * poll: relaxed atomic loads and stores, async-signal-safe and free of data
 * races (a plain volatile int is a race under C11, which ThreadSanitizer
 * reports). sr_flag_get(NULL) is 0. */
static inline int
sr_flag_get(const volatile int *f)
{
	return f != NULL && __atomic_load_n(f, __ATOMIC_RELAXED) != 0;
}

static inline void
sr_flag_set(volatile int *f, int v)
{
	__atomic_store_n(f, v, __ATOMIC_RELAXED);
}

#endif
