/*
 * store-file.c: the file:///abs/dir store backend. One file per object under
 * the store's directory, with the guarantees of object storage (store.h):
 *
 *  - an object is written to a temp file in ROOT/.tmp (same file system),
 *    fsync'd, and only then published (an upload whose flush is deferred
 *    is published unsynced, and file_flush syncs it and its directory
 *    later): rename() for a plain put, link() for
 *    a create-only put (EEXIST means the key exists), and for a
 *    compare-and-swap the etag is compared and the rename done under an
 *    exclusive flock of ROOT/.tmp/lock. Every publish and delete takes that
 *    lock, so a CAS cannot be overtaken between its compare and its rename,
 *    and a delete cannot remove a directory a put is about to fill.
 *  - the etag is hex of the first 16 bytes of the SHA-256 of the content,
 *    for objects up to 8 MiB (control objects: manifests, pointers, the only
 *    ones compare-and-swap is used on); for larger ones (packs) it is the
 *    SHA-256 of the file's identity (device, inode, size, mtime), as S3's
 *    multipart etags are not content hashes either: hashing every pack a
 *    second time cost a fifth of a checkpoint's CPU. The content etag is
 *    computed while writing and kept in the xattr user.spotrun.etag with the
 *    size and mtime it belongs to. Where the xattr is missing, stale (the
 *    file was changed behind the store's back) or unsupported, the file is
 *    hashed instead: always right, only slower.
 *  - objects are immutable files: a reader that opened one reads one whole
 *    version even while a writer replaces it.
 *  - streaming uploads (packs) are written with O_DIRECT where the file
 *    system supports it (statx STATX_DIOALIGN): the pieces gather in an
 *    aligned staging buffer, which goes to the disk each time it fills
 *    its 8 MiB, queued (up to four) for a thread of its own (bgwrite.c)
 *    that writes them in order while the next fills (and a second that
 *    fdatasyncs the file every 64 MiB meanwhile, so that the disk's cache
 *    is emptied beside the writes rather than all at the commit, unless
 *    a stalled write says another writer shares the disk),
 *    so that the disk gets large requests and the uploader does not wait
 *    for each; the rest at the commit. A failing disk shows in the write
 *    that hands over the next buffer, or in the commit. Checkpoint data
 *    should not crowd the page cache of the machine that trains, and the
 *    page cache is where the cost was: copying into freshly allocated
 *    cache pages ran at 0.5-2 GB/s on the benchmark VM and was the save's
 *    serial bottleneck, where a direct write is a DMA from memory already
 *    in use. Elsewhere (tmpfs, or a write the file system refuses with
 *    EINVAL) uploads go through the page cache, starting writeback every
 *    WRITEBACK_EVERY bytes so that the final fsync has little left. Large
 *    ranged reads (a restore's chunks) are direct too where aligned.
 *
 * The temp area, ".tmp" at the root, is not a key: keys starting with it are
 * refused and listings skip it. Temp files left by writers that died are
 * removed when a store is opened; a live writer's never (sweep_tmp).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "digest.h"
#include "store-int.h"
#include "util.h"

#define TMP_DIR ".tmp"
#define LOCK_FILE ".tmp/lock"
#define ETAG_XATTR "user.spotrun.etag"
#define ETAG_LEN 32			/* hex of 16 bytes */
#define STALE_TMP_SECONDS (24 * 3600)
/* The end of a temp file's name whose writer holds a flock on it while
 * alive; temp files without it (of older versions) go by age alone. */
#define LOCKED_TMP ".w"
#define IO_BLOCK ((size_t)1 << 20)	/* read size when hashing a file */
/* A buffered upload starts the writeback of what it wrote every this many
 * bytes, so that the disk works while the rest is produced and the final
 * fsync has little left to wait for. */
#define WRITEBACK_EVERY ((uint64_t)64 << 20)
/* Staging buffer of a direct upload, written each time it is full. It
 * starts at DIRECT_START, in ordinary pages, and grows to DIRECT_BUF, in
 * huge ones (sr_try_bigbuf), only when that fills: a small checkpoint's
 * pack touches a page of it, and the first touch of a huge page cost
 * such a save more than the rest of its writes. DIRECT_MIN: where no
 * background writer can be had, it is written each time this much has
 * gathered; and the pieces a writer had best place (sr_upload_align). */
#define DIRECT_BUF ((size_t)8 << 20)
#define DIRECT_MIN ((size_t)1 << 20)
#define DIRECT_START ((size_t)64 << 10)

struct fstore {
	char *root;	/* absolute path, for messages and the temp names */
	int rootfd;
};

/* A temp file being written, and what becomes the object's etag. */
struct fwriter {
	int fd;
	char tmp[64];	/* name relative to the root */
	EVP_MD_CTX *md;
	uint64_t size;		/* bytes accepted */
	uint64_t flushed;	/* buffered: writeback started up to here */
	int failed;	/* a write failed: the upload can only be aborted */
	/* Direct I/O: bytes [size - dlen, size) wait in dbuf, whose start is
	 * at a file offset that is a multiple of dalign. NULL: buffered. */
	uint8_t *dbuf;
	size_t dlen, dcap, dalign, dmem;	/* dmem: memory alignment */
	int direct;			/* O_DIRECT is on */
	int oom;			/* dbuf could not grow */
	int defer_flush;		/* no fsync: file_flush's, later */
	/* Full staging buffers go to bg (NULL: none yet, or none to be had,
	 * no_bg), up to SR_BGWRITE_DEPTH queued; spare: nspare buffers
	 * written and reaped, to fill next. */
	struct sr_bgwrite *bg;
	int no_bg;
	uint8_t *spare[SR_BGWRITE_DEPTH];
	int nspare;
};

/* Objects larger than this get an identity etag, not a content hash. */
#define CONTENT_ETAG_MAX ((off_t)8 << 20)

static struct fstore *
fs_of(struct sr_store *st)
{
	return st->priv;
}

#define SHOW(key, buf) sr_store_key_show((key), (buf), sizeof (buf))

/* ---- etags ---- */

/* The etag from md, into etag; 0, or -1 with err (OpenSSL allocates:
 * out of memory). */
static int
md_final(EVP_MD_CTX *md, char *etag, char *err)
{
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int dlen;

	if (EVP_DigestFinal_ex(md, digest, &dlen) != 1)
		return sr_digest_ssl_err(err, "hash with SHA-256");
	sr_hex_of(digest, ETAG_LEN / 2, etag);
	return 0;
}

/* A SHA-256 context, or NULL with err. */
static EVP_MD_CTX *
md_new(char *err)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	if (md == NULL) {
		sr_err_oom(err, "set up SHA-256");
		return NULL;
	}
	if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		sr_digest_ssl_err(err, "set up SHA-256");
		EVP_MD_CTX_free(md);
		return NULL;
	}
	return md;
}

static int
etag_of_buf(const void *buf, size_t len, char *etag, char *err)
{
	EVP_MD_CTX *md = md_new(err);
	int rc;

	if (md == NULL)
		return -1;
	if (len > 0 && EVP_DigestUpdate(md, buf, len) != 1)
		rc = sr_digest_ssl_err(err, "hash with SHA-256");
	else
		rc = md_final(md, etag, err);
	EVP_MD_CTX_free(md);
	return rc;
}

/* The xattr's text: "v1 ETAG SIZE MTIME_SEC MTIME_NSEC". */
static int
xattr_text(const struct stat *sb, const char *etag, char *buf, size_t len)
{
	return snprintf(buf, len, "v1 %s %llu %lld %ld", etag,
	    (unsigned long long)sb->st_size, (long long)sb->st_mtim.tv_sec,
	    (long)sb->st_mtim.tv_nsec);
}

/* The etag remembered for the open file fd (stat sb), if it still holds. */
static int
etag_cached(int fd, const struct stat *sb, char *etag)
{
	char have[160], want[160];
	ssize_t n = fgetxattr(fd, ETAG_XATTR, have, sizeof have - 1);

	if (n < 3 + ETAG_LEN)
		return -1;
	have[n] = '\0';
	memcpy(etag, have + 3, ETAG_LEN);
	etag[ETAG_LEN] = '\0';
	xattr_text(sb, etag, want, sizeof want);
	return strcmp(have, want) == 0 ? 0 : -1;
}

/* The etag of a large object: a hash of the file's identity. 0, or -1
 * with err. */
static int
etag_of_identity(const struct stat *sb, char *etag, char *err)
{
	char id[128];
	int n = snprintf(id, sizeof id, "%llu %llu %lld %lld %ld", (unsigned long long)sb->st_dev,
	    (unsigned long long)sb->st_ino, (long long)sb->st_size, (long long)sb->st_mtim.tv_sec,
	    (long)sb->st_mtim.tv_nsec);

	return etag_of_buf(id, (size_t)n, etag, err);
}

/* Etag of the open object fd (stat sb): the cached one, or hash the file. */
static int
etag_of_fd(int fd, const struct stat *sb, char *etag, const char *verb, const char *key,
    char *err)
{
	EVP_MD_CTX *md;
	uint8_t *buf;
	size_t cap;
	off_t off = 0;
	ssize_t n;
	char show[SR_KEY_SHOW_MAX];
	int rc;

	if (sb->st_size > CONTENT_ETAG_MAX) {
		if (etag_of_identity(sb, etag, err) == -1)
			return sr_err_prefix(err, "%s %s", verb, SHOW(key, show));
		return 0;
	}
	if (etag_cached(fd, sb, etag) == 0)
		return 0;
	if ((md = md_new(err)) == NULL)
		return sr_err_prefix(err, "%s %s", verb, SHOW(key, show));
	/* a listing hashes every small object it has no cached etag for:
	 * a buffer of the object's size, not IO_BLOCK, for each (100,000
	 * empty markers were 100,000 mapped, filled, unmapped MiB under
	 * ASan); one byte more, so the first read may already see the end */
	cap = sb->st_size < (off_t)IO_BLOCK ? (size_t)sb->st_size + 1 : IO_BLOCK;
	if ((buf = sr_try_malloc(cap, err)) == NULL) {
		EVP_MD_CTX_free(md);
		return sr_err_prefix(err, "%s %s", verb, SHOW(key, show));
	}
	for (;;) {
		n = pread(fd, buf, cap, off);

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			sr_errno(err, "%s %s: read", verb, SHOW(key, show));
			free(buf);
			EVP_MD_CTX_free(md);
			return -1;
		}
		if (n == 0)
			break;
		if (EVP_DigestUpdate(md, buf, (size_t)n) != 1) {
			sr_digest_ssl_err(err, "hash with SHA-256");
			break;
		}
		off += n;
	}
	rc = n == 0 ? md_final(md, etag, err) : -1;
	free(buf);
	EVP_MD_CTX_free(md);
	return rc == 0 ? 0 : sr_err_prefix(err, "%s %s", verb, SHOW(key, show));
}

/* ---- helpers ---- */

/* The error for a file at key that is no object: a FIFO, socket or device
 * put into the store's directory by something else. */
static int
not_an_object(struct fstore *fs, const char *verb, const char *key, mode_t mode, char *err)
{
	char show[SR_KEY_SHOW_MAX];

	return sr_err(err, "%s %s: %s/%s is %s, not a regular file: the file store keeps "
	    "objects as regular files; remove it", verb, SHOW(key, show), fs->root, key,
	    sr_file_kind(mode));
}

/* Open object key for reading. SR_STORE_NOTFOUND when it does not exist as
 * an object (a directory of keys is not one); SR_STORE_ERROR for a file of
 * another kind. The kind is checked before the open, which would block
 * forever on a FIFO without a writer (and may act on a device), and the
 * open cannot block either (O_NONBLOCK, checked again by fstat), should the
 * path be replaced in between. */
static int
open_object(struct fstore *fs, const char *verb, const char *key, int *fdp,
    struct stat *sb, char *err)
{
	char show[SR_KEY_SHOW_MAX];
	int fd;

	if (fstatat(fs->rootfd, key, sb, 0) == -1) {
		if (errno == ENOENT || errno == ENOTDIR) {
			sr_err(err, "%s %s: no such object", verb, SHOW(key, show));
			return SR_STORE_NOTFOUND;
		}
		return sr_errno(err, "%s %s: stat %s/%s", verb, SHOW(key, show), fs->root, key);
	}
	if (!S_ISREG(sb->st_mode) && !S_ISDIR(sb->st_mode))
		return not_an_object(fs, verb, key, sb->st_mode, err);
	fd = openat(fs->rootfd, key, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd == -1 && (errno == ENOENT || errno == ENOTDIR)) {
		sr_err(err, "%s %s: no such object", verb, SHOW(key, show));
		return SR_STORE_NOTFOUND;
	}
	if (fd == -1)
		return sr_errno(err, "%s %s: open %s/%s", verb, SHOW(key, show), fs->root, key);
	if (fstat(fd, sb) == -1) {
		sr_errno(err, "%s %s: stat", verb, SHOW(key, show));
		close(fd);
		return SR_STORE_ERROR;
	}
	if (!S_ISREG(sb->st_mode)) {
		close(fd);
		if (!S_ISDIR(sb->st_mode))
			return not_an_object(fs, verb, key, sb->st_mode, err);
		sr_err(err, "%s %s: no such object", verb, SHOW(key, show));
		return SR_STORE_NOTFOUND;
	}
	*fdp = fd;
	return SR_STORE_OK;
}

static int
pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		if (n == 0) {
			errno = EIO;	/* shrunk behind the store's back */
			return -1;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* The .tmp area is the backend's own: not a key. */
static int
check_reserved(const char *verb, const char *key, char *err)
{
	size_t n = strlen(TMP_DIR);
	char show[SR_KEY_SHOW_MAX];

	if (strncmp(key, TMP_DIR, n) == 0 && (key[n] == '\0' || key[n] == '/'))
		return sr_err(err, "%s %s: invalid key: \"" TMP_DIR "\" is the file store's "
		    "temporary area", verb, SHOW(key, show));
	return 0;
}

/* Take the store's flock, LOCK_EX (publish, delete, the sweep of temp
 * files) or LOCK_SH (creating a temp file); the fd to unlock_store. */
static int
lock_store(struct fstore *fs, int how, char *err)
{
	int fd = openat(fs->rootfd, LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0666);

	/* .tmp/ made by another thread or process between the two calls is fine */
	if (fd == -1 && errno == ENOENT && (mkdirat(fs->rootfd, TMP_DIR, 0777) == 0 ||
	    errno == EEXIST))
		fd = openat(fs->rootfd, LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd == -1)
		return sr_errno(err, "open lock file %s/%s", fs->root, LOCK_FILE);
	while (flock(fd, how) == -1) {
		if (errno != EINTR) {
			sr_errno(err, "lock %s/%s", fs->root, LOCK_FILE);
			close(fd);
			return -1;
		}
	}
	return fd;
}

static void
unlock_store(int fd)
{
	close(fd);	/* drops the flock */
}

/* Create the directories key lives in; the error names the one that failed. */
static int
make_parents(struct fstore *fs, const char *key, char *err)
{
	char p[SR_KEY_MAX + 1], *s;	/* keys were checked: not longer */

	strlcpy(p, key, sizeof p);
	for (s = p; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		if (mkdirat(fs->rootfd, p, 0777) == -1 && errno != EEXIST)
			return sr_errno(err, "create directory %s/%s", fs->root, p);
		*s = '/';
	}
	return 0;
}

/* The directory holding key, opened: its fd, or -1 with errno. */
static int
open_parent(struct fstore *fs, const char *key)
{
	const char *slash = strrchr(key, '/');
	char dir[SR_KEY_MAX + 1];	/* no allocation: the object is out already */

	if (slash != NULL)
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - key), key);
	else
		strlcpy(dir, ".", sizeof dir);
	return openat(fs->rootfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* fsync the directory holding key, so that its new name survives a crash:
 * 0, or -1 with errno. */
static int
sync_parent(struct fstore *fs, const char *key)
{
	int fd, rc, e;

	if ((fd = open_parent(fs, key)) == -1)
		return -1;
	rc = fsync(fd);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

/* The message for a publish that failed with errno e, and its cause in the
 * file store's terms where it is one of its limits. */
static int
publish_error(struct fstore *fs, const char *verb, const char *key, int e, char *err)
{
	char show[SR_KEY_SHOW_MAX];
	struct stat sb;

	if (e == ENOTDIR)
		return sr_err(err, "%s %s: a leading part of the key is an object: the file "
		    "store cannot hold both \"a\" and \"a/b\"", verb, SHOW(key, show));
	if ((e == EISDIR || e == EEXIST) && fstatat(fs->rootfd, key, &sb,
	    AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode))
		return sr_err(err, "%s %s: keys exist below this one: the file store cannot "
		    "hold both \"a\" and \"a/b\"", verb, SHOW(key, show));
	errno = e;
	return sr_errno(err, "%s %s: publish in %s", verb, SHOW(key, show), fs->root);
}

/* ---- writing ---- */

/* Switch w to direct I/O if the file system offers it; else leave it
 * buffered. 0, or -1 with err when its staging buffer cannot be had. */
static int
writer_direct(struct fwriter *w, char *err)
{
	struct statx sx;
	size_t align;
	void *buf;
	int fl;

	if (statx(w->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == -1 ||
	    !(sx.stx_mask & STATX_DIOALIGN) || sx.stx_dio_offset_align == 0 ||
	    sx.stx_dio_mem_align == 0 || DIRECT_BUF % sx.stx_dio_offset_align != 0 ||
	    DIRECT_BUF % sx.stx_dio_mem_align != 0)
		return 0;
	align = sx.stx_dio_mem_align > 4096 ? sx.stx_dio_mem_align : 4096;
	/* powers of two that divide DIRECT_BUF, as checked above */
	w->dalign = sr_dio_write_align(w->fd, sx.stx_dio_offset_align, DIRECT_BUF);
	w->dcap = DIRECT_START > w->dalign ? DIRECT_START : w->dalign;
	if (w->dcap < align)
		w->dcap = align;
	if (posix_memalign(&buf, align, w->dcap) != 0)
		return sr_err_oom(err, "allocate the upload's staging buffer");
	if ((fl = fcntl(w->fd, F_GETFL)) == -1 || fcntl(w->fd, F_SETFL, fl | O_DIRECT) == -1) {
		free(buf);
		return 0;
	}
	w->dbuf = buf;
	w->direct = 1;
	w->dmem = sx.stx_dio_mem_align;
	return 0;
}

/* A staging buffer of DIRECT_BUF bytes (NULL: out of memory). */
static uint8_t *
staging_new(const struct fwriter *w)
{
	void *buf;

	if (w->dmem <= 4096)	/* huge pages where there are */
		buf = sr_try_bigbuf(DIRECT_BUF, DIRECT_BUF, NULL);
	else if (posix_memalign(&buf, w->dmem, DIRECT_BUF) != 0)
		buf = NULL;
	return buf;
}

/* The staging buffer grown to DIRECT_BUF, what it holds kept: 0, or -1
 * with w->oom set. */
static int
writer_grow(struct fwriter *w)
{
	uint8_t *buf = staging_new(w);

	if (buf == NULL) {
		w->oom = 1;
		return -1;
	}
	memcpy(buf, w->dbuf, w->dlen);
	free(w->dbuf);
	w->dbuf = buf;
	w->dcap = DIRECT_BUF;
	return 0;
}

/* Through the page cache from here on (a tail shorter than a block, or
 * the file system refused a direct write); dbuf still gathers pieces. */
static void
writer_buffered(struct fwriter *w)
{
	int fl = fcntl(w->fd, F_GETFL);

	if (fl != -1)
		(void)fcntl(w->fd, F_SETFL, fl & ~O_DIRECT);
	w->direct = 0;
	w->dalign = 1;
}

static void writer_discard(struct fstore *fs, struct fwriter *w);

static int
writer_open(struct fstore *fs, const char *verb, const char *key, int direct,
    struct fwriter *w, char *err)
{
	char show[SR_KEY_SHOW_MAX];
	int tries, lock;

	memset(w, 0, sizeof *w);
	w->fd = -1;
	/* Created and locked under the store's shared lock: the sweep, which
	 * holds it exclusively, never sees the file before its flock. */
	if ((lock = lock_store(fs, LOCK_SH, err)) == -1)
		return sr_err_prefix(err, "%s %s", verb, SHOW(key, show));
	for (tries = 0; tries < 100; tries++) {
		uint64_t r;

		if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
			r = (uint64_t)sr_mono() * 1000003u ^ (uint64_t)tries;
		snprintf(w->tmp, sizeof w->tmp, TMP_DIR "/%ld-%016llx" LOCKED_TMP, (long)getpid(),
		    (unsigned long long)r);
		w->fd = openat(fs->rootfd, w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (w->fd != -1)
			break;
		if (errno != EEXIST)
			break;
	}
	if (w->fd == -1) {
		sr_errno(err, "%s %s: create temp file in %s/" TMP_DIR, verb, SHOW(key, show),
		    fs->root);
		unlock_store(lock);
		return -1;
	}
	/* Held until the file is published or removed: the writer is alive.
	 * Where the file system has no flock, the sweep goes by age. */
	(void)flock(w->fd, LOCK_EX | LOCK_NB);
	unlock_store(lock);
	if ((w->md = md_new(err)) == NULL || (direct && writer_direct(w, err) == -1)) {
		writer_discard(fs, w);
		return sr_err_prefix(err, "%s %s", verb, SHOW(key, show));
	}
	return 0;
}

static void
writer_discard(struct fstore *fs, struct fwriter *w)
{
	(void)sr_bgwrite_stop(w->bg, free);	/* the queued buffers freed; discarded */
	w->bg = NULL;
	while (w->nspare > 0)
		free(w->spare[--w->nspare]);
	if (w->fd != -1)
		close(w->fd);
	w->fd = -1;
	if (w->tmp[0] != '\0')
		(void)unlinkat(fs->rootfd, w->tmp, 0);
	w->tmp[0] = '\0';
	EVP_MD_CTX_free(w->md);
	w->md = NULL;
	free(w->dbuf);
	w->dbuf = NULL;
}

/* pwrite at off; where the file system refuses a direct write after all
 * (EINVAL), the upload goes on through the page cache. */
static int
writer_pwrite(struct fwriter *w, const void *buf, size_t n, uint64_t off)
{
	if (sr_pwrite_all(w->fd, buf, n, off) == 0)
		return 0;
	if (errno != EINVAL || !w->direct)
		return -1;
	writer_buffered(w);
	return sr_pwrite_all(w->fd, buf, n, off);
}

/* Write the first n staged bytes (n a multiple of dalign, or everything
 * at the end) and keep the rest at the start of dbuf. */
static int
writer_flush(struct fwriter *w, size_t n)
{
	if (writer_pwrite(w, w->dbuf, n, w->size - w->dlen) == -1)
		return -1;
	w->dlen -= n;
	memmove(w->dbuf, w->dbuf + n, w->dlen);
	return 0;
}

/* The oldest queued background write done, its buffer a spare: 0, or -1
 * with errno. One the file system refused with EINVAL (no direct write
 * after all) is done again through the page cache. */
static int
writer_reap(struct fwriter *w)
{
	void *buf;
	size_t len;
	uint64_t off;
	int rc = 0;

	if (sr_bgwrite_reap(w->bg, &buf, &len, &off) == -1) {
		if (buf == NULL)
			return -1;
		if (errno != EINVAL || !w->direct)
			rc = -1;
		else {
			writer_buffered(w);
			rc = sr_pwrite_all(w->fd, buf, len, off);
		}
	}
	w->spare[w->nspare++] = buf;	/* never more than DEPTH: one was queued */
	return rc;
}

/* Every queued background write done: 0, or -1 with errno. */
static int
writer_bg_done(struct fwriter *w)
{
	while (w->bg != NULL && sr_bgwrite_pending(w->bg, 0) > 0)
		if (writer_reap(w) == -1)
			return -1;
	return 0;
}

/* The first n bytes of the full staging buffer (a multiple of dalign)
 * written, the rest kept at the start of the next buffer to fill: queued
 * for the background writer, else here. The next buffer is a spare (the
 * writes done are reaped first), a new one while fewer than
 * SR_BGWRITE_DEPTH are queued, else the oldest queued once written: a
 * disk that keeps up costs two buffers, one that stalls up to five; where
 * memory runs short, what is queued is waited for instead of more
 * allocated. 0, or -1 with errno. */
static int
writer_handoff(struct fwriter *w, size_t n)
{
	uint8_t *next;

	if (w->no_bg)
		return writer_flush(w, n);
	if (w->bg == NULL && (w->bg = sr_bgwrite_start(w->fd, SR_DIRECT_SYNC_EVERY)) == NULL) {
		w->no_bg = 1;
		return writer_flush(w, n);
	}
	while (sr_bgwrite_pending(w->bg, 1) > 0)
		if (writer_reap(w) == -1)
			return -1;
	if (sr_bgwrite_pending(w->bg, 0) == SR_BGWRITE_DEPTH && writer_reap(w) == -1)
		return -1;
	if (w->nspare == 0 && (w->spare[0] = staging_new(w)) != NULL)
		w->nspare = 1;
	if (w->nspare == 0) {
		if (sr_bgwrite_pending(w->bg, 0) == 0)
			return writer_flush(w, n);
		if (writer_reap(w) == -1)
			return -1;
	}
	next = w->spare[--w->nspare];
	memcpy(next, w->dbuf + n, w->dlen - n);
	if (sr_bgwrite_put(w->bg, w->dbuf, n, w->size - w->dlen) == -1) {
		w->spare[w->nspare++] = next;
		return -1;
	}
	w->dbuf = next;
	w->dlen -= n;
	return 0;
}

/*
 * Every piece is staged: the staging buffer goes to the disk once it is
 * full (8 MiB), in the background, and the rest at the commit; where no
 * background writer can be had, DIRECT_MIN at a time in the foreground.
 * Large pieces in aligned memory used to go straight from the caller's
 * memory, without a copy, but such a write returns only when the disk has
 * the bytes, which kept the disk one request at a time: beside another
 * writer a 1 GiB save took 1.60 and 1.70 s staged against 1.95 and 1.78 s
 * that way (medians of two sets of runs); quiet 0.91 and 0.97 s against
 * 0.96 and 1.00 s, for 0.05 s more CPU (doc/benchmarks.md).
 */
static int
writer_write_direct(struct fwriter *w, const uint8_t *buf, size_t len)
{
	while (len > 0) {
		size_t n;

		if (w->dlen == w->dcap && (w->dcap < DIRECT_BUF ? writer_grow(w) :
		    writer_handoff(w, w->dlen / w->dalign * w->dalign)) == -1)
			return -1;
		n = w->dcap - w->dlen < len ? w->dcap - w->dlen : len;
		memcpy(w->dbuf + w->dlen, buf, n);
		w->dlen += n;
		w->size += n;
		buf += n;
		len -= n;
		if (w->no_bg && w->dlen >= DIRECT_MIN &&
		    writer_flush(w, w->dlen / w->dalign * w->dalign) == -1)
			return -1;
	}
	return 0;
}

static int
writer_write(struct fstore *fs, struct fwriter *w, const void *buf, size_t len,
    const char *verb, const char *key, char *err)
{
	char show[SR_KEY_SHOW_MAX];
	int rc;

	if (w->failed)
		return sr_err(err, "%s %s: an earlier write failed", verb, SHOW(key, show));
	if (len == 0)
		return 0;
	if (w->size + len <= (uint64_t)CONTENT_ETAG_MAX && EVP_DigestUpdate(w->md, buf, len) != 1) {
		w->failed = 1;
		sr_digest_ssl_err(err, "hash with SHA-256");
		return sr_err_prefix(err, "%s %s", verb, SHOW(key, show));
	}
	if (w->dbuf != NULL)
		rc = writer_write_direct(w, buf, len);
	else if ((rc = sr_pwrite_all(w->fd, buf, len, w->size)) == 0)
		w->size += len;
	if (rc == -1 && w->oom) {
		w->failed = 1;
		sr_err_oom(err, "allocate the upload's staging buffer");
		return sr_err_prefix(err, "%s %s", verb, SHOW(key, show));
	}
	if (rc == -1) {
		w->failed = 1;
		return sr_errno(err, "%s %s: write %s/%s", verb, SHOW(key, show), fs->root,
		    w->tmp);
	}
	/* Best effort: fsync in writer_finish reports any failure. */
	if (!w->direct && w->size - w->flushed >= WRITEBACK_EVERY) {
		(void)sync_file_range(w->fd, (off_t)w->flushed, (off_t)(w->size - w->flushed),
		    SYNC_FILE_RANGE_WRITE);
		w->flushed = w->size;
	}
	return 0;
}

/* Make the temp file durable (unless its flush is deferred: all written,
 * none of it synced) and remember its etag (etag: ETAG_LEN + 1); publish
 * closes it. */
static int
writer_finish(struct fstore *fs, struct fwriter *w, char *etag, const char *verb,
    const char *key, char *err)
{
	char show[SR_KEY_SHOW_MAX], text[160];
	struct stat sb;
	int rc;

	if (w->failed)
		return sr_err(err, "%s %s: an earlier write failed", verb, SHOW(key, show));
	if (md_final(w->md, etag, err) == -1)
		return sr_err_prefix(err, "%s %s", verb, SHOW(key, show));
	/* The background write done, then what is staged: its whole
	 * blocks direct, a tail shorter than a block through the page cache */
	if (writer_bg_done(w) == -1 || (w->dbuf != NULL && w->dlen >= w->dalign &&
	    writer_flush(w, w->dlen / w->dalign * w->dalign) == -1))
		return sr_errno(err, "%s %s: write %s/%s", verb, SHOW(key, show), fs->root,
		    w->tmp);
	rc = sr_bgwrite_stop(w->bg, NULL);	/* nothing queued */
	w->bg = NULL;
	if (rc != 0) {
		errno = rc;
		return sr_errno(err, "%s %s: sync %s/%s", verb, SHOW(key, show), fs->root,
		    w->tmp);
	}
	if (w->dbuf != NULL && w->dlen > 0) {
		writer_buffered(w);
		if (writer_flush(w, w->dlen) == -1)
			return sr_errno(err, "%s %s: write %s/%s", verb, SHOW(key, show),
			    fs->root, w->tmp);
	}
	if ((!w->defer_flush && fsync(w->fd) == -1) || fstat(w->fd, &sb) == -1)
		return sr_errno(err, "%s %s: sync %s/%s", verb, SHOW(key, show), fs->root,
		    w->tmp);
	if (sb.st_size > CONTENT_ETAG_MAX && etag_of_identity(&sb, etag, err) == -1)
		return sr_err_prefix(err, "%s %s", verb, SHOW(key, show));
	/* Best effort: without the xattr, readers hash the file. */
	xattr_text(&sb, etag, text, sizeof text);
	(void)fsetxattr(w->fd, ETAG_XATTR, text, strlen(text), 0);
	return 0;	/* still open, and flocked, until publish holds the store's lock */
}

/* Whether key's etag is if_match (quoted as HTTP has it, or not):
 * SR_STORE_OK, SR_STORE_PRECONDITION (another etag, or no object) or
 * another SR_STORE_* code, with err. */
static int
match_check(struct fstore *fs, const char *verb, const char *key, const char *if_match,
    char *err)
{
	char show[SR_KEY_SHOW_MAX], cur[ETAG_LEN + 1];
	size_t mlen = strlen(if_match);
	struct stat sb;
	int fd, rc;

	if (mlen >= 2 && if_match[0] == '"' && if_match[mlen - 1] == '"') {
		if_match++;
		mlen -= 2;
	}
	rc = open_object(fs, verb, key, &fd, &sb, err);
	if (rc == SR_STORE_NOTFOUND) {
		sr_err(err, "%s %s: no such object to replace (If-Match)", verb, SHOW(key, show));
		return SR_STORE_PRECONDITION;
	}
	if (rc != SR_STORE_OK)
		return rc;
	rc = etag_of_fd(fd, &sb, cur, verb, key, err);
	close(fd);
	if (rc != 0)
		return SR_STORE_ERROR;
	if (strlen(cur) != mlen || strncmp(cur, if_match, mlen) != 0) {
		sr_err(err, "%s %s: etag is %s, not %.*s (If-Match)", verb, SHOW(key, show), cur,
		    (int)(mlen < 64 ? mlen : 64), if_match);
		return SR_STORE_PRECONDITION;
	}
	return SR_STORE_OK;
}

/*
 * A conditional put that would be refused now: SR_STORE_EXISTS or
 * SR_STORE_PRECONDITION with err, before anything is written; else
 * SR_STORE_OK (err then means nothing). Read without the store's lock:
 * a refusal stands as of this read (the put is ordered there), and a put
 * that goes ahead is checked again under the lock by publish. Why: the
 * queue's claims and the fence are races of conditional puts that all but
 * one lose, and each loser paid for a temp file and its fsync first.
 */
static int
refused_now(struct fstore *fs, const char *verb, const char *key, enum sr_put_mode mode,
    const char *if_match, char *err)
{
	char show[SR_KEY_SHOW_MAX];
	struct stat sb;
	int rc;

	if (mode == SR_PUT_CREATE) {
		if (fstatat(fs->rootfd, key, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))
			return sr_err(err, "%s %s: object exists", verb, SHOW(key, show)),
			    SR_STORE_EXISTS;
		return SR_STORE_OK;
	}
	if (mode == SR_PUT_MATCH &&
	    (rc = match_check(fs, verb, key, if_match, err)) == SR_STORE_PRECONDITION)
		return rc;
	return SR_STORE_OK;
}

/* Publish the finished temp file as key; the temp file is gone afterwards
 * whatever happened. */
static int
publish(struct fstore *fs, struct fwriter *w, const char *verb, const char *key,
    enum sr_put_mode mode, const char *if_match, char *err)
{
	char show[SR_KEY_SHOW_MAX];
	int lock, rc = SR_STORE_OK, sync = !w->defer_flush;
	struct stat sb;

	if ((lock = lock_store(fs, LOCK_EX, err)) == -1) {
		writer_discard(fs, w);
		return sr_err_prefix(err, "%s %s", verb, SHOW(key, show));
	}
	/* Closed (dropping its flock) only now that the sweep cannot run. */
	rc = close(w->fd);
	w->fd = -1;
	if (rc == -1) {
		rc = sr_errno(err, "%s %s: close %s/%s", verb, SHOW(key, show), fs->root, w->tmp);
		goto out;
	}
	if (make_parents(fs, key, err) == -1) {
		if (errno == ENOTDIR)
			publish_error(fs, verb, key, ENOTDIR, err);
		else
			sr_err_prefix(err, "%s %s", verb, SHOW(key, show));
		rc = SR_STORE_ERROR;
		goto out;
	}
	switch (mode) {
	case SR_PUT_CREATE:
		if (linkat(fs->rootfd, w->tmp, fs->rootfd, key, 0) == -1) {
			if (errno == EEXIST && fstatat(fs->rootfd, key, &sb,
			    AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(sb.st_mode)) {
				sr_err(err, "%s %s: object exists", verb, SHOW(key, show));
				rc = SR_STORE_EXISTS;
			} else
				rc = publish_error(fs, verb, key, errno, err);
		}
		break;
	case SR_PUT_MATCH:
		if ((rc = match_check(fs, verb, key, if_match, err)) != SR_STORE_OK)
			break;
		/* FALLTHROUGH */
	case SR_PUT_OVERWRITE:
		if (renameat(fs->rootfd, w->tmp, fs->rootfd, key) == -1)
			rc = publish_error(fs, verb, key, errno, err);
		else
			w->tmp[0] = '\0';	/* it is the object now */
		break;
	}
out:
	writer_discard(fs, w);
	unlock_store(lock);
	/* The object is published already: a failure here is not reported. */
	if (rc == SR_STORE_OK && sync)
		(void)sync_parent(fs, key);
	return rc;
}

static int
file_put(struct sr_store *st, const char *key, const void *buf, size_t len,
    enum sr_put_mode mode, const char *if_match, char *etag_out, char *err)
{
	struct fstore *fs = fs_of(st);
	struct fwriter w;
	char etag[ETAG_LEN + 1];
	int rc;

	if (check_reserved("put", key, err) == -1)
		return SR_STORE_ERROR;
	if ((rc = refused_now(fs, "put", key, mode, if_match, err)) != SR_STORE_OK)
		return rc;
	if (writer_open(fs, "put", key, 0, &w, err) == -1)
		return SR_STORE_ERROR;
	if (writer_write(fs, &w, buf, len, "put", key, err) == -1 ||
	    writer_finish(fs, &w, etag, "put", key, err) == -1) {
		writer_discard(fs, &w);
		return SR_STORE_ERROR;
	}
	rc = publish(fs, &w, "put", key, mode, if_match, err);
	if (rc == SR_STORE_OK && etag_out != NULL)
		strlcpy(etag_out, etag, SR_ETAG_MAX);
	return rc;
}

/* ---- reading ---- */

static int
file_get(struct sr_store *st, const char *key, size_t max, void **bufp, size_t *lenp,
    char *etag_out, char *err)
{
	struct fstore *fs = fs_of(st);
	char show[SR_KEY_SHOW_MAX], etag[ETAG_LEN + 1];
	struct stat sb;
	uint8_t *buf;
	size_t size;
	int fd, rc;

	if (check_reserved("get", key, err) == -1)
		return SR_STORE_ERROR;
	if ((rc = open_object(fs, "get", key, &fd, &sb, err)) != SR_STORE_OK)
		return rc;
	if ((uint64_t)sb.st_size > max) {
		close(fd);
		return sr_err(err, "get %s: %llu bytes, more than the %zu allowed",
		    SHOW(key, show), (unsigned long long)sb.st_size, max);
	}
	size = (size_t)sb.st_size;
	if ((buf = sr_try_malloc(size + 1, err)) == NULL) {
		close(fd);
		return sr_err_prefix(err, "get %s", SHOW(key, show));
	}
	if (pread_all(fd, buf, size, 0) == -1) {
		sr_errno(err, "get %s: read %s/%s", SHOW(key, show), fs->root, key);
		close(fd);
		free(buf);
		return SR_STORE_ERROR;
	}
	buf[size] = '\0';
	if (etag_out != NULL) {
		if (sb.st_size > CONTENT_ETAG_MAX)
			rc = etag_of_identity(&sb, etag, err);
		else if (etag_cached(fd, &sb, etag) == -1)
			rc = etag_of_buf(buf, size, etag, err);
		if (rc != 0) {
			close(fd);
			free(buf);
			return sr_err_prefix(err, "get %s", SHOW(key, show));
		}
		strlcpy(etag_out, etag, SR_ETAG_MAX);
	}
	close(fd);
	*bufp = buf;
	if (lenp != NULL)
		*lenp = size;
	return SR_STORE_OK;
}

/*
 * Read the whole blocks of a large range at an aligned offset into aligned
 * memory with O_DIRECT; returns how many bytes that read (0: none, the
 * caller reads everything through the page cache). A restore reads each
 * chunk once: the page cache would only be filled to be copied out and
 * dropped, and on the benchmark VM filling it cost more than the decoding.
 */
static size_t
read_direct(int fd, void *buf, size_t len, uint64_t off)
{
	struct statx sx;
	size_t n;
	int fl, rc;

	if (len < DIRECT_MIN || statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == -1 ||
	    !(sx.stx_mask & STATX_DIOALIGN) || sx.stx_dio_offset_align == 0 ||
	    sx.stx_dio_mem_align == 0 || off % sx.stx_dio_offset_align != 0 ||
	    (uintptr_t)buf % sx.stx_dio_mem_align != 0)
		return 0;
	n = len / sx.stx_dio_offset_align * sx.stx_dio_offset_align;
	if ((fl = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, fl | O_DIRECT) == -1)
		return 0;
	rc = pread_all(fd, buf, n, off);
	(void)fcntl(fd, F_SETFL, fl);
	return rc == 0 ? n : 0;
}

static int
file_read_range(struct sr_store *st, const char *key, uint64_t off, size_t len, void *buf,
    char *err)
{
	struct fstore *fs = fs_of(st);
	char show[SR_KEY_SHOW_MAX];
	struct stat sb;
	size_t done;
	int fd, rc;

	if (check_reserved("read", key, err) == -1)
		return SR_STORE_ERROR;
	if ((rc = open_object(fs, "read", key, &fd, &sb, err)) != SR_STORE_OK)
		return rc;
	if (off > (uint64_t)sb.st_size || len > (uint64_t)sb.st_size - off) {
		close(fd);
		return sr_err(err, "read %s: bytes %llu..%llu asked, past the end of the "
		    "object (%llu bytes)", SHOW(key, show), (unsigned long long)off,
		    (unsigned long long)(off + len), (unsigned long long)sb.st_size);
	}
	done = read_direct(fd, buf, len, off);
	if (pread_all(fd, (uint8_t *)buf + done, len - done, off + done) == -1) {
		sr_errno(err, "read %s: read %s/%s", SHOW(key, show), fs->root, key);
		close(fd);
		return SR_STORE_ERROR;
	}
	close(fd);
	return SR_STORE_OK;
}

/* Fill info for the open object fd. */
static int
describe(int fd, const struct stat *sb, const char *key, struct sr_object_info *info,
    const char *verb, char *err)
{
	memset(info, 0, sizeof *info);
	info->key = key;
	info->size = (uint64_t)sb->st_size;
	info->mtime = (double)sb->st_mtim.tv_sec + sb->st_mtim.tv_nsec / 1e9;
	return etag_of_fd(fd, sb, info->etag, verb, key, err);
}

static int
file_head(struct sr_store *st, const char *key, struct sr_object_info *info, char *err)
{
	struct fstore *fs = fs_of(st);
	struct stat sb;
	int fd, rc;

	if (check_reserved("head", key, err) == -1)
		return SR_STORE_ERROR;
	if ((rc = open_object(fs, "head", key, &fd, &sb, err)) != SR_STORE_OK)
		return rc;
	rc = describe(fd, &sb, key, info, "head", err);
	close(fd);
	return rc;
}

/* ---- listing ---- */

struct keyvec {
	char **v;
	size_t n, cap;
};

/* Add key (kv's from now on; freed here when it cannot be added): 0, or
 * -1 with err. */
static int
keyvec_add(struct keyvec *kv, char *key, char *err)
{
	if (kv->n == kv->cap) {
		size_t cap = kv->cap ? kv->cap * 2 : 64;
		char **v = sr_try_reallocarray(kv->v, cap, sizeof *kv->v, err);

		if (v == NULL) {
			free(key);
			return -1;
		}
		kv->v = v;
		kv->cap = cap;
	}
	kv->v[kv->n++] = key;
	return 0;
}

static int
keycmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Collect the keys under directory dir (a key prefix ending in '/', or ""
 * for the root), open as dfd. At the top, only names starting with part
 * (the partial last segment of the prefix) are taken.
 */
static int
walk(struct fstore *fs, int dfd, const char *dir, const char *part, struct keyvec *kv,
    char *err)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	size_t plen = strlen(part);
	int rc = 0;

	if (d == NULL) {
		if (errno == ENOMEM)	/* the C library's buffer for it */
			sr_err_oom(err, "list: open directory");
		else
			sr_errno(err, "list %s: open directory %s/%s", dir, fs->root, dir);
		close(dfd);
		return -1;
	}
	while (rc == 0 && (errno = 0, de = readdir(d)) != NULL) {
		const char *name = de->d_name;
		struct stat sb;
		char *key;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (dir[0] == '\0' && strcmp(name, TMP_DIR) == 0)
			continue;
		if (strncmp(name, part, plen) != 0)
			continue;
		/* symlinks to files count, to directories not (no loops) */
		if (fstatat(dirfd(d), name, &sb, 0) == -1)
			continue;	/* deleted meanwhile, or a dangling link */
		if ((key = sr_try_asprintf(err, "%s%s", dir, name)) == NULL) {
			rc = sr_err_prefix(err, "list %s", dir);
			break;
		}
		if (S_ISREG(sb.st_mode)) {
			if (keyvec_add(kv, key, err) == -1)
				rc = sr_err_prefix(err, "list %s", dir);
			continue;
		}
		if (S_ISDIR(sb.st_mode) && fstatat(dirfd(d), name, &sb,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode)) {
			char *subdir = sr_try_asprintf(err, "%s/", key);
			int sub;

			if (subdir == NULL) {
				free(key);
				rc = sr_err_prefix(err, "list %s", dir);
				break;
			}
			sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (sub != -1)
				rc = walk(fs, sub, subdir, "", kv, err);
			else if (errno != ENOENT)
				rc = sr_errno(err, "list %s: open directory %s/%s", subdir,
				    fs->root, subdir);
			free(subdir);
		}
		free(key);
	}
	if (rc == 0 && errno != 0)
		rc = sr_errno(err, "list %s: read directory %s/%s", dir, fs->root, dir);
	closedir(d);
	return rc;
}

static int
file_list(struct sr_store *st, const char *prefix,
    int (*fn)(const struct sr_object_info *info, void *arg), void *arg, char *err)
{
	struct fstore *fs = fs_of(st);
	const char *slash = strrchr(prefix, '/');
	char *dir = sr_try_strndup(prefix, slash != NULL ? (size_t)(slash - prefix + 1) : 0, err);
	const char *part = slash != NULL ? slash + 1 : prefix;
	struct keyvec kv = { NULL, 0, 0 };
	size_t i;
	int dfd, rc = 0;

	if (dir == NULL)
		return sr_err_prefix(err, "list %s", prefix);
	if (strncmp(dir, TMP_DIR "/", strlen(TMP_DIR) + 1) == 0) {
		free(dir);
		return 0;	/* the temp area holds no objects */
	}
	dfd = openat(fs->rootfd, dir[0] != '\0' ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd == -1) {
		if (errno != ENOENT && errno != ENOTDIR)
			rc = sr_errno(err, "list %s: open directory %s/%s", prefix, fs->root,
			    dir);
		free(dir);
		return rc;	/* no such prefix: no objects */
	}
	rc = walk(fs, dfd, dir, part, &kv, err);
	if (rc == 0 && kv.n > 1)
		sr_sort(kv.v, kv.n, sizeof *kv.v, keycmp);
	for (i = 0; rc == 0 && i < kv.n; i++) {
		struct sr_object_info info;
		struct stat sb;
		char ignored[SR_ERRMAX];
		int fd;

		/* an object deleted since the walk is simply not listed */
		if (open_object(fs, "list", kv.v[i], &fd, &sb, ignored) != SR_STORE_OK)
			continue;
		rc = describe(fd, &sb, kv.v[i], &info, "list", err);
		close(fd);
		if (rc == 0)
			rc = fn(&info, arg);
	}
	for (i = 0; i < kv.n; i++)
		free(kv.v[i]);
	free(kv.v);
	free(dir);
	return rc;
}

/* ---- deleting ---- */

static int
file_delete(struct sr_store *st, const char *key, char *err)
{
	struct fstore *fs = fs_of(st);
	char show[SR_KEY_SHOW_MAX], dir[SR_KEY_MAX + 1], *slash;
	int lock, rc = SR_STORE_OK;

	if (check_reserved("delete", key, err) == -1)
		return SR_STORE_ERROR;
	if ((lock = lock_store(fs, LOCK_EX, err)) == -1)
		return sr_err_prefix(err, "delete %s", SHOW(key, show));
	if (unlinkat(fs->rootfd, key, 0) == -1 && errno != ENOENT && errno != ENOTDIR &&
	    errno != EISDIR)
		rc = sr_errno(err, "delete %s: remove %s/%s", SHOW(key, show), fs->root, key);
	/* Drop directories the delete left empty, as object storage has none
	 * (no allocation: the object is gone already; keys were checked). */
	strlcpy(dir, key, sizeof dir);
	while (rc == SR_STORE_OK && (slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		if (unlinkat(fs->rootfd, dir, AT_REMOVEDIR) == -1)
			break;
	}
	unlock_store(lock);
	return rc;
}

/* ---- streaming uploads ---- */

static int
file_upload_begin(struct sr_upload *up, char *err)
{
	struct fstore *fs = fs_of(up->st);
	struct fwriter *w;

	if (check_reserved("upload", up->key, err) == -1)
		return -1;
	if ((w = sr_try_malloc(sizeof *w, err)) == NULL) {
		char show[SR_KEY_SHOW_MAX];

		return sr_err_prefix(err, "upload %s", SHOW(up->key, show));
	}
	if (writer_open(fs, "upload", up->key, 1, w, err) == -1) {
		free(w);
		return -1;
	}
	up->priv = w;
	return 0;
}

static int
file_upload_write(struct sr_upload *up, const void *buf, size_t len, char *err)
{
	return writer_write(fs_of(up->st), up->priv, buf, len, "upload", up->key, err);
}

static size_t
file_upload_align(const struct sr_upload *up, size_t *min)
{
	const struct fwriter *w = up->priv;

	if (!w->direct)
		return 0;
	*min = DIRECT_MIN;
	return w->dalign > w->dmem ? w->dalign : w->dmem;
}

static int
file_upload_commit(struct sr_upload *up, char *err)
{
	struct fstore *fs = fs_of(up->st);
	struct fwriter *w = up->priv;
	char etag[ETAG_LEN + 1];
	int rc;

	w->defer_flush = up->defer_flush;
	if (writer_finish(fs, w, etag, "upload", up->key, err) == -1) {
		writer_discard(fs, w);
		rc = SR_STORE_ERROR;
	} else
		rc = publish(fs, w, "upload", up->key, SR_PUT_OVERWRITE, NULL, err);
	free(w);
	up->priv = NULL;
	return rc;
}

/* Whether keys a and b are in the same directory. */
static int
same_parent(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
	size_t la = sa != NULL ? (size_t)(sa - a) : 0, lb = sb != NULL ? (size_t)(sb - b) : 0;

	return la == lb && strncmp(a, b, la) == 0;
}

/* One fsync of a file_flush, on a thread of its own or not. */
struct flush_one {
	size_t key;	/* the key it is, or whose directory it is */
	int dir;	/* 1: that key's directory */
	int fd;
	int errnum;	/* 0, or fsync's errno */
	pthread_t tid;
	int started;
};

/* Synced at once at most: as many threads, and descriptors open. A save
 * of 1 TiB has a thousand packs, and RLIMIT_NOFILE is often 1024. */
#define FLUSH_AT_ONCE 16

static void *
flush_one_main(void *arg)
{
	struct flush_one *f = arg;

	f->errnum = fsync(f->fd) == -1 ? errno : 0;
	return NULL;
}

/* Open and sync f[0..n) all at once, each on a thread of its own (the
 * first, and any no thread could be had for, here): SR_STORE_OK, or the
 * first failure in order with err. */
static int
flush_batch(struct fstore *fs, const char *const *keys, struct flush_one *f, size_t n,
    char *err)
{
	char show[SR_KEY_SHOW_MAX];
	struct stat sb;
	size_t i, nopen;
	int rc = SR_STORE_OK;

	for (nopen = 0; nopen < n; nopen++) {
		const char *key = keys[f[nopen].key];

		if (!f[nopen].dir)
			rc = open_object(fs, "flush", key, &f[nopen].fd, &sb, err);
		else if ((f[nopen].fd = open_parent(fs, key)) == -1)
			rc = sr_errno(err, "flush %s: open its directory in %s", SHOW(key, show),
			    fs->root);
		if (rc != SR_STORE_OK)
			break;
	}
	for (i = 1; rc == SR_STORE_OK && i < n; i++)
		f[i].started = pthread_create(&f[i].tid, NULL, flush_one_main, &f[i]) == 0;
	for (i = 0; rc == SR_STORE_OK && i < n; i++)
		if (!f[i].started)
			(void)flush_one_main(&f[i]);
	for (i = 0; i < nopen; i++) {
		if (f[i].started)
			pthread_join(f[i].tid, NULL);
		close(f[i].fd);
	}
	for (i = 0; rc == SR_STORE_OK && i < n; i++) {
		const char *key = keys[f[i].key];

		if (f[i].errnum == 0)
			continue;
		errno = f[i].errnum;
		rc = f[i].dir ? sr_errno(err, "flush %s: sync its directory in %s",
		    SHOW(key, show), fs->root) : sr_errno(err, "flush %s: sync %s/%s",
		    SHOW(key, show), fs->root, key);
	}
	return rc;
}

/* Uploads committed with their flush deferred made durable: each file's
 * bytes (a tail that went through the page cache among them) and size,
 * and each directory that holds one of them, once, synced FLUSH_AT_ONCE
 * at a time. Every fsync is a flush of the disk, and beside another
 * writer each costs what that writer left in the disk's cache, up to
 * 0.2 s (doc/benchmarks.md); the block layer serves flushes that wait
 * together with one, so they are issued together rather than one after
 * another. */
static int
file_flush(struct sr_store *st, const char *const *keys, size_t n, char *err)
{
	struct fstore *fs = fs_of(st);
	char show[SR_KEY_SHOW_MAX];
	struct flush_one *f;
	size_t i, j, nf = 0;
	int rc = SR_STORE_OK;

	if (n == 0)
		return SR_STORE_OK;
	if ((f = sr_try_calloc(2 * n, sizeof *f, err)) == NULL)
		return sr_err_prefix(err, "flush %s", SHOW(keys[0], show));
	for (i = 0; i < n; i++)
		f[nf++] = (struct flush_one){ .key = i };
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && !same_parent(keys[i], keys[j]); j++)
			;
		if (j == i)
			f[nf++] = (struct flush_one){ .key = i, .dir = 1 };
	}
	for (i = 0; i < nf && rc == SR_STORE_OK; i += FLUSH_AT_ONCE)
		rc = flush_batch(fs, keys, f + i, nf - i < FLUSH_AT_ONCE ? nf - i : FLUSH_AT_ONCE,
		    err);
	free(f);
	return rc;
}

static void
file_upload_abort(struct sr_upload *up)
{
	writer_discard(fs_of(up->st), up->priv);
	free(up->priv);
	up->priv = NULL;
}

/* ---- opening ---- */

/* The directory of a file URL's rest ("/abs/dir" or "localhost/abs/dir"),
 * percent-decoded, without trailing slashes, into path (strlen(rest) + 1
 * bytes); -1 if it is not one. */
static int
url_path(const char *rest, char *path)
{
	char *o = path;
	const char *s;

	if (strncmp(rest, "localhost/", 10) == 0)
		rest += 9;
	if (rest[0] != '/')
		return -1;
	for (s = rest; *s != '\0'; s++) {
		if (*s == '%') {
			int hi = sr_hexval(s[1]), lo = hi < 0 ? -1 : sr_hexval(s[2]);

			if (lo < 0 || (hi == 0 && lo == 0))
				return -1;
			*o++ = (char)(hi * 16 + lo);
			s += 2;
		} else
			*o++ = *s;
	}
	while (o > path + 1 && o[-1] == '/')
		o--;
	*o = '\0';
	return 0;
}

/* A file URL's rest: an absolute directory (url_path). */
static int
file_check(const char *rest, char *err)
{
	char *path = sr_try_malloc(strlen(rest) + 1, err);
	int r;

	if (path == NULL)
		return sr_err_prefix(err, "open store file://%s", rest);
	r = url_path(rest, path);
	free(path);
	if (r == -1)
		return sr_err(err, "open store file://%s: a file URL takes an absolute path and "
		    "no host (file:///absolute/path)", rest);
	return 0;
}

/*
 * Remove the temp files of writers that died (a save killed mid-upload
 * leaves its pack's), at open; best effort. A temp file whose writer lives
 * is never removed, whatever its age and wherever the writer runs (another
 * process, machine or pid namespace on a shared directory): the writer
 * holds a flock on it from its creation (under the store's shared lock,
 * while this holds it exclusively) to its publish. So a temp file whose
 * flock can be taken has no writer left and goes at once. Where flock
 * does not work (a file system without it, an NFS mount that refuses a
 * lock on a read-only descriptor) and for the unlocked temp files of
 * older versions, only those over a day old go.
 */
static void
sweep_tmp(struct fstore *fs)
{
	double now = sr_now();
	char ignored[SR_ERRMAX];
	struct dirent *de;
	struct stat sb;
	size_t n, sfx = strlen(LOCKED_TMP);
	int dfd, lock, fd, dead;
	DIR *d;

	if (faccessat(fs->rootfd, TMP_DIR, F_OK, AT_SYMLINK_NOFOLLOW) == -1)
		return;		/* nothing written yet: leave the store as it is */
	if ((lock = lock_store(fs, LOCK_EX, ignored)) == -1)
		return;		/* a store we cannot write: nothing we could remove */
	dfd = openat(fs->rootfd, TMP_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd == -1 || (d = fdopendir(dfd)) == NULL) {
		if (dfd != -1)
			close(dfd);
		unlock_store(lock);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "lock") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISREG(sb.st_mode))
			continue;
		dead = now - (double)sb.st_mtime > STALE_TMP_SECONDS;
		n = strlen(de->d_name);
		if (n > sfx && strcmp(de->d_name + n - sfx, LOCKED_TMP) == 0 &&
		    (fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC)) != -1) {
			if (flock(fd, LOCK_EX | LOCK_NB) == 0)
				dead = 1;
			else if (errno == EWOULDBLOCK)
				dead = 0;	/* its writer is alive */
			close(fd);
		}
		if (dead)
			(void)unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
	unlock_store(lock);
}

static int
file_open(struct sr_store *st, const char *rest, char *err)
{
	struct fstore *fs;
	char *path = sr_try_malloc(strlen(rest) + 1, err);

	if (path == NULL)
		return sr_err_prefix(err, "open store %s", st->url);
	if (url_path(rest, path) == -1) {
		free(path);
		return sr_err(err, "open store %s: a file URL names an absolute directory: "
		    "file:///path/to/dir", st->url);
	}
	if (sr_mkdirs(path, 0777, err) == -1) {
		free(path);
		return sr_err_prefix(err, "open store %s", st->url);
	}
	if ((fs = sr_try_calloc(1, sizeof *fs, err)) == NULL) {
		free(path);
		return sr_err_prefix(err, "open store %s", st->url);
	}
	fs->root = path;
	fs->rootfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fs->rootfd == -1) {
		sr_errno(err, "open store %s: open %s", st->url, path);
		free(path);
		free(fs);
		return -1;
	}
	st->priv = fs;
	sweep_tmp(fs);
	return 0;
}

static void
file_close(struct sr_store *st)
{
	struct fstore *fs = fs_of(st);

	close(fs->rootfd);
	free(fs->root);
	free(fs);
}

/* Four whole-chunk reads at once, not the default two: a virtio disk
 * with 4 KiB blocks read a 812 MiB pack with O_DIRECT in 4 MiB pieces at
 * 1.3 GB/s one at a time and 1.6 GB/s eight at a time, and the 1 GiB
 * restore, which waits on these reads, took 0.72 s at four against
 * 0.80-0.86 s at two (medians of 5, doc/benchmarks.md). Memory stays
 * within the restore's budget: it sizes its slots to the plan. */
static void
file_read_plan(const struct sr_store *st, int *streams, uint64_t *piece)
{
	(void)st;
	*streams = 4;
	*piece = 0;
}

const struct sr_store_backend sr_store_file_backend = {
	.scheme = "file",
	.form = "/absolute/path",
	.local = 1,
	.check = file_check,
	.open = file_open,
	.close = file_close,
	.put = file_put,
	.get = file_get,
	.read_range = file_read_range,
	.read_plan = file_read_plan,
	.head = file_head,
	.list = file_list,
	.del = file_delete,
	.upload_begin = file_upload_begin,
	.upload_write = file_upload_write,
	.upload_align = file_upload_align,
	.upload_commit = file_upload_commit,
	.flush = file_flush,
	.upload_abort = file_upload_abort,
};
