/*
 * t-store-direct.c: the file store's direct I/O (store/store-file.c).
 * Streaming uploads in the shapes a pack takes (tar headers, member data
 * in aligned memory, short tails), in unaligned pieces across
 * the staging buffer, and one large write split in two, each read back
 * byte for byte through every read path: a whole get, ranged reads that go
 * direct (aligned offset, memory and length), with a tail, and buffered
 * (unaligned). Many small pieces grow the staging buffer past its first
 * 64 KiB, and a growth that runs out of memory fails the write with what
 * it could not have. 76 MiB of unaligned pieces fill the 8 MiB buffer
 * again and again, each queued for the background writer while the next
 * fills, more than it queues, so buffers come back to be filled again;
 * and a write that fails there (past RLIMIT_FSIZE) fails the upload, said
 * by a later write, with nothing published. Where the file system offers direct I/O ($TMPDIR or /tmp,
 * ext4 here), the data of a direct upload must not be in the page cache
 * afterwards; where it does not (/dev/shm, a tmpfs), the same uploads go
 * through the page cache and read back the same.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oom.h"
#include "store.h"
#include "tap.h"
#include "util.h"

#define MiB ((size_t)1 << 20)

/* Byte i of every test object. */
static uint8_t
byte_at(size_t i)
{
	return (uint8_t)((i * 2654435761u) >> 11 ^ i >> 20);
}

/* A page-aligned copy of bytes [from, from + len) of the stream, plus
 * shift bytes in front (shift 1: deliberately unaligned). */
static uint8_t *
piece(size_t from, size_t len, size_t shift, void **base)
{
	uint8_t *p;
	size_t i;

	if (posix_memalign(base, 4096, len + shift + 1) != 0)
		sr_fatal("out of memory");
	p = (uint8_t *)*base + shift;
	for (i = 0; i < len; i++)
		p[i] = byte_at(from + i);
	return p;
}

/* Upload the stream's first sum(lens) bytes in pieces of lens[i] bytes,
 * pieces[i] aligned or not; 0 when every call succeeded, else -1 with
 * *failed_at the piece whose write failed (n: the commit). */
static int
upload_at(struct sr_store *st, const char *key, const size_t *lens, const int *aligned, int n,
    int *failed_at, char *err)
{
	struct sr_upload *up = sr_store_upload_begin(st, key, err);
	size_t off = 0;
	int i, rc = 0;

	*failed_at = -1;
	if (up == NULL)
		return -1;
	for (i = 0; i < n && rc == 0; i++) {
		void *base;
		uint8_t *p = piece(off, lens[i], aligned[i] ? 0 : 1, &base);

		if ((rc = sr_upload_write(up, p, lens[i], err)) != 0)
			*failed_at = i;
		free(base);
		off += lens[i];
	}
	if (rc != 0) {
		sr_upload_abort(up);
		return -1;
	}
	if ((rc = sr_upload_commit(up, err)) != 0)
		*failed_at = n;
	return rc;
}

static int
upload(struct sr_store *st, const char *key, const size_t *lens, const int *aligned, int n,
    char *err)
{
	int at;

	return upload_at(st, key, lens, aligned, n, &at, err);
}

/* Whether buf holds bytes [from, from + len) of the stream. */
static int
same(const uint8_t *buf, size_t from, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != byte_at(from + i))
			return 0;
	return 1;
}

/* Pages of the file at path in the page cache, or -1. */
static long
resident_pages(const char *path)
{
	struct stat sb;
	unsigned char *vec;
	size_t pages, i;
	long n = 0;
	void *map;
	int fd = open(path, O_RDONLY);

	if (fd == -1 || fstat(fd, &sb) == -1 || sb.st_size == 0) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	pages = ((size_t)sb.st_size + 4095) / 4096;
	vec = sr_malloc(pages);
	if (mincore(map, (size_t)sb.st_size, vec) == 0)
		for (i = 0; i < pages; i++)
			n += vec[i] & 1;
	else
		n = -1;
	free(vec);
	munmap(map, (size_t)sb.st_size);
	return n;
}

/* Read [off, off + len) of key into memory aligned or not. */
static int
read_ok(struct sr_store *st, const char *key, uint64_t off, size_t len, int aligned)
{
	void *base;
	uint8_t *p;
	char err[SR_ERRMAX];
	int good;

	if (posix_memalign(&base, 4096, len + 1) != 0)
		sr_fatal("out of memory");
	p = (uint8_t *)base + (aligned ? 0 : 1);
	memset(p, 0xa5, len);
	good = sr_store_read_range(st, key, off, len, p, err) == 0 && same(p, off, len);
	free(base);
	return good;
}

/* A direct upload whose staging buffer cannot grow: the write that needed
 * it fails, saying so, and the upload aborts (buffered: nothing grows). */
static void
staging_oom(struct sr_store *st, const char *dir, int direct)
{
	char err[SR_ERRMAX], want[SR_ERRMAX];
	struct sr_upload *up;
	void *base;
	uint8_t *p;
	int rc;

	if (!oom_usable()) {
		ok(1, "# SKIP %s: out of memory in the staging buffer's growth (no injection under "
		    "ASan)", dir);
		return;
	}
	if ((up = sr_store_upload_begin(st, "p/oom", err)) == NULL) {
		ok(0, "%s: begin p/oom: %s", dir, err);
		return;
	}
	p = piece(0, 100 << 10, 1, &base);
	rc = sr_upload_write(up, p, 1000, err);
	oom_arm(1, 1, OOM_OURS);
	if (rc == 0)
		rc = sr_upload_write(up, p + 1000, (100 << 10) - 1000, err);
	oom_disarm();
	free(base);
	if (direct) {
		snprintf(want, sizeof want, "upload p/oom: allocate the upload's staging buffer: "
		    "out of memory");
		is_str(rc == -1 ? err : "succeeded", want, "%s: a staging buffer that cannot grow "
		    "fails the write", dir);
	} else
		is_int(rc, 0, "%s: a buffered upload stages nothing to grow %s", dir, err);
	sr_upload_abort(up);
}

/* 76 MiB in unaligned pieces of 777 KiB and a little: the staging buffer
 * (8 MiB) fills nine times and goes to the background writer each time,
 * more than it queues (4), so that buffers written come back to be filled
 * again; then the same with files limited to 12 MiB, so that the second
 * full buffer's write fails there, told by a write that comes later (a
 * direct upload: it is queued) or by the one that crossed the limit. */
static void
background_writes(struct sr_store *st, const char *dir, int direct)
{
	size_t lens[100], total = 0, i;
	int al[100], rc, at, crossing = -1;
	char err[SR_ERRMAX] = "", *path;
	struct rlimit old, lim;
	void *buf;
	size_t len;
	long res;

	for (i = 0; i < 100; i++) {
		lens[i] = 777 * 1024 + 11 * i;
		al[i] = i % 5 == 0;
		total += lens[i];
		if (crossing == -1 && total > 12 * MiB)
			crossing = (int)i;
	}
	is_int(upload(st, "p/many", lens, al, 100, err), 0, "%s: upload %zu bytes through the "
	    "staging buffer %s", dir, total, err);
	path = sr_asprintf("%s/p/many", dir);
	res = resident_pages(path);
	if (direct)
		ok(res >= 0 && res <= 4, "%s: written direct, the tail's page aside (%ld resident)",
		    dir, res);
	else
		ok(res > 0, "%s: the page cache holds it (%ld pages)", dir, res);
	free(path);
	ok(sr_store_get(st, "p/many", total, &buf, &len, NULL, err) == 0 && len == total &&
	    same(buf, 0, total), "%s: every byte back", dir);
	free(buf);

	if (getrlimit(RLIMIT_FSIZE, &old) == -1)
		sr_fatal("getrlimit: %s", strerror(errno));
	lim = old;
	lim.rlim_cur = 12 * MiB;
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &lim) == -1)
		sr_fatal("setrlimit: %s", strerror(errno));
	rc = upload_at(st, "p/fsize", lens, al, 100, &at, err);
	if (setrlimit(RLIMIT_FSIZE, &old) == -1)
		sr_fatal("setrlimit: %s", strerror(errno));
	signal(SIGXFSZ, SIG_DFL);
	ok(rc == -1 && strncmp(err, "upload p/fsize: write ", 22) == 0 &&
	    strstr(err, ": File too large") != NULL, "%s: a write past the file size limit fails "
	    "the upload: %s", dir, err);
	if (direct)
		ok(at > crossing && at < 100, "%s: told by a later write, %d (the limit crossed by "
		    "%d)", dir, at, crossing);
	else
		is_int(at, crossing, "%s: told by the write that crossed the limit", dir);
	is_int(sr_store_get(st, "p/fsize", 1, &buf, &len, NULL, err), SR_STORE_NOTFOUND,
	    "%s: nothing published", dir);
}

/* Every upload shape on a store in dir; direct: whether its file system
 * takes direct I/O. */
static void
test_store(const char *dir, int direct)
{
	char *url = sr_asprintf("file://%s", dir), err[SR_ERRMAX], *path;
	/* a pack: header, member data from aligned memory, its tail and the
	 * padding, three times, then the end of the archive and 100 bytes
	 * that no block holds whole */
	static const size_t pack_lens[] = { 512, 5 * MiB + 300, 212, 512, 3 * MiB + 4096, 512,
	    2 * MiB + 1, 511, 1024, 100 };
	static const int pack_al[] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	/* unaligned pieces across the 8 MiB staging buffer */
	size_t odd_lens[14];
	int odd_al[14];
	/* one aligned write larger than the staging buffer */
	static const size_t big_lens[] = { 16 * MiB + 512 };
	static const int big_al[] = { 1 };
	size_t small_lens[300];
	int small_al[300];
	size_t total, i;
	struct sr_store *st;
	void *buf;
	size_t len;
	long res;

	for (i = 0; i < 14; i++) {
		odd_lens[i] = 777 * 1024 + 13 * i;
		odd_al[i] = i % 3 == 0;
	}
	if (sr_store_open(url, &st, err) != 0) {
		ok(0, "open %s: %s", url, err);
		free(url);
		return;
	}
	for (total = 0, i = 0; i < SR_ARRAY_LEN(pack_lens); i++)
		total += pack_lens[i];
	is_int(upload(st, "p/pack", pack_lens, pack_al, SR_ARRAY_LEN(pack_lens), err), 0,
	    "%s: upload a pack's shapes %s", dir, err);
	path = sr_asprintf("%s/p/pack", dir);
	res = resident_pages(path);
	if (direct)
		ok(res >= 0 && res <= 4, "%s: only the last page went through the page cache (%ld"
		    " resident)", dir, res);
	else
		ok(res > 0, "%s: the page cache holds it (%ld pages)", dir, res);
	ok(read_ok(st, "p/pack", 512, 5 * MiB + 300, 1), "%s: a member's range: aligned, with a tail",
	    dir);
	ok(read_ok(st, "p/pack", 512, 4 * MiB, 1), "%s: a range of whole blocks", dir);
	ok(read_ok(st, "p/pack", 513, 3 * MiB, 1), "%s: an unaligned offset", dir);
	ok(read_ok(st, "p/pack", 1024, 3 * MiB, 0), "%s: unaligned memory", dir);
	ok(read_ok(st, "p/pack", total - 2 * MiB - 100, 2 * MiB + 100, 1),
	    "%s: a range to the last byte", dir);
	ok(read_ok(st, "p/pack", 7, 100, 1), "%s: a small range", dir);
	ok(sr_store_get(st, "p/pack", total, &buf, &len, NULL, err) == 0 && len == total &&
	    same(buf, 0, total), "%s: get returns all %zu bytes", dir, total);
	free(buf);
	free(path);

	for (total = 0, i = 0; i < 14; i++)
		total += odd_lens[i];
	is_int(upload(st, "p/odd", odd_lens, odd_al, 14, err), 0,
	    "%s: upload %zu bytes in unaligned pieces %s", dir, total, err);
	ok(sr_store_get(st, "p/odd", total, &buf, &len, NULL, err) == 0 && len == total &&
	    same(buf, 0, total), "%s: every byte back", dir);
	free(buf);

	/* tar headers alone: 300 of them staged, past the buffer's first
	 * 64 KiB, none large enough to go straight */
	for (total = 0, i = 0; i < SR_ARRAY_LEN(small_lens); i++) {
		small_lens[i] = 512 + (i % 7) * 100;
		small_al[i] = i % 2;
		total += small_lens[i];
	}
	is_int(upload(st, "p/small", small_lens, small_al, SR_ARRAY_LEN(small_lens), err), 0,
	    "%s: upload %zu bytes in %zu small pieces %s", dir, total, SR_ARRAY_LEN(small_lens),
	    err);
	ok(sr_store_get(st, "p/small", total, &buf, &len, NULL, err) == 0 && len == total &&
	    same(buf, 0, total), "%s: every small piece back", dir);
	free(buf);
	staging_oom(st, dir, direct);
	background_writes(st, dir, direct);

	is_int(upload(st, "p/big", big_lens, big_al, 1, err), 0, "%s: one split write %s", dir,
	    err);
	path = sr_asprintf("%s/p/big", dir);
	res = resident_pages(path);
	/* Direct writes go in whole blocks of at least 4 KiB (a 4 KiB-sector
	 * disk does a 512-byte one as a read-modify-write, issue 22): the
	 * 512 bytes past 16 MiB are the buffered tail, one page. */
	if (direct)
		is_int(res, 1, "%s: only the 512-byte tail went through the page cache", dir);
	else
		ok(res > 0, "%s: all of it in the page cache (%ld pages)", dir, res);
	ok(read_ok(st, "p/big", 0, big_lens[0], 1), "%s: read back whole", dir);
	free(path);

	{
		struct sr_upload *up = sr_store_upload_begin(st, "p/align", err);
		size_t min = 7, a = up != NULL ? sr_upload_align(up, &min) : 99;

		if (direct)
			ok(a >= 4096 && (a & (a - 1)) == 0 && min == MiB,
			    "%s: a direct upload places pieces of >= 1 MiB at %zu-byte offsets "
			    "(a power of two >= 4096)", dir, a);
		else
			ok(a == 0 && min == 0, "%s: a buffered upload places nothing (%zu, %zu)",
			    dir, a, min);
		sr_upload_abort(up);
	}

	is_int(upload(st, "p/empty", NULL, NULL, 0, err), 0, "%s: an empty upload %s", dir, err);
	ok(sr_store_get(st, "p/empty", 1, &buf, &len, NULL, err) == 0 && len == 0,
	    "%s: is an empty object", dir);
	free(buf);
	sr_store_close(st);
	free(url);
}

/* Whether the file system of dir reports direct I/O alignment. */
static int
has_direct(const char *dir)
{
	char *p = sr_asprintf("%s/probe", dir);
	int fd = open(p, O_WRONLY | O_CREAT, 0600), r = 0;
	struct statx sx;

	if (fd != -1 && statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0)
		r = (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align != 0;
	if (fd != -1)
		close(fd);
	unlink(p);
	free(p);
	return r;
}

int
main(void)
{
	const char *base = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
	char *dirs[2], err[SR_ERRMAX];
	int i;

	dirs[0] = sr_asprintf("%s/t-store-direct.XXXXXX", base);
	dirs[1] = sr_strdup("/dev/shm/t-store-direct.XXXXXX");
	for (i = 0; i < 2; i++) {
		if (mkdtemp(dirs[i]) == NULL) {
			ok(1, "# SKIP no %s", dirs[i]);
			free(dirs[i]);
			dirs[i] = NULL;
			continue;
		}
		tap_diag("%s: direct I/O %s", dirs[i], has_direct(dirs[i]) ? "yes" : "no");
		test_store(dirs[i], has_direct(dirs[i]));
		sr_rmtree(dirs[i], err);
		free(dirs[i]);
	}
	return tap_done();
}
