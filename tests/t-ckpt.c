/*
 * t-ckpt.c: directory checkpoints end to end on a file:// store: save and
 * restore round trips (byte-exact, with modes, mtimes, symlinks, empty dirs
 * and files), the pack format as tar(1) and zstd(1) see it, content
 * addressing, deadlines and cancellation, fallback past corrupt and missing
 * chunks, crashes at each fault point, retention and gc, listing, 16
 * concurrent writers of one job, and the memory bound of a save.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <xxhash.h>

#include "tap.h"
#include "nofsync.h"
#include "ckpt-util.h"
#include "ckpt-store-util.h"

#include "byteplane.h"
#include "catalog.h"
#include "ckpt.h"
#include "codec.h"
#include "jobkeys.h"
#include "manifest.h"
#include "pack.h"
#include "store.h"
#include "util.h"

#define MiB ((size_t)1 << 20)

static char *top;		/* everything of this run lives below */
static char *storedir;
static struct sr_store *st;
static struct tu_log lg;

static void
opts_init(struct sr_ckpt_opts *o, const char *job)
{
	tu_opts(o, job, MiB, 2, &lg);
}

/* A new directory below top. */
static char *
newdir(const char *name)
{
	char *p = tu_path(top, name);

	if (mkdir(p, 0755) == -1)
		sr_fatal("mkdir %s: %s", p, strerror(errno));
	return p;
}

/* Contents of a store object as a string ("" if missing). */
static char *
store_text(const char *key)
{
	return tu_store_text(st, key);
}

/* The file backing a store key. */
static char *
store_file(const char *key)
{
	return tu_path(storedir, key);
}

static int
load(const char *job, uint64_t seq, struct sr_manifest *m)
{
	char err[SR_ERRMAX];
	int rc = sr_catalog_load(st, job, seq, m, err);

	if (rc != 0)
		printf("# load %s %" PRIu64 ": %s\n", job, seq, err);
	return rc;
}

static int
save(const char *job, const char *dir, long long step, struct sr_ckpt_stats *s)
{
	struct sr_ckpt_opts o;
	char err[SR_ERRMAX] = "";
	int rc;

	opts_init(&o, job);
	rc = sr_ckpt_save(st, &o, dir, step, s, err);
	if (rc != 0)
		printf("# save %s: %s\n", job, err);
	return rc;
}

/* gc of job keeping keep, with gc's grace period (seconds; < 0: none). */
static int
gc_grace(const char *job, int keep, double grace, uint64_t *freed, char *err)
{
	struct sr_ckpt_opts o;

	opts_init(&o, job);
	o.gc_grace = grace;
	return sr_ckpt_gc_log(st, &o, job, keep, sr_now() - 86400, freed, err);
}

static int
restore(const char *job, const char *dir, struct sr_ckpt_stats *s, char *err)
{
	struct sr_ckpt_opts o;

	opts_init(&o, job);
	return sr_ckpt_restore(st, &o, dir, s, err);
}

static int
same_tree(const char *a, const char *b)
{
	char why[1024] = "";

	if (tu_tree_cmp(a, b, "", why, sizeof why) == 0)
		return 1;
	printf("# trees differ: %s\n", why);
	return 0;
}

/* bf16 values ~ N(0, 0.02), like model weights: the codec picks planes. */
static void
fill_bf16(uint8_t *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed + 88172645463325252ULL;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		double u1, u2, g;
		float f;
		uint32_t bits;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		u1 = ((x >> 11) + 1.0) / 9007199254740993.0;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		u2 = (x >> 11) / 9007199254740992.0;
		g = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2) * 0.02;
		f = (float)g;
		memcpy(&bits, &f, 4);
		buf[i] = (uint8_t)(bits >> 16);
		buf[i + 1] = (uint8_t)(bits >> 24);
	}
}

/* ---- round trip ---- */

static void
make_tree(const char *src)
{
	uint8_t *buf = sr_malloc(3 * MiB);
	char *text = sr_malloc(5 * MiB / 2 + 64), *p;
	size_t n = 0;
	int i = 0;

	tu_mkdir(src, "d1", 0755);
	tu_mkdir(src, "d1/d2", 0700);
	tu_write(src, "d1/d2/deep.txt", "deep\n", 5);
	tu_chmod(src, "d1/d2/deep.txt", 0600);
	tu_mkdir(src, "empty-dir", 0755);
	tu_mkdir(src, "ro-dir", 0755);
	tu_write(src, "ro-dir/f", "read-only\n", 10);
	tu_chmod(src, "ro-dir/f", 0444);
	tu_chmod(src, "ro-dir", 0555);
	tu_write(src, "empty-file", "", 0);
	tu_write_noise(src, "big.bin", 3 * MiB + MiB / 2, 7);
	while (n < 5 * MiB / 2) {
		int k = snprintf(text + n, 64, "line %d of a compressible text file\n", i++);
		n += (size_t)k;
	}
	tu_write(src, "text.txt", text, 5 * MiB / 2);
	fill_bf16(buf, MiB, 3);
	tu_write(src, "floats.bf16", buf, MiB);
	tu_write(src, "name with spaces \xc3\xa9", "x", 1);
	tu_write(src, "exec", "#!/bin/sh\n", 10);
	tu_chmod(src, "exec", 04755);
	tu_symlink(src, "link-file", "d1/d2/deep.txt");
	tu_symlink(src, "d1/link-up", "../text.txt");
	tu_symlink(src, "link-dir", "d1");
	tu_symlink(src, "dangling", "nope/nothing");
	/* mtimes with nanoseconds, directories after their content */
	tu_mtime(src, "d1/d2/deep.txt", 1600000000, 123456789);
	tu_mtime(src, "ro-dir/f", 1600000001, 1);
	tu_mtime(src, "empty-file", 1600000002, 999999999);
	tu_mtime(src, "big.bin", 1600000003, 5);
	tu_mtime(src, "link-file", 1600000004, 44);
	tu_mtime(src, "d1/link-up", 1600000005, 55);
	tu_mtime(src, "d1/d2", 1500000000, 7);
	tu_mtime(src, "d1", 1500000001, 8);
	tu_mtime(src, "empty-dir", 1500000002, 9);
	tu_mtime(src, "ro-dir", 1500000003, 10);
	p = tu_path(src, "fifo");
	if (mkfifo(p, 0644) == -1)
		sr_fatal("mkfifo: %s", strerror(errno));
	free(p);
	tu_symlink(src, "abs-link", "/etc/passwd");
	tu_symlink(src, "out-link", "d1/../../outside");
	free(buf);
	free(text);
}

/* Remove what a save skips, so that the tree equals the restored one. */
static void
drop_skipped(const char *src)
{
	const char *names[] = { "fifo", "abs-link", "out-link" };
	size_t i;

	for (i = 0; i < SR_ARRAY_LEN(names); i++) {
		char *p = tu_path(src, names[i]);
		unlink(p);
		free(p);
	}
}

static void
test_roundtrip(void)
{
	char *src = newdir("rt-src"), *dst = tu_path(top, "rt-dst"), *dst2, *p;
	struct sr_ckpt_stats s, r;
	char err[SR_ERRMAX] = "", *latest;

	make_tree(src);
	tu_log_clear(&lg);
	memset(&s, 0, sizeof s);
	is_int(save("rt", src, 42, &s), 0, "round trip: save");
	ok(tu_log_has(&lg, "warning: skipping \"fifo\": a FIFO"), "the FIFO is skipped with a warning");
	ok(tu_log_has(&lg, "warning: skipping symlink \"abs-link\" -> \"/etc/passwd\": absolute target"
	    " (a restore refuses links out of the directory)"), "an absolute symlink is skipped");
	ok(tu_log_has(&lg, "warning: skipping symlink \"out-link\" -> \"d1/../../outside\": target"
	    " escapes the directory (a restore refuses links out of the directory)"),
	    "an escaping symlink is skipped");
	is_int(s.seq, 0, "first checkpoint is seq 0");
	is_int(s.step, 42, "step recorded");
	is_int(s.files, 8, "8 files");
	is_int(s.chunks, 4 + 3 + 1 + 4, "12 chunks (1 MiB each at most)");
	is_int(s.raw_bytes, 3 * MiB + MiB / 2 + 5 * MiB / 2 + MiB + 5 + 10 + 1 + 10, "raw bytes");
	is_int(s.reused_chunks, 0, "nothing reused in the first checkpoint");
	ok(s.new_bytes == s.stored_bytes && s.stored_bytes < s.raw_bytes, "stored %" PRIu64
	    " < raw %" PRIu64, s.stored_bytes, s.raw_bytes);
	latest = store_text("rt/LATEST");
	is_str(latest, "0\n", "LATEST holds the seq");
	free(latest);
	drop_skipped(src);

	memset(&r, 0, sizeof r);
	tu_log_clear(&lg);
	is_int(restore("rt", dst, &r, err), 0, "restore into a new directory %s", err);
	ok(lg.n == 1 && strcmp(lg.lines[0], "warning: checkpoint 0: \"exec\" has mode 04755: "
	    "restored as 0755; a restore never sets setuid or setgid (nor sticky on files)") == 0,
	    "the setuid bit of \"exec\" is not restored, and that is said");
	tu_chmod(src, "exec", 0755);
	ok(same_tree(src, dst), "restored tree equals the source: bytes, modes, mtimes, links");
	is_int(r.seq, 0, "restore stats: seq");
	is_int(r.step, 42, "restore stats: step");
	is_int(r.files, 8, "restore stats: files");
	tu_write(dst, "junk", "junk", 4);
	tu_chmod(dst, "d1", 0700);
	is_int(restore("rt", dst, &r, err), 0, "restore over an existing directory %s", err);
	ok(same_tree(src, dst), "the old contents are replaced");
	p = tu_ls(top);
	ok(strstr(p, ".restore.") == NULL && strstr(p, ".old.") == NULL, "no staging left: %s", p);
	free(p);
	dst2 = tu_path(top, "rt-new/sub/dst");
	is_int(restore("rt", dst2, &r, err), 0, "restore where the parent does not exist %s", err);
	ok(same_tree(src, dst2), "and the tree is there");
	free(dst2);
	free(src);
	free(dst);
}

/* ---- modes: setuid and setgid never restored ---- */

/*
 * Save a tree with special modes through a store under dir and restore it;
 * the modes the save recorded and those restored, and what the restore
 * said, as one line. The same whoever runs it (root, or nobody).
 */
static char *
modes_summary(const char *dir)
{
	static const char *const names[] = { "a-suid", "b-sgid", "c-sticky", "d-world",
	    "e-dir", "f-dir", "e-dir/g-suid" };
	char *src = tu_path(dir, "src"), *dst = tu_path(dir, "dst"), *url, *out, *p, *tmp;
	char err[SR_ERRMAX] = "";
	struct sr_store *ms;
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	struct sr_manifest m;
	struct tu_log ml = { 0 };
	struct stat sb;
	size_t i;

	url = sr_asprintf("file://%s/store", dir);
	if (sr_store_open(url, &ms, err) != 0)
		return sr_asprintf("open: %s", err);
	mkdir(src, 0755);
	tu_write(src, "a-suid", "#!/bin/sh\n", 10);
	tu_chmod(src, "a-suid", 06777);
	tu_write(src, "b-sgid", "x", 1);
	tu_chmod(src, "b-sgid", 02755);
	tu_write(src, "c-sticky", "x", 1);
	tu_chmod(src, "c-sticky", 01644);
	tu_write(src, "d-world", "x", 1);
	tu_chmod(src, "d-world", 0666);
	tu_mkdir(src, "e-dir", 0755);
	tu_write(src, "e-dir/g-suid", "x", 1);
	tu_chmod(src, "e-dir/g-suid", 04700);
	tu_chmod(src, "e-dir", 03777);
	tu_mkdir(src, "f-dir", 0777);
	memset(&o, 0, sizeof o);
	o.job = "modes";
	o.log = tu_log_fn;
	o.log_arg = &ml;
	if (sr_ckpt_save(ms, &o, src, 1, &s, err) != 0 ||
	    sr_catalog_load(ms, "modes", s.seq, &m, err) != 0)
		return sr_asprintf("save: %s", err);
	out = sr_strdup("saved");
	for (i = 0; i < m.nentries; i++) {
		tmp = sr_asprintf("%s %s:%o", out, m.entries[i].path, m.entries[i].mode);
		free(out);
		out = tmp;
	}
	sr_manifest_free(&m);
	tu_log_clear(&ml);
	if (sr_ckpt_restore(ms, &o, dst, &s, err) != 0)
		return sr_asprintf("restore: %s", err);
	tmp = sr_asprintf("%s | restored", out);
	free(out);
	out = tmp;
	for (i = 0; i < SR_ARRAY_LEN(names); i++) {
		p = tu_path(dst, names[i]);
		tmp = lstat(p, &sb) == 0 ? sr_asprintf("%s %s:%o", out, names[i], sb.st_mode & 07777) :
		    sr_asprintf("%s %s:missing", out, names[i]);
		free(out);
		out = tmp;
		free(p);
	}
	for (i = 0; i < ml.n; i++) {
		tmp = sr_asprintf("%s | %s", out, ml.lines[i]);
		free(out);
		out = tmp;
	}
	tu_log_clear(&ml);
	free(ml.lines);
	sr_store_close(ms);
	free(url);
	free(src);
	free(dst);
	return out;
}

static void
test_modes(void)
{
	static const char want[] = "saved a-suid:6777 b-sgid:2755 c-sticky:1644 d-world:666 "
	    "e-dir:3777 e-dir/g-suid:4700 f-dir:777"
	    " | restored a-suid:777 b-sgid:755 c-sticky:644 d-world:666 e-dir:1777 f-dir:777"
	    " e-dir/g-suid:700"
	    " | warning: checkpoint 0: \"a-suid\" has mode 06777: restored as 0777 (and 4 more"
	    " entries); a restore never sets setuid or setgid (nor sticky on files)";
	char *dir = tu_path(top, "modes"), *got;
	int fds[2], status;
	pid_t pid;

	mkdir(dir, 0755);
	got = modes_summary(dir);
	is_str(got, want, "setuid, setgid (and sticky on files) are recorded but never restored"
	    " (uid %d), said once", (int)getuid());
	free(got);
	tu_rmtree(dir);
	if (getuid() != 0) {
		ok(1, "# SKIP the same as another user: needs root to become nobody");
		free(dir);
		return;
	}
	/* as an unprivileged user too: what nobody restores for itself, in a
	 * directory of its own (top is root's, mode 0700) */
	free(dir);
	dir = tu_tmpdir("t-ckpt-nobody");
	if (chown(dir, 65534, 65534) == -1 || pipe(fds) == -1)
		sr_fatal("chown %s: %s", dir, strerror(errno));
	fflush(stdout);
	if ((pid = fork()) == 0) {
		close(fds[0]);
		if (setgroups(0, NULL) == -1 || setgid(65534) == -1 || setuid(65534) == -1)
			got = sr_asprintf("cannot become nobody: %s", strerror(errno));
		else
			got = modes_summary(dir);
		(void)!write(fds[1], got, strlen(got));
		_exit(0);
	}
	close(fds[1]);
	{
		char buf[2048];
		size_t n = 0;
		ssize_t k;

		while (n < sizeof buf - 1 && (k = read(fds[0], buf + n, sizeof buf - 1 - n)) > 0)
			n += (size_t)k;
		buf[n] = '\0';
		close(fds[0]);
		waitpid(pid, &status, 0);
		is_str(buf, want, "the same as nobody (uid 65534)");
	}
	tu_rmtree(dir);
	free(dir);
}

/* ---- staging directories of killed restores ---- */

/* A pid that no process has now: a child that has exited and been reaped. */
static pid_t
dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

static void
test_staging_sweep(void)
{
	char *src = newdir("sw-src"), *dir = newdir("sw"), *dst = tu_path(dir, "dst");
	char err[SR_ERRMAX] = "", name[64], want[256], *ls, *p;
	struct sr_ckpt_stats s;
	pid_t live, d1 = dead_pid(), d2 = dead_pid(), d3 = dead_pid();
	int lockfd;

	tu_write(src, "f", "x", 1);
	save("sw", src, 1, &s);
	if ((live = fork()) == 0) {
		pause();
		_exit(0);
	}
	snprintf(name, sizeof name, "dst.restore.%d", (int)live);
	tu_mkdir(dir, name, 0700);
	snprintf(name, sizeof name, "dst.restore.%d", (int)d1);
	tu_mkdir(dir, name, 0700);
	snprintf(name, sizeof name, "dst.restore.%d/sub", (int)d1);
	tu_mkdir(dir, name, 0500);
	snprintf(name, sizeof name, "dst.old.%d", (int)d2);
	tu_mkdir(dir, name, 0755);
	/* a dead pid here, but its flock held: a restore in another pid namespace */
	snprintf(name, sizeof name, "dst.restore.%d", (int)d3);
	tu_mkdir(dir, name, 0700);
	p = tu_path(dir, name);
	lockfd = open(p, O_RDONLY | O_DIRECTORY);
	ok(lockfd != -1 && flock(lockfd, LOCK_EX) == 0, "a staging directory flocked by a live one");
	free(p);
	snprintf(name, sizeof name, "other.restore.%d", (int)d1);
	tu_mkdir(dir, name, 0700);
	tu_mkdir(dir, "dst.restore.x1", 0700);

	tu_log_clear(&lg);
	is_int(restore("sw", dst, &s, err), 0, "restore beside leftovers %s", err);
	ls = tu_ls(dir);
	{
		char a[32], b[32];	/* in tu_ls's order: by name */

		snprintf(a, sizeof a, "dst.restore.%d", (int)live);
		snprintf(b, sizeof b, "dst.restore.%d", (int)d3);
		snprintf(want, sizeof want, "dst %s %s dst.restore.x1 other.restore.%d",
		    strcmp(a, b) < 0 ? a : b, strcmp(a, b) < 0 ? b : a, (int)d1);
	}
	is_str(ls, want, "removed: the dead restores' only (live, locked and others' kept)");
	free(ls);
	snprintf(want, sizeof want, "removed %s/sw/dst.restore.%d, left by a restore (pid %d) that "
	    "was killed", top, (int)d1, (int)d1);
	ok(tu_log_has(&lg, want), "the removal of dst.restore.%d is said", (int)d1);
	snprintf(want, sizeof want, "removed %s/sw/dst.old.%d, left by a restore (pid %d) that "
	    "was killed", top, (int)d2, (int)d2);
	ok(tu_log_has(&lg, want), "so is that of dst.old.%d", (int)d2);
	is_int(lg.n, 2, "and nothing else");
	close(lockfd);
	kill(live, SIGKILL);
	waitpid(live, NULL, 0);
	tu_rmtree(dir);
	free(dir);
	free(dst);
	tu_rmtree(src);
	free(src);
}

struct prog {
	int calls, backwards;
	uint64_t done, total;
};

static void
on_progress(void *arg, uint64_t done, uint64_t total)
{
	struct prog *p = arg;

	if (p->calls > 0 && (done < p->done || total != p->total))
		p->backwards++;
	p->calls++;
	p->done = done;
	p->total = total;
}

/* Progress goes forward and ends at the total, once, for save and restore. */
static void
test_progress(void)
{
	char *src = newdir("pg-src"), *dst = tu_path(top, "pg-dst");
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	struct prog p;
	char err[SR_ERRMAX] = "";

	make_tree(src);
	drop_skipped(src);
	opts_init(&o, "pg");
	memset(&p, 0, sizeof p);
	o.progress = on_progress;
	o.progress_arg = &p;
	is_int(sr_ckpt_save(st, &o, src, 1, &s, err), 0, "progress: save");
	ok(p.calls >= 1 && p.backwards == 0, "progress: save reports go forward (%d calls)", p.calls);
	ok(p.done == s.raw_bytes && p.total == s.raw_bytes, "progress: save ends at the raw size "
	    "(%" PRIu64 "/%" PRIu64 ")", p.done, p.total);
	memset(&p, 0, sizeof p);
	is_int(sr_ckpt_restore(st, &o, dst, &s, err), 0, "progress: restore");
	ok(p.calls >= 1 && p.backwards == 0, "progress: restore reports go forward (%d calls)", p.calls);
	ok(p.done == s.raw_bytes && p.total == s.raw_bytes, "progress: restore ends at the raw size "
	    "(%" PRIu64 "/%" PRIu64 ")", p.done, p.total);
	free(src);
	free(dst);
}

/* The threads of this process, as /proc/self/task lists them. */
static int
tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d != NULL && (e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	if (d != NULL)
		closedir(d);
	return n;
}

static void
on_progress_tasks(void *arg, uint64_t done, uint64_t total)
{
	int *most = arg, n = tasks();

	(void)done;
	(void)total;
	if (n > *most)
		*most = n;
}

/* A save of two small files and one of 300 KiB asked for 8 threads starts
 * two workers: the small files share a chunk (doc/format.md, "Slices"),
 * and a worker more than the chunks only starts and stops (a notice's
 * save of a few bytes is on the path to the job's stop); with no_bundles,
 * each file its own chunk, three. Seen from the progress callback, which
 * the save calls after its first chunk, its workers running. */
static void
test_workers_chunks(void)
{
	char *src = newdir("wk-src");
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	char err[SR_ERRMAX] = "";
	int before = tasks(), most = 0;

	tu_write(src, "a.bin", "1234 5678\n", 10);
	tu_write(src, "b.bin", "8765 4321\n", 10);
	tu_write_noise(src, "c.bin", 300 << 10, 5);
	opts_init(&o, "wk");
	o.threads = 8;
	o.progress = on_progress_tasks;
	o.progress_arg = &most;
	is_int(sr_ckpt_save(st, &o, src, 1, &s, err), 0, "workers: save of three files");
	is_int(most - before, 2, "workers: two workers for two chunks (one of two small files), "
	    "though 8 threads were allowed");
	most = 0;
	o.no_bundles = 1;
	is_int(sr_ckpt_save(st, &o, src, 1, &s, err), 0, "workers: again, each file a chunk");
	is_int(most - before, 3, "workers: three workers for three chunks");
	free(src);
}

/* Every chunk, read back by its recorded range, decodes to its id: a
 * whole member, or a slice of one (the small files share one). */
static void
test_pack_format(void)
{
	struct sr_manifest m;
	struct sr_codec *codec = sr_codec_new(1, NULL);
	char *src = tu_path(top, "rt-src"), *cmd, *tmp = tu_path(top, "member.out");
	char err[SR_ERRMAX], hex[65], *packfile, *listing, *want;
	uint8_t id[32];
	size_t e, k, good = 0, total = 0, wlen = 0, xgood = 0, slices = 0;
	int checked_none = 0, checked_plane = 0;

	if (load("rt", 0, &m) != 0) {
		ok(0, "load manifest 0 of rt");
		return;
	}
	is_int(m.npacks, 1, "one pack for a small checkpoint");
	is_int(m.version, 4, "a save with small files that share a chunk writes manifest version 4");
	is_int(m.chunk_id, SR_ID_XXH3, "... whose chunk ids are XXH3-128");
	for (e = 0; e < m.nentries; e++) {
		for (k = 0; k < m.entries[e].nchunks; k++) {
			const struct sr_mchunk *c = &m.entries[e].chunks[k];
			uint8_t *cbuf = sr_malloc(c->clen), *mbuf = sr_malloc(sr_mchunk_mlen(c));
			uint8_t *rbuf = mbuf + c->at;
			total++;
			slices += c->mlen != 0;
			XXH128_canonical_t canon;

			/* the id: XXH3-128 of the raw bytes, the rest of id[] zero */
			if (c->offset % 512 == 0 &&
			    sr_store_read_range(st, c->pack, c->offset, c->clen, cbuf, err) == 0 &&
			    sr_codec_decode(codec, cbuf, c->clen, c->xf, mbuf, sr_mchunk_mlen(c), err)
			    == 0) {
				XXH128_canonicalFromHash(&canon, XXH3_128bits(rbuf, c->rlen));
				memset(id, 0, sizeof id);
				memcpy(id, canon.digest, sizeof canon.digest);
				good += memcmp(id, c->id, 32) == 0;
			}
			/* the recorded XXH3-128 is what xxhsum -H2 prints for the
			 * raw bytes: the canonical (big-endian) form */
			if (c->has_check) {
				char line[128], rec[33];
				tu_write(top, "member.out", rbuf, c->rlen);
				sr_hex_of(c->check, sizeof c->check, rec);
				if (tu_sh_out(line, sizeof line, "xxhsum -H2 '%s' | cut -d' ' -f1",
				    tmp) == 0 && strcmp(line, rec) == 0)
					xgood++;
			}
			free(cbuf);
			free(mbuf);
		}
	}
	is_int(slices, 4, "the four files of a few bytes are slices of one member");
	is_int(good, total, "every chunk's recorded range holds its frames exactly, id = XXH3-128");
	is_int(xgood, total, "every chunk's xxh3 is xxhsum -H2 of its raw bytes");

	/* tar -tf lists exactly the chunk members */
	packfile = store_file(m.packs[0]);
	{
		char line[65536];
		tu_sh_out(line, sizeof line, "tar -tf '%s' | sort | tr '\\n' ' '", packfile);
		listing = sr_strdup(line);
	}
	/* the wanted list: unique ids, sorted (ids are hex: strcmp order); a
	 * shared member is named by its first slice's */
	{
		char **ids = NULL;
		size_t n = 0, i;
		for (e = 0; e < m.nentries; e++) {
			for (k = 0; k < m.entries[e].nchunks; k++) {
				if (m.entries[e].chunks[k].at != 0)
					continue;
				ids = sr_reallocarray(ids, n + 1, sizeof *ids);
				sr_id_hex(m.chunk_id, m.entries[e].chunks[k].id, hex);
				ids[n++] = sr_asprintf("%s.zst ", hex);
			}
		}
		qsort(ids, n, sizeof *ids, tu_name_cmp);
		want = sr_calloc(1, n * 70 + 1);
		for (i = 0; i < n; i++) {
			if (i == 0 || strcmp(ids[i], ids[i - 1]) != 0)
				strcat(want, ids[i]);
		}
		for (i = 0; i < n; i++)
			free(ids[i]);
		free(ids);
		wlen = strlen(want);
	}
	ok(wlen > 0, "there are chunk members");
	is_str(listing, want, "tar -tf lists one <id>.zst member per distinct chunk or shared member");
	free(listing);
	free(want);

	/* zstd -d of a member: the chunk itself, or its byte planes */
	for (e = 0; e < m.nentries; e++) {
		const struct sr_mentry *en = &m.entries[e];
		const struct sr_mchunk *c;
		uint8_t *orig, *expect;
		char *path, *got = NULL;
		size_t glen = 0;
		int fd;

		if (en->nchunks == 0 || (strcmp(en->path, "text.txt") != 0 &&
		    strcmp(en->path, "floats.bf16") != 0))
			continue;
		c = &en->chunks[0];
		sr_id_hex(m.chunk_id, c->id, hex);
		cmd = sr_asprintf("bsdtar -xOf '%s' '%s.zst' | zstd -dqc > '%s'", packfile, hex, tmp);
		ok(system(cmd) == 0, "bsdtar -xO | zstd -d of the first chunk of %s", en->path);
		free(cmd);
		path = tu_path(src, en->path);
		orig = sr_malloc(c->rlen);
		expect = sr_malloc(c->rlen);
		fd = open(path, O_RDONLY);
		ok(fd >= 0 && read(fd, orig, c->rlen) == (ssize_t)c->rlen, "read %s", en->path);
		if (fd >= 0)
			close(fd);
		if (c->xf == SR_XF_NONE)
			memcpy(expect, orig, c->rlen);
		else
			sr_byteplane_split(orig, c->rlen, (unsigned)c->xf, expect);
		sr_read_file(tmp, 64 * MiB, &got, &glen, err);
		ok(got != NULL && glen == c->rlen && memcmp(got, expect, glen) == 0,
		    "zstd -d yields %s of %s (transform %s)", c->xf == SR_XF_NONE ? "the chunk" :
		    "the byte planes", en->path, sr_transform_name(c->xf));
		if (strcmp(en->path, "text.txt") == 0)
			checked_none = c->xf == SR_XF_NONE;
		else
			checked_plane = c->xf == SR_XF_PLANE2;
		free(got);
		free(orig);
		free(expect);
		free(path);
	}
	ok(checked_none, "text is stored untransformed");
	ok(checked_plane, "bf16 weights are stored as 2 byte planes");
	free(packfile);
	free(tmp);
	free(src);
	sr_codec_free(codec);
	sr_manifest_free(&m);
}

/* ---- content addressing ---- */

/* A store written with SHA-256 ids (manifest version 1, what spotrun
 * wrote before XXH3-128 ids; the save keeps that path behind
 * opts.sha256_ids) restores byte-exact; the next save writes version 2
 * and still finds every chunk stored, by the XXH3-128 the old manifest
 * records; both checkpoints restore. */
/*
 * Where the store writes large pieces straight from memory (file:// with
 * direct I/O), a pack places each member of >= 1 MiB so that its data
 * starts at a multiple of the store's alignment, filling the gap with a
 * pax extended header; tar and bsdtar list and extract the members alone.
 * Issue 22: data 512 bytes past a 4 KiB boundary ran 10x slower.
 */
static void
test_pack_placement(void)
{
	static const size_t lens[] = { 100, 3 * MiB, MiB + 7, 2 * MiB, 5000, 4 * MiB + 512 };
	uint64_t off[SR_ARRAY_LEN(lens)];
	char err[SR_ERRMAX], name[32], line[4096], *path, *cmd;
	struct sr_upload *probe;
	struct sr_pack *p;
	size_t i, align, min = 0, total = 0, extracted = 0;
	int placed = 0;

	probe = sr_store_upload_begin(st, "pp/probe", err);
	align = probe != NULL ? sr_upload_align(probe, &min) : 0;
	sr_upload_abort(probe);
	p = sr_pack_begin(st, "pp/packs/p.tar", 1700000000, err);
	ok(p != NULL, "begin a pack %s", p == NULL ? err : "");
	if (p == NULL)
		return;
	for (i = 0; i < SR_ARRAY_LEN(lens); i++) {
		uint8_t *buf;

		if (posix_memalign((void **)&buf, 4096, lens[i]) != 0)
			sr_fatal("out of memory");
		memset(buf, 'a' + (int)i, lens[i]);
		snprintf(name, sizeof name, "m%zu.zst", i);
		if (sr_pack_add(p, name, buf, lens[i], &off[i], err) == -1)
			ok(0, "add %s: %s", name, err);
		total += lens[i];
		free(buf);
		if (align != 0 && lens[i] >= min)
			placed += off[i] % align == 0;
		else
			placed++;
	}
	is_int(sr_pack_commit(p, err), 0, "commit the pack %s", err);
	is_int(placed, (int)SR_ARRAY_LEN(lens), "every member of >= %zu bytes starts at a "
	    "multiple of %zu (0: the store places nothing)", min, align);
	if (align != 0)
		ok(off[1] % align == 0 && off[0] == 512, "... a small first member is not moved, "
		    "the next large one is (%llu, %llu)", (unsigned long long)off[0],
		    (unsigned long long)off[1]);
	else
		ok(1, "... # SKIP this file system takes no direct I/O");
	path = store_file("pp/packs/p.tar");
	tu_sh_out(line, sizeof line, "tar -tf '%s' | tr '\\n' ' '", path);
	is_str(line, "m0.zst m1.zst m2.zst m3.zst m4.zst m5.zst ",
	    "tar -tf lists the members alone, no placement header");
	for (i = 0; i < SR_ARRAY_LEN(lens); i++) {
		cmd = sr_asprintf("bsdtar -xOf '%s' m%zu.zst | tr -d '%c' | wc -c", path, i,
		    'a' + (int)i);
		tu_sh_out(line, sizeof line, "%s", cmd);
		extracted += strtoull(line, NULL, 10) == 0;
		free(cmd);
		cmd = sr_asprintf("bsdtar -xOf '%s' m%zu.zst | wc -c", path, i);
		tu_sh_out(line, sizeof line, "%s", cmd);
		extracted += strtoull(line, NULL, 10) == lens[i];
		free(cmd);
	}
	is_int((int)extracted, 2 * (int)SR_ARRAY_LEN(lens),
	    "bsdtar extracts each member whole, its bytes alone");
	{
		struct stat sb;

		if (stat(path, &sb) == -1)
			sb.st_size = -1;
		ok(sb.st_size > 0 && (uint64_t)sb.st_size <= total +
		    (SR_ARRAY_LEN(lens) + 2) * 512 + SR_ARRAY_LEN(lens) * (align ? align : 512),
		    "the placement costs at most one alignment per member (%lld bytes for %zu)",
		    (long long)sb.st_size, total);
	}
	free(path);
}

static void
test_old_ids(void)
{
	char *src = newdir("old-src"), *dst = tu_path(top, "old-dst"), *text;
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s1, s2, r;
	struct sr_manifest m;
	char err[SR_ERRMAX] = "";
	size_t e, k, total = 0, good = 0;
	uint8_t *buf = sr_malloc(4 * MiB), id[32];

	make_tree(src);
	opts_init(&o, "old");
	o.sha256_ids = 1;
	is_int(sr_ckpt_save(st, &o, src, 1, &s1, err), 0, "old ids: a save with SHA-256 ids %s", err);
	drop_skipped(src);		/* what a save skips or a restore changes */
	tu_chmod(src, "exec", 0755);
	text = store_text("old/manifests/0000000000.json");
	ok(strstr(text, "\"version\": 1,") != NULL && strstr(text, "chunk_id") == NULL &&
	    strstr(text, "\"xxh3\": ") != NULL,
	    "old ids: the manifest is version 1: no chunk_id, an xxh3 per chunk");
	free(text);
	if (load("old", 0, &m) == 0) {
		is_int(m.chunk_id, SR_ID_SHA256, "old ids: read back as SHA-256 ids");
		/* each id is the SHA-256 of the chunk's bytes in the source */
		for (e = 0; e < m.nentries; e++) {
			char *path = tu_path(src, m.entries[e].path);
			int fd = open(path, O_RDONLY);
			uint64_t off = 0;

			for (k = 0; fd >= 0 && k < m.entries[e].nchunks; k++) {
				const struct sr_mchunk *c = &m.entries[e].chunks[k];

				total++;
				if (pread(fd, buf, c->rlen, (off_t)off) == (ssize_t)c->rlen &&
				    EVP_Digest(buf, c->rlen, id, NULL, EVP_sha256(), NULL) == 1 &&
				    memcmp(id, c->id, 32) == 0)
					good++;
				off += c->rlen;
			}
			if (fd >= 0)
				close(fd);
			free(path);
		}
		ok(total > 0 && good == total, "old ids: every id is the SHA-256 of its chunk (%zu of %zu)",
		    good, total);
	}
	sr_manifest_free(&m);
	is_int(restore("old", dst, &r, err), 0, "old ids: the old checkpoint restores %s", err);
	ok(same_tree(src, dst), "old ids: byte-exact, modes and mtimes");
	is_int(save("old", src, 2, &s2), 0, "old ids: the next save, with XXH3-128 ids");
	is_int(s2.reused_chunks, s2.chunks, "old ids: ... reuses every chunk of the old checkpoint");
	is_int(s2.new_bytes, 0, "old ids: ... and uploads none");
	if (load("old", 1, &m) == 0) {
		const struct sr_mchunk *c = NULL;

		for (e = 0; e < m.nentries && c == NULL; e++)
			c = m.entries[e].nchunks > 0 ? &m.entries[e].chunks[0] : NULL;
		is_int(m.version, 2, "old ids: the new manifest is version 2");
		ok(c != NULL && c->has_check && memcmp(c->id, c->check, 16) == 0 &&
		    memcmp(c->id + 16, (uint8_t[16]){ 0 }, 16) == 0,
		    "old ids: its ids are the chunks' XXH3-128");
	}
	sr_manifest_free(&m);
	is_int(restore("old", dst, &r, err), 0, "old ids: the new checkpoint restores %s", err);
	is_int(r.seq, 1, "old ids: ... it is checkpoint 1");
	ok(same_tree(src, dst), "old ids: byte-exact");
	free(buf);
	free(src);
	free(dst);
}

static void
test_dedupe(void)
{
	char *src = newdir("dd-src"), *dst = tu_path(top, "dd-dst"), name[32];
	struct sr_ckpt_stats s1, s2, r;
	char err[SR_ERRMAX];
	int i;

	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof name, "part-%02d", i);
		tu_write_noise(src, name, MiB, 100 + (uint64_t)i);
	}
	is_int(save("dd", src, 1, &s1), 0, "dedupe: first save");
	ok(s1.new_bytes >= 20 * MiB, "first save uploads everything (%" PRIu64 ")", s1.new_bytes);
	tu_write_noise(src, "part-07", MiB, 999);	/* 5% changed */
	is_int(save("dd", src, 2, &s2), 0, "dedupe: second save");
	is_int(s2.chunks, 20, "20 chunks referenced");
	is_int(s2.reused_chunks, 19, "19 chunks reused from the previous checkpoint");
	ok(s2.new_bytes <= s2.raw_bytes / 10, "second save uploads %" PRIu64 " bytes <= 10%% of %"
	    PRIu64, s2.new_bytes, s2.raw_bytes);
	ok(s2.stored_bytes >= 20 * MiB, "stored bytes count every referenced chunk");
	is_int(restore("dd", dst, &r, err), 0, "restore the incremental checkpoint %s", err);
	ok(same_tree(src, dst), "and it equals the source");
	free(src);
	free(dst);

	/* identical chunks within one save are stored once */
	src = newdir("same-src");
	tu_write_noise(src, "a", 2 * MiB, 5);
	tu_write_noise(src, "b", 2 * MiB, 5);
	is_int(save("same", src, 1, &s1), 0, "save two identical files");
	is_int(s1.reused_chunks, 2, "the second file's chunks are references");
	ok(s1.new_bytes < 2 * MiB + 4096, "one copy uploaded (%" PRIu64 ")", s1.new_bytes);
	free(src);
}

static int
int_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* A save's packs are committed without a flush and flushed together
 * before its manifest is written: in a child whose fsync fails, the first
 * flush the save asks for is the first pack's, once all three are there,
 * and nothing names them. */
static void
test_packs_flushed_together(const char *src)
{
	char err[SR_ERRMAX] = "", line[SR_ERRMAX] = "", *d, *t;
	int status, fds[2];
	size_t n;
	char **v;
	pid_t pid;
	FILE *f;

	if (pipe(fds) == -1)
		sr_fatal("pipe failed");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct sr_ckpt_opts o;
		struct sr_ckpt_stats s;
		int rc;

		if (nf_fsync_fails(EIO) == -1) {
			dprintf(fds[1], "no seccomp filter: %s\n", strerror(errno));
			_exit(1);
		}
		opts_init(&o, "pf");
		o.pack_size = 2 * MiB;
		rc = sr_ckpt_save(st, &o, src, 1, &s, err);
		dprintf(fds[1], "%d %s\n", rc, err);
		_exit(0);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (fgets(line, sizeof line, f) != NULL)
		line[strcspn(line, "\n")] = '\0';
	fclose(f);
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a save in a child whose fsync fails");
	ok(strncmp(line, "-1 save pf: flush pf/packs/", 27) == 0 &&
	    strstr(line, ": Input/output error") != NULL && strchr(line, ';') == NULL,
	    "fails at the packs' flush: %s", line);
	d = sr_asprintf("%s/pf/packs", storedir);
	v = tu_names(d, &n);
	is_int(n, 3, "by then its 3 packs were committed (unflushed)");
	tu_names_free(v, n);
	free(d);
	d = sr_asprintf("%s/pf/manifests", storedir);
	v = tu_names(d, &n);
	is_int(n, 0, "and no manifest names them");
	tu_names_free(v, n);
	free(d);
	t = sr_asprintf("%s/pf/LATEST", storedir);
	ok(access(t, F_OK) == -1 && errno == ENOENT, "nor does LATEST");
	free(t);
}

/* A save starts a new pack once one passes pack_size. */
static void
test_pack_rotation(void)
{
	char *src = newdir("pr-src"), *dst = tu_path(top, "pr-dst"), *d;
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s, r;
	struct sr_manifest m;
	char err[SR_ERRMAX] = "";
	size_t n, i;
	char **v;
	int listed, members[3] = { 0, 0, 0 };

	tu_write_noise(src, "f", 5 * MiB, 77);
	opts_init(&o, "pr");
	o.pack_size = 2 * MiB;
	is_int(sr_ckpt_save(st, &o, src, 1, &s, err), 0, "save with 2 MiB packs %s", err);
	d = sr_asprintf("%s/pr/packs", storedir);
	v = tu_names(d, &n);
	is_int(n, 3, "5 chunks of 1 MiB go to 3 packs (2 + 2 + 1)");
	for (i = 0; i < n; i++) {
		char line[64];
		tu_sh_out(line, sizeof line, "tar -tf '%s/%s' | wc -l", d, v[i]);
		members[i < 3 ? i : 2] = atoi(line);
	}
	qsort(members, 3, sizeof *members, int_cmp);
	listed = members[0] == 1 && members[1] == 2 && members[2] == 2;
	ok(listed, "tar lists 2, 2 and 1 members (%d %d %d)", members[0], members[1], members[2]);
	if (load("pr", 0, &m) == 0) {
		is_int(m.npacks, 3, "the manifest references the 3 packs");
		sr_manifest_free(&m);
	}
	is_int(restore("pr", dst, &r, err), 0, "restore from 3 packs %s", err);
	ok(same_tree(src, dst), "byte-exact");
	tu_names_free(v, n);
	free(d);
	test_packs_flushed_together(src);
	free(src);
	free(dst);
}

/* ---- deadline, cancel ---- */

static void
test_deadline(void)
{
	char *src = tu_path(top, "dd-src"), *before, *after;
	struct sr_ckpt_opts o;
	struct sr_ckpt_stats s;
	struct sr_catalog c1, c2;
	char err[SR_ERRMAX] = "";
	volatile int cancel = 1;
	int rc;

	before = store_text("dd/LATEST");
	sr_catalog_read(st, "dd", &c1, err);
	opts_init(&o, "dd");
	o.deadline = sr_now() - 1;
	rc = sr_ckpt_save(st, &o, src, 3, &s, err);
	is_int(rc, SR_CKPT_LATE, "a deadline in the past: SR_CKPT_LATE");
	is_str(err, "checkpoint of dd missed its deadline after 0 B of 20.0 MiB; nothing committed",
	    "its message");
	opts_init(&o, "dd");
	o.cancel = &cancel;
	rc = sr_ckpt_save(st, &o, src, 3, &s, err);
	is_int(rc, SR_CKPT_CANCELLED, "cancelled: SR_CKPT_CANCELLED");
	is_str(err, "checkpoint of dd cancelled; nothing committed", "its message");
	after = store_text("dd/LATEST");
	is_str(after, before, "LATEST unchanged");
	sr_catalog_read(st, "dd", &c2, err);
	is_int(c2.n, c1.n, "no manifest written");
	sr_catalog_free(&c1);
	sr_catalog_free(&c2);
	free(before);
	free(after);
	free(src);
}

/* ---- fallback past a corrupt or missing chunk ---- */

/* Two checkpoints of job: 0 from src0, 1 from src1 (f changed). Returns
 * the chunk of f in checkpoint 1 (the only new one), in *m. */
static const struct sr_mchunk *
two_checkpoints(const char *job, char **src0, char **src1, struct sr_manifest *m)
{
	char *a = sr_asprintf("%s-src0", job), *b = sr_asprintf("%s-src1", job);
	struct sr_ckpt_stats s;
	long i;

	*src0 = newdir(a);
	*src1 = newdir(b);
	tu_write_noise(*src0, "f", MiB, 1);
	tu_write(*src0, "g", "unchanged\n", 10);
	tu_write_noise(*src1, "f", MiB, 2);
	tu_write(*src1, "g", "unchanged\n", 10);
	tu_mtime(*src1, "g", 1600000000, 0);
	tu_mtime(*src0, "g", 1600000000, 0);
	save(job, *src0, 0, &s);
	save(job, *src1, 1, &s);
	free(a);
	free(b);
	if (load(job, 1, m) != 0 || (i = sr_manifest_find(m, "f")) < 0)
		return NULL;
	return &m->entries[i].chunks[0];
}

static void
test_corrupt(void)
{
	struct sr_manifest m;
	const struct sr_mchunk *c;
	struct sr_codec *codec = sr_codec_new(1, NULL);
	struct sr_ckpt_stats r;
	char *src0, *src1, *dst = tu_path(top, "co-dst"), *pf, *want, hex[65], got[33], rec[33];
	char err[SR_ERRMAX] = "";
	uint8_t *cbuf, *rbuf, check[16], byte = 0;
	XXH128_canonical_t canon;
	int fd;

	c = two_checkpoints("co", &src0, &src1, &m);
	ok(c != NULL, "corrupt: two checkpoints");
	if (c == NULL)
		return;
	/* flip one byte in the middle of the chunk's frames, in the pack file */
	pf = store_file(c->pack);
	fd = open(pf, O_RDWR);
	ok(fd >= 0 && pread(fd, &byte, 1, (off_t)(c->offset + c->clen / 2)) == 1, "read the byte");
	byte ^= 0x40;
	ok(pwrite(fd, &byte, 1, (off_t)(c->offset + c->clen / 2)) == 1, "flip it");
	close(fd);
	/* what the corrupt data hashes to, for the exact message */
	cbuf = sr_malloc(c->clen);
	rbuf = sr_malloc(c->rlen);
	sr_store_read_range(st, c->pack, c->offset, c->clen, cbuf, err);
	ok(sr_codec_decode(codec, cbuf, c->clen, c->xf, rbuf, c->rlen, err) == 0,
	    "noise is stored raw: the flipped frame still decodes");
	ok(c->has_check, "the save recorded the chunk's XXH3-128");
	/* xxhsum's canonical form, computed here with the one-shot call */
	XXH128_canonicalFromHash(&canon, XXH3_128bits(rbuf, c->rlen));
	memcpy(check, canon.digest, sizeof check);
	sr_id_hex(m.chunk_id, c->id, hex);
	sr_hex_of(check, sizeof check, got);
	sr_hex_of(c->check, sizeof c->check, rec);
	want = sr_asprintf("checkpoint 1: chunk %s of \"f\": checksum mismatch (XXH3-128 %s, the"
	    " manifest says %s); falling back to checkpoint 0", hex, got, rec);
	tu_log_clear(&lg);
	is_int(restore("co", dst, &r, err), 0, "restore succeeds %s", err);
	is_int(r.seq, 0, "from checkpoint 0");
	ok(tu_log_has(&lg, want), "the fallback is logged with the chunk, file and reason");
	ok(same_tree(src0, dst), "the restored tree is checkpoint 0's");
	free(want);
	free(cbuf);
	free(rbuf);
	free(pf);
	free(dst);
	free(src0);
	free(src1);
	sr_manifest_free(&m);
	sr_codec_free(codec);
}

static void
test_missing_pack(void)
{
	struct sr_manifest m;
	const struct sr_mchunk *c;
	struct sr_ckpt_stats r, s;
	char *src0, *src1, *dst = tu_path(top, "mi-dst"), *pf, *want, *want2, hex[65];
	char err[SR_ERRMAX] = "";

	c = two_checkpoints("mi", &src0, &src1, &m);
	ok(c != NULL, "missing: two checkpoints");
	if (c == NULL)
		return;
	pf = store_file(c->pack);
	ok(unlink(pf) == 0, "delete checkpoint 1's pack");
	sr_id_hex(m.chunk_id, c->id, hex);
	want = sr_asprintf("checkpoint 1: chunk %s of \"f\": pack %s is missing; falling back to"
	    " checkpoint 0", hex, c->pack);
	tu_log_clear(&lg);
	is_int(restore("mi", dst, &r, err), 0, "restore succeeds %s", err);
	is_int(r.seq, 0, "from checkpoint 0");
	ok(tu_log_has(&lg, want), "the fallback names the missing pack");
	ok(same_tree(src0, dst), "the restored tree is checkpoint 0's");
	/* the next save does not reference chunks of the lost pack */
	want2 = sr_asprintf("warning: pack %s of checkpoint 1 is missing: its chunks are stored again",
	    c->pack);
	tu_log_clear(&lg);
	is_int(save("mi", src1, 2, &s), 0, "save after the loss");
	ok(tu_log_has(&lg, want2), "the save says it stores those chunks again");
	is_int(s.reused_chunks, 1, "only g is reused");
	is_int(restore("mi", dst, &r, err), 0, "restore the new checkpoint %s", err);
	is_int(r.seq, 2, "checkpoint 2");
	ok(same_tree(src1, dst), "with f's new contents");
	free(want);
	free(want2);
	free(pf);
	free(dst);
	free(src0);
	free(src1);
	sr_manifest_free(&m);
}

/* ---- no checkpoint; LATEST garbage; listing ---- */

static char *list_log_text(const char *job);

struct listing {
	char text[512];
};

static int
list_cb(const struct sr_ckpt_stats *ck, int is_latest, void *arg)
{
	struct listing *l = arg;
	size_t n = strlen(l->text);

	snprintf(l->text + n, sizeof l->text - n, "%s%" PRIu64 ":%lld%s%s", n ? " " : "",
	    ck->seq, ck->step, is_latest ? "*" : "", ck->problem ? "!" : "");
	return 0;
}

static char *
list_text(const char *job)
{
	struct listing l;
	char err[SR_ERRMAX];

	l.text[0] = '\0';
	if (sr_ckpt_list(st, job, list_cb, &l, err) != 0)
		return sr_strdup(err);
	return sr_strdup(l.text);
}

static void
test_list(void)
{
	char *src = newdir("ls-src"), *dst = tu_path(top, "ls-dst"), *t, *m2;
	struct sr_ckpt_stats s;
	char err[SR_ERRMAX] = "";
	int rc;

	rc = restore("nothing", dst, &s, err);
	is_int(rc, SR_CKPT_NONE, "restore of a job without checkpoints: SR_CKPT_NONE");
	is_str(err, "restore nothing: no checkpoint", "its message");
	ok(access(dst, F_OK) == -1, "and the directory is not created");
	t = list_text("nothing");
	is_str(t, "", "no checkpoints listed");
	free(t);

	tu_write(src, "f", "one", 3);
	save("ls", src, 10, &s);
	tu_write(src, "f", "two", 3);
	save("ls", src, 20, &s);
	tu_write(src, "f", "three", 5);
	save("ls", src, 30, &s);
	t = list_text("ls");
	is_str(t, "0:10 1:20 2:30*", "listed oldest first, the latest marked");
	free(t);
	/* a manifest above LATEST is a commit in flight: not listed */
	m2 = store_text("ls/manifests/0000000002.json");
	{
		char *m3 = sr_strdup(m2), *p = strstr(m3, "\"seq\": 2");
		p[7] = '3';
		sr_store_put(st, "ls/manifests/0000000003.json", m3, strlen(m3), SR_PUT_CREATE, NULL,
		    NULL, err);
		free(m3);
	}
	t = list_text("ls");
	is_str(t, "0:10 1:20 2:30*", "a manifest above LATEST is not listed");
	free(t);
	sr_store_put(st, "ls/manifests/0000000001.json", "{", 1, SR_PUT_OVERWRITE, NULL, NULL, err);
	t = list_text("ls");
	is_str(t, "1:-1! 2:30*", "an unreadable manifest is listed with its problem, and the "
	    "chain ends there: it cannot name its parent");
	free(t);
	t = list_log_text("ls");
	is_str(t, "1:-1! 2:30* | warning: checkpoint 1 of ls cannot say which checkpoint came "
	    "before it: the chain of committed checkpoints ends there, and the 1 older manifest "
	    "listed is not restored (to restore one, write its number into ls/LATEST)",
	    "... and sr_ckpt_list_log says what is below it");
	free(t);
	sr_store_put(st, "ls/LATEST", "garbage", 7, SR_PUT_OVERWRITE, NULL, NULL, err);
	t = list_text("ls");
	is_str(t, "0:10 1:-1! 2:30 3:30*", "with LATEST garbage every manifest counts");
	free(t);
	tu_log_clear(&lg);
	is_int(restore("ls", dst, &s, err), 0, "restore with LATEST garbage %s", err);
	is_int(s.seq, 3, "uses the newest manifest");
	ok(tu_log_has(&lg, "warning: ls/LATEST is not a checkpoint number (it holds \"garbage\"): "
	    "every manifest counts as committed and the newest is the latest; the next save "
	    "rewrites LATEST"), "and says so");
	free(m2);
	free(src);
	free(dst);
}

/* ---- LATEST as doc/format.md says: garbage falls back, with a warning ---- */

/* The listing of job, and what sr_ckpt_list_log said, as "LISTING | LOG". */
static char *
list_log_text(const char *job)
{
	struct sr_ckpt_opts o;
	struct listing l;
	char err[SR_ERRMAX], *out;

	opts_init(&o, job);
	tu_log_clear(&lg);
	l.text[0] = '\0';
	if (sr_ckpt_list_log(st, &o, job, list_cb, &l, err) != 0)
		return sr_strdup(err);
	out = sr_asprintf("%s | %s", l.text, lg.n == 1 ? lg.lines[0] : lg.n == 0 ? "" : "(lines)");
	return out;
}

/* Put text as lt/LATEST, then check that a listing, a restore and a save
 * each say want (the whole line; "" for nothing), that the restore takes
 * checkpoint rseq, and that the save commits rseq + 1 and leaves LATEST a
 * proper pointer to it. Checkpoints 0 and 1 exist, 2 is in flight. */
static void
latest_case(const char *label, const char *text, size_t len, const char *listing,
    uint64_t rseq, const char *want)
{
	char *src = tu_path(top, "lt-src"), *dst = tu_path(top, "lt-dst"), *t, *w;
	char err[SR_ERRMAX] = "", ptr[32];
	struct sr_ckpt_stats s;
	int rc;

	sr_store_put(st, "lt/LATEST", text, len, SR_PUT_OVERWRITE, NULL, NULL, err);
	t = list_log_text("lt");
	w = sr_asprintf("%s | %s", listing, want);
	is_str(t, w, "%s: sr_ckpt_list_log lists and warns", label);
	free(w);
	free(t);
	tu_log_clear(&lg);
	rc = restore("lt", dst, &s, err);
	ok(rc == 0 && s.seq == rseq, "%s: restore takes checkpoint %" PRIu64 " (rc %d, seq %"
	    PRIu64 ") %s", label, rseq, rc, s.seq, err);
	ok(*want == '\0' ? lg.n == 0 : tu_log_has(&lg, want), "%s: restore %s", label,
	    *want ? "warns" : "says nothing");
	tu_log_clear(&lg);
	ok(save("lt", src, 99, &s) == 0 && s.seq == 3, "%s: a save commits checkpoint 3", label);
	ok(*want == '\0' ? lg.n == 0 : tu_log_has(&lg, want), "%s: the save %s", label,
	    *want ? "warns" : "says nothing");
	t = store_text("lt/LATEST");
	snprintf(ptr, sizeof ptr, "3\n");
	is_str(t, ptr, "%s: the save rewrote LATEST by compare-and-swap", label);
	free(t);
	/* back to 0, 1 and 2 in flight */
	sr_store_delete(st, "lt/manifests/0000000003.json", err);
	free(src);
	free(dst);
}

static void
test_latest(void)
{
	char *src = newdir("lt-src"), *big, *m1, *m2, *p;
	struct sr_ckpt_stats s;
	char err[SR_ERRMAX] = "";
	static const char tail[] = ": every manifest counts as committed and the newest is the "
	    "latest; the next save rewrites LATEST";
	char want[512];

	tu_write(src, "f", "zero", 4);
	save("lt", src, 0, &s);
	tu_write(src, "f", "one", 3);
	save("lt", src, 10, &s);
	m1 = store_text("lt/manifests/0000000001.json");
	m2 = sr_strdup(m1);
	p = strstr(m2, "\"seq\": 1");
	p[7] = '2';
	sr_store_put(st, "lt/manifests/0000000002.json", m2, strlen(m2), SR_PUT_CREATE, NULL,
	    NULL, err);

	latest_case("a proper pointer", "1\n", 2, "0:0 1:10*", 1, "");
	latest_case("no newline", "1", 1, "0:0 1:10*", 1,
	    "warning: lt/LATEST holds 1 without the newline that ends it: read as 1; the next "
	    "save rewrites LATEST");
	big = sr_malloc(5000);
	memset(big, '1', 5000);
	big[4095] = '\n';
	{
		/* garbage: what LATEST holds, and how the warning shows it */
		static const struct {
			const char *label, *text;
			size_t len;
			const char *holds;
		} bad[] = {
			{ "5000 bytes of digits", NULL, 5000,
			  "5000 bytes, more than the 4096 a pointer may have" },
			{ "4097 bytes", NULL, 4097, "4097 bytes, more than the 4096 a pointer may have" },
			{ "11 digits", "12345678901\n", 12, "\"12345678901\\n\"" },
			{ "a newline alone", "\n", 1, "\"\\n\"" },
			{ "empty", "", 0, "\"\"" },
			{ "two newlines", "1\n\n", 3, "\"1\\n\\n\"" },
			{ "a leading space", " 1\n", 3, "\" 1\\n\"" },
			{ "a NUL", "1\0\n", 3, "3 bytes, a NUL among them" },
		};
		size_t i;

		for (i = 0; i < SR_ARRAY_LEN(bad); i++) {
			snprintf(want, sizeof want, "warning: lt/LATEST is not a checkpoint number (it "
			    "holds %s)%s", bad[i].holds, tail);
			latest_case(bad[i].label, bad[i].text != NULL ? bad[i].text : big, bad[i].len,
			    "0:0 1:10 2:10*", 2, want);
		}
	}
	free(big);
	free(m1);
	free(m2);
	tu_rmtree(src);
	free(src);
}

/* ---- gc and retention ---- */

static int
count_packs(const char *job)
{
	char *d = sr_asprintf("%s/%s/packs", storedir, job);
	size_t n;
	char **v = tu_names(d, &n);
	int c = 0;

	for (size_t i = 0; i < n; i++)
		c += strstr(v[i], ".tar") != NULL && strstr(v[i], "-dead") == NULL;
	tu_names_free(v, n);
	free(d);
	return c;
}

/* Whether every pack the kept manifests reference exists, and no other. */
static int
packs_exactly_referenced(const char *job)
{
	struct sr_catalog c;
	struct sr_manifest m;
	char err[SR_ERRMAX], *d = sr_asprintf("%s/%s/packs", storedir, job);
	char **names;
	size_t n, i, e, k;
	int okay = 1;

	names = tu_names(d, &n);
	sr_catalog_read(st, job, &c, err);
	for (i = 0; i < n; i++) {
		char *key = sr_asprintf("%s/packs/%s", job, names[i]);
		int used = 0;
		for (size_t j = 0; j < c.n && !used; j++) {
			if (load(job, c.seqs[j], &m) != 0)
				continue;
			for (e = 0; e < m.nentries && !used; e++)
				for (k = 0; k < m.entries[e].nchunks && !used; k++)
					used = strcmp(m.entries[e].chunks[k].pack, key) == 0;
			sr_manifest_free(&m);
		}
		if (!used && sr_jobkey_is_pack(job, key)) {
			printf("# unreferenced pack %s\n", key);
			okay = 0;
		}
		free(key);
	}
	for (size_t j = 0; j < c.n; j++) {
		if (load(job, c.seqs[j], &m) != 0)
			continue;
		for (e = 0; e < m.nentries; e++)
			for (k = 0; k < m.entries[e].nchunks; k++) {
				char *f = store_file(m.entries[e].chunks[k].pack);
				if (access(f, F_OK) != 0) {
					printf("# missing pack %s\n", f);
					okay = 0;
				}
				free(f);
			}
		sr_manifest_free(&m);
	}
	sr_catalog_free(&c);
	tu_names_free(names, n);
	free(d);
	return okay;
}

static uint64_t
du(const char *dir)
{
	size_t n, i;
	char **v = tu_names(dir, &n);
	uint64_t sum = 0;

	for (i = 0; i < n; i++) {
		char *p = tu_path(dir, v[i]);
		struct stat sb;
		if (lstat(p, &sb) == 0)
			sum += S_ISDIR(sb.st_mode) ? du(p) : (uint64_t)sb.st_size;
		free(p);
	}
	tu_names_free(v, n);
	return sum;
}

static void
test_gc(void)
{
	char *src = newdir("gc-src"), *dst = tu_path(top, "gc-dst"), *t, *jobdir;
	struct sr_ckpt_stats s, r;
	struct sr_ckpt_opts o;
	char err[SR_ERRMAX] = "";
	uint64_t freed = 0, before, after;
	int i;

	tu_write_noise(src, "shared", 2 * MiB, 50);
	for (i = 0; i < 5; i++) {
		tu_write_noise(src, "changing", MiB, 60 + (uint64_t)i);
		save("gc", src, i, &s);
	}
	is_int(count_packs("gc"), 5, "5 checkpoints, 5 packs");
	sr_store_put(st, "gc/packs/0000000099-dead.tar", "orphan", 6, SR_PUT_OVERWRITE, NULL, NULL, err);
	sr_store_put(st, "gc/packs/notes.txt", "not a pack", 10, SR_PUT_OVERWRITE, NULL, NULL, err);
	jobdir = tu_path(storedir, "gc");
	/* within gc's grace period (10 min) an unreferenced pack may be a
	 * commit's in flight elsewhere: it stays */
	is_int(sr_ckpt_gc(st, "gc", 0, &freed, err), 0, "gc keep all %s", err);
	t = store_text("gc/packs/0000000099-dead.tar");
	is_str(t, "orphan", "an orphan pack younger than the grace period stays");
	free(t);
	before = du(jobdir);
	is_int(gc_grace("gc", 2, -1, &freed, err), 0, "gc keep 2, no grace %s", err);
	after = du(jobdir);
	is_int(freed, before - after, "deleted bytes reported exactly (%" PRIu64 ")", freed);
	t = list_text("gc");
	is_str(t, "3:3 4:4*", "the newest 2 checkpoints are kept");
	free(t);
	is_int(count_packs("gc"), 3, "packs left: the shared one of checkpoint 0, and 3's and 4's");
	ok(packs_exactly_referenced("gc"), "every kept reference resolves; no unreferenced pack");
	t = store_text("gc/packs/notes.txt");
	is_str(t, "not a pack", "an object that is not a pack is left alone");
	free(t);
	t = store_text("gc/packs/0000000099-dead.tar");
	is_str(t, "", "an orphan pack older than the grace period is deleted");
	free(t);
	is_int(restore("gc", dst, &r, err), 0, "restore after gc %s", err);
	ok(same_tree(src, dst), "checkpoint 4 intact");

	/* retention on save */
	tu_write_noise(src, "changing", MiB, 70);
	opts_init(&o, "gc");
	o.keep = 1;
	tu_log_clear(&lg);
	is_int(sr_ckpt_save(st, &o, src, 5, &s, err), 0, "save with keep = 1 %s", err);
	t = list_text("gc");
	is_str(t, "5:5*", "retention leaves one checkpoint");
	free(t);
	is_int(count_packs("gc"), 2, "and two packs: the shared one and the new one");
	ok(packs_exactly_referenced("gc"), "no unreferenced pack after retention");
	ok(lg.n == 1 && strncmp(lg.lines[0], "retention: kept 1 checkpoints, deleted ", 39) == 0,
	    "retention is logged");
	is_int(restore("gc", dst, &r, err), 0, "restore after retention %s", err);
	ok(same_tree(src, dst), "checkpoint 5 intact");
	free(jobdir);
	free(src);
	free(dst);
}

/* ---- crash at each fault point ---- */

static void
test_faults(void)
{
	const char *points[] = { "ckpt-pack", "ckpt-upload", "ckpt-manifest", "ckpt-pointer" };
	char *src = newdir("fa-src"), *dst = tu_path(top, "fa-dst"), *f, *got, *t;
	struct sr_ckpt_stats s, r;
	char err[SR_ERRMAX] = "", text[64];
	uint64_t committed = 0;
	size_t i, glen;

	tu_write(src, "f", "version 0", 9);
	tu_write_noise(src, "noise", MiB, 1);
	save("fa", src, 0, &s);
	for (i = 0; i < SR_ARRAY_LEN(points); i++) {
		pid_t pid;
		int status = 0;
		snprintf(text, sizeof text, "version %zu", i + 1);
		tu_write(src, "f", text, strlen(text));
		tu_write_noise(src, "noise", MiB, 10 + i);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			setenv("SPOTRUN_FAULT", points[i], 1);
			save("fa", src, (long long)i + 1, &s);
			_exit(0);
		}
		waitpid(pid, &status, 0);
		ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "save killed at %s", points[i]);
		is_int(restore("fa", dst, &r, err), 0, "restore after the crash at %s %s", points[i], err);
		is_int(r.seq, committed, "the last committed checkpoint is restored");
		f = tu_path(dst, "f");
		got = NULL;
		sr_read_file(f, 100, &got, &glen, err);
		is_str(got, "version 0", "with its contents");
		free(got);
		free(f);
	}
	/* the manifest left by the crash at ckpt-pointer is skipped over */
	tu_write(src, "f", "version 9", 9);
	is_int(save("fa", src, 9, &s), 0, "a save after the crashes %s", err);
	is_int(s.seq, 2, "takes the seq after the orphan manifest");
	t = list_text("fa");
	is_str(t, "0:0 2:9*", "the orphan manifest is never committed: 2's parent is 0");
	free(t);
	is_int(restore("fa", dst, &r, err), 0, "restore %s", err);
	ok(same_tree(src, dst), "the new checkpoint");
	is_int(gc_grace("fa", 1, -1, NULL, err), 0, "gc keep 1, no grace %s", err);
	t = store_text("fa/manifests/0000000001.json");
	is_str(t, "", "gc removes the orphan manifest");
	free(t);
	ok(packs_exactly_referenced("fa"), "gc removes what the crashed saves uploaded");
	is_int(count_packs("fa"), 1, "one pack left");
	(void)committed;
	free(src);
	free(dst);
}

/* ---- 16 writers of one job at once ---- */

#define NWRITERS 16

static void
test_race(void)
{
	char *srcs[NWRITERS], *dst = tu_path(top, "race-dst"), name[32], text[64];
	pid_t pids[NWRITERS];
	struct sr_catalog c;
	char err[SR_ERRMAX] = "";
	int i, bad = 0, seen[NWRITERS] = { 0 }, verified = 0;

	for (i = 0; i < NWRITERS; i++) {
		snprintf(name, sizeof name, "race-src%d", i);
		srcs[i] = newdir(name);
		snprintf(text, sizeof text, "writer %d", i);
		tu_write(srcs[i], "f", text, strlen(text));
		tu_write_noise(srcs[i], "noise", 64 * 1024, (uint64_t)i);
	}
	fflush(stdout);
	for (i = 0; i < NWRITERS; i++) {
		if ((pids[i] = fork()) == 0) {
			struct sr_ckpt_opts o;
			struct sr_ckpt_stats s;
			char e[SR_ERRMAX];
			int tries;
			opts_init(&o, "race");
			o.threads = 1;
			o.log = NULL;
			/* a lost race is an error the caller retries */
			for (tries = 0; tries < 100; tries++) {
				if (sr_ckpt_save(st, &o, srcs[i], i, &s, e) == 0)
					_exit(0);
				if (strstr(e, "was committed by another writer") == NULL &&
				    strstr(e, "of another writer; nothing committed") == NULL) {
					printf("# writer %d: %s\n", i, e);
					_exit(1);
				}
			}
			_exit(2);
		}
	}
	for (i = 0; i < NWRITERS; i++) {
		int status;
		waitpid(pids[i], &status, 0);
		bad += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	is_int(bad, 0, "16 concurrent writers all commit, retrying lost races");
	sr_catalog_read(st, "race", &c, err);
	is_int(c.n, NWRITERS, "one manifest per commit: a lost race takes its manifest back");
	ok(c.latest.state == SR_LATEST_OK && c.n > 0 && c.latest.seq == c.seqs[c.n - 1],
	    "LATEST points at the newest committed manifest");
	/* every commit is on LATEST's chain and restores its writer's tree:
	 * restore the newest, then move LATEST to its parent, delete it and
	 * restore again */
	for (i = 0; i < (int)c.n; i++) {
		struct sr_ckpt_stats r;
		struct sr_manifest m;
		char *key, ptr[32];
		if (restore("race", dst, &r, err) != 0 || r.step < 0 || r.step >= NWRITERS) {
			printf("# restore: %s\n", err);
			break;
		}
		if (seen[r.step]++ == 0 && same_tree(srcs[r.step], dst))
			verified++;
		if (load("race", r.seq, &m) == 0 && m.link == SR_LINK_PARENT) {
			snprintf(ptr, sizeof ptr, "%" PRIu64 "\n", m.parent);
			sr_store_put(st, "race/LATEST", ptr, strlen(ptr), SR_PUT_OVERWRITE, NULL,
			    NULL, err);
		}
		sr_manifest_free(&m);
		key = sr_jobkey_manifest("race", r.seq, NULL);
		sr_store_delete(st, key, err);
		free(key);
	}
	is_int(verified, NWRITERS, "the chain holds all 16 commits, each restoring its writer's "
	    "files");
	is_int(restore("race", dst, NULL, err), -1, "with every manifest gone, restore fails");
	is_str(err, "restore race: checkpoint 0: manifest race/manifests/0000000000.json is missing",
	    "and says why: the chain ended at checkpoint 0, the first");
	sr_catalog_free(&c);
	for (i = 0; i < NWRITERS; i++)
		free(srcs[i]);
	free(dst);
}

/* ---- memory: a save streams ---- */

/* A sanitizer's shadow memory counts as RSS: gcc says so by macros, clang
 * by __has_feature. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RSS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RSS_SANITIZED 1
#endif
#endif

static void
test_rss(void)
{
	char *src = newdir("rss-src");
	struct rusage ru;
	int status = 0, i;
	pid_t pid;

#ifdef RSS_SANITIZED
	ok(1, "save of 256 MiB # SKIP under a sanitizer");
	ok(1, "peak RSS # SKIP a sanitizer's shadow memory counts as RSS");
	free(src);
	return;
#endif
	for (i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof name, "w%d", i);
		tu_write_noise(src, name, 64 * MiB, 1000 + (uint64_t)i);
	}
	fflush(stdout);
	if ((pid = fork()) == 0) {
		struct sr_ckpt_opts o;
		struct sr_ckpt_stats s;
		char e[SR_ERRMAX];
		opts_init(&o, "rss");
		o.chunk_size = 16 * MiB;
		o.threads = 0;
		o.log = NULL;
		_exit(sr_ckpt_save(st, &o, src, 0, &s, e) == 0 ? 0 : 1);
	}
	memset(&ru, 0, sizeof ru);
	wait4(pid, &status, 0, &ru);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "save of 256 MiB in 16 MiB chunks");
	/* SAVE_MEM (160 MiB) bounds the pipeline's buffers, not the process:
	 * its libraries, the store's buffers and malloc's per-thread arenas come
	 * on top (152-163 MiB measured at load 12). A save that held the
	 * 256 MiB state, or one more chunk per slot, passes 192. */
	ok(ru.ru_maxrss < 192 * 1024, "peak RSS %ld MiB < 192 MiB", ru.ru_maxrss / 1024);
	tu_rmtree(src);
	free(src);
}

int
main(void)
{
	char err[SR_ERRMAX], *url;

	top = tu_tmpdir("t-ckpt");
	storedir = tu_path(top, "store");
	url = sr_asprintf("file://%s", storedir);
	if (mkdir(storedir, 0755) == -1 || sr_store_open(url, &st, err) != 0) {
		printf("Bail out! open store %s: %s\n", url, err);
		return 1;
	}
	test_roundtrip();
	test_modes();
	test_staging_sweep();
	test_progress();
	test_workers_chunks();
	test_pack_format();
	test_pack_placement();
	test_dedupe();
	test_old_ids();
	test_pack_rotation();
	test_deadline();
	test_corrupt();
	test_missing_pack();
	test_list();
	test_latest();
	test_gc();
	test_faults();
	test_race();
	test_rss();
	sr_store_close(st);
	if (getenv("TU_KEEP") == NULL)
		tu_rmtree(top);
	else
		printf("# kept %s\n", top);
	tu_log_clear(&lg);
	free(lg.lines);
	free(url);
	free(storedir);
	free(top);
	return tap_done();
}
